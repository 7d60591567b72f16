"""`gitmem runtime add | replace | remove | resolve | show`, and the import of hand edits.

Every change is one write transaction (one commit under the store lock). Under the lock, the
scope's runtime files are checked first: a memories.json gitmem cannot read, or a hand-edited
line that breaks the rules, refuses the write before anything is committed (the pending hand
edits of other files too), so a refused write leaves every file, the index and the history as
they were. Then pending hand edits are committed as usual (unless another scope's uncommitted
runtime file is in such a state: it is never committed, so they wait, with a note), the
projections' hand edits are brought into the records, the change is computed and checked in
memory, and only then are files written.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.format.records import conflict_origins
from gitmem.runtime.archive import Moved, move_out
from gitmem.runtime.budget import plan_overflow, size_of
from gitmem.runtime.edits import find_one
from gitmem.runtime.model import (
    IMPORTANCE,
    PROJECTIONS,
    TARGETS,
    Item,
    RuntimeFile,
    check_branches,
    check_choice,
    check_content,
    new_id,
    normalize_content,
)
from gitmem.runtime.settle import Origins, settle
from gitmem.runtime.tier import (
    limits_of,
    read_records,
    records_path,
    scopes_with_runtime,
)
from gitmem.runtime.writes import commit_scope, load_scope, now_stamp, runtime_writing
from gitmem.secrets.scan import refuse_secrets

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


@dataclass
class RuntimeResult:
    """What one runtime change did."""

    action: str  # added | duplicate | replaced | removed | archived | resolved | unchanged
    scope: str
    target: str
    item: Item | None = None
    changed: bool = False
    note: str = ""
    moved: list[Moved] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)
    size: int = 0
    limit: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "action": self.action, "scope": self.scope, "target": self.target,
            "id": self.item.id if self.item else None,
            "content": self.item.content if self.item else None,
            "changed": self.changed, "note": self.note,
            "moved": [m.as_json() for m in self.moved], "imported": self.imported,
            "bytes": self.size, "limit": self.limit,
        }

    def text(self) -> str:
        lines = [f"imported hand edit: {line}" for line in self.imported]
        what = PROJECTIONS[self.target]
        ident = self.item.id if self.item else ""
        if self.action == "duplicate":
            lines.append(f"already in {what} as {ident}; nothing changed")
        elif self.action == "resolved":
            lines.append(f"resolved {ident}: {self.note} ({self.scope} {what}: {self.size}/{self.limit} bytes)")
        elif self.action == "unchanged":
            lines.append(f"{ident}: {self.note or 'already so'}; nothing changed")
        else:
            lines.append(f"{self.action} {ident} ({self.scope} {what}: {self.size}/{self.limit} bytes)")
        if self.moved:
            lines.append(f"{what} was full: {len(self.moved)} item(s) moved out to make room:")
            lines += [f"  {m.describe()}" for m in self.moved]
        return "\n".join(lines)


# -- helpers ----------------------------------------------------------------------------------
def _scope_key(store: Store, target: str, scope: str, workspace: str | None) -> str:
    check_choice(target, TARGETS, "target")
    if target == "user":
        if scope != "global" or workspace:
            raise InvalidInputError("the user profile (target user) lives in the global scope only")
        return L.GLOBAL
    return store.scope_for(scope, workspace)


# -- verbs ------------------------------------------------------------------------------------
def add(store: Store, text: str, *, target: str = "memory", importance: str = "normal",
        branches: list[str] | tuple[str, ...] = (), scope: str = "global",
        workspace: str | None = None, allow_secret: bool = False) -> RuntimeResult:
    """Add an item; overflow moves other items out first (see archive.py), never fails the add
    unless critical items alone leave no room. A likely secret is refused unless `allow_secret`."""
    limits = limits_of(store)
    content = check_content(text, limits.item)
    refuse_secrets(content, "runtime memory text", allow=allow_secret)
    check_choice(importance, IMPORTANCE, "importance")
    cleaned = check_branches(list(branches), target)
    key = _scope_key(store, target, scope, workspace)
    with runtime_writing(store, "runtime add", limits, lambda: [key], allow_secret=allow_secret) as txn:
        records, imported = load_scope(store, key, limits)
        limit = limits.of(target)
        same = [i for i in records.of(target) if normalize_content(i.content) == content]
        if same:
            if imported:
                commit_scope(store, txn, key, records, "runtime: import hand edits", imported)
            return RuntimeResult("duplicate", key, target, same[0], bool(imported),
                                 "identical item already recorded", imported=imported,
                                 size=size_of(records.of(target)), limit=limit)
        now = now_stamp(store)
        item = Item(new_id(records.ids()), content, target, importance, now, now, cleaned)
        name = f"{key} {PROJECTIONS[target]}"
        leaving = plan_overflow(records.of(target), item, limit, name)
        moved = move_out(store, txn, key, leaving, now)
        gone = {old.id for old in leaving}
        records = RuntimeFile([i for i in records.items if i.id not in gone] + [item], records.extra)
        summary = "".join(f"\n- moved {m.describe()}" for m in moved)
        commit_scope(store, txn, key, records, f"runtime add: {item.id} ({target}, {key}){summary}", imported)
        return RuntimeResult("added", key, target, item, True, moved=moved, imported=imported,
                             size=size_of(records.of(target)), limit=limit)


def replace_item(store: Store, old: str, new: str, *, target: str = "memory",
                 scope: str = "global", workspace: str | None = None,
                 allow_secret: bool = False, make_room: bool = False,
                 seen: str | None = None) -> RuntimeResult:
    """Replace the whole item OLD designates (still holding `seen`, when given). A replace that would overflow is refused, naming
    the items an add would move out; `make_room` moves them into the layers (archive.py), as an
    add does, in the same commit."""
    limits = limits_of(store)
    content = check_content(new, limits.item)
    refuse_secrets(content, "runtime memory text", allow=allow_secret)
    key = _scope_key(store, target, scope, workspace)
    with runtime_writing(store, "runtime replace", limits, lambda: [key],
                         allow_secret=allow_secret) as txn:
        records, imported = load_scope(store, key, limits)
        found = find_one(records.of(target), old, target, seen)
        limit = limits.of(target)
        if found.content == content and found.conflict is None:
            return RuntimeResult("unchanged", key, target, found, note="already so",
                                 size=size_of(records.of(target)), limit=limit)
        twins = [i for i in records.of(target)
                 if i.id != found.id and normalize_content(i.content) == content]
        if twins:
            raise InvalidInputError(f"refused: {twins[0].id} already holds that text; remove one "
                                    "of the two instead; nothing changed")
        updated = replace(found, content=content, updated_at=now_stamp(store),
                          extra={k: v for k, v in found.extra.items() if k != "conflict"})
        items = [updated if i.id == found.id else i for i in records.items]
        before, after = size_of(records.of(target)), size_of([i for i in items if i.target == target])
        moved: list[Moved] = []
        if after > limit and after > before:
            others = [i for i in records.of(target) if i.id != found.id]
            leaving = plan_overflow(others, updated, limit, f"{key} {PROJECTIONS[target]}")
            if not make_room:
                where = "the layers" if target == "memory" else "USER.archive.md"
                raise InvalidInputError(
                    f"refused: {key} {PROJECTIONS[target]} would be {after} bytes, over its budget of "
                    f"{limit}; make room with --make-room (moves {', '.join(i.id for i in leaving)} into "
                    f"{where}, as an add would), or remove or shorten items first; nothing changed")
            moved = move_out(store, txn, key, leaving, updated.updated_at)
            items = [i for i in items if i not in leaving]
            after = size_of([i for i in items if i.target == target])
        records = RuntimeFile(items, records.extra)
        summary = "".join(f"\n- moved {m.describe()}" for m in moved)
        commit_scope(store, txn, key, records, f"runtime replace: {found.id} ({target}, {key}){summary}", imported)
        return RuntimeResult("replaced", key, target, updated, True, moved=moved, imported=imported,
                             size=after, limit=limit)


def remove_item(store: Store, old: str, *, target: str = "memory", scope: str = "global",
                workspace: str | None = None, seen: str | None = None) -> RuntimeResult:
    """Remove the whole item OLD designates (still holding `seen`, when given)."""
    limits = limits_of(store)
    key = _scope_key(store, target, scope, workspace)
    with runtime_writing(store, "runtime remove", limits, lambda: [key]) as txn:
        records, imported = load_scope(store, key, limits)
        found = find_one(records.of(target), old, target, seen)
        records = RuntimeFile([i for i in records.items if i.id != found.id], records.extra)
        commit_scope(store, txn, key, records, f"runtime remove: {found.id} ({target}, {key})", imported)
        return RuntimeResult("removed", key, target, found, True, imported=imported,
                             size=size_of(records.of(target)), limit=limits.of(target))


def archive_item(store: Store, old: str, *, target: str = "memory", scope: str = "global",
                 workspace: str | None = None, seen: str | None = None) -> RuntimeResult:
    """Move the item OLD designates out of the hot file now, where an overflow would move it
    (archive.py: a memory item into its scope's layers, a user item to USER.archive.md)."""
    limits = limits_of(store)
    key = _scope_key(store, target, scope, workspace)
    with runtime_writing(store, "runtime archive", limits, lambda: [key]) as txn:
        records, imported = load_scope(store, key, limits)
        found = find_one(records.of(target), old, target, seen)
        moved = move_out(store, txn, key, [found], now_stamp(store))
        records = RuntimeFile([i for i in records.items if i.id != found.id], records.extra)
        commit_scope(store, txn, key, records, f"runtime archive: {found.id} ({target}, {key})\n"
                f"- moved {moved[0].describe()}", imported)
        return RuntimeResult("archived", key, target, found, True, moved=moved, imported=imported,
                             size=size_of(records.of(target)), limit=limits.of(target))


def resolve_item(store: Store, item_id: str, keep: str, *, here: str | None = None) -> RuntimeResult:
    """Settle a record two machines changed differently: keep `ours`, the version machine `here`
    (default: this one) wrote, or `theirs`, the other machine's (settle.py tells which is which)."""
    from gitmem.store.review import this_machine

    check_choice(keep, ("ours", "theirs"), "version")
    here = this_machine() if here is None else here
    limits = limits_of(store)
    with runtime_writing(store, "runtime resolve", limits, lambda: _scopes_holding(store, item_id)) as txn:
        for key in scopes_with_runtime(store):
            records, imported = load_scope(store, key, limits)
            found = next((i for i in records.items if i.id == item_id), None)
            if found is None:
                continue
            if found.conflict is None:
                raise InvalidInputError(f"{item_id} has no conflict to resolve")
            origins = conflict_origins(found.conflict)
            if None in origins:
                origins = _origins_from_git(store, key, origins)
            done = settle(found, keep, here, origins)
            settled = done.item
            items = [settled if i.id == item_id else i for i in records.items]
            records = RuntimeFile(items, records.extra)
            commit_scope(store, txn, key, records, f"runtime resolve: {item_id} (kept {done.kept})", imported)
            return RuntimeResult("resolved", key, settled.target, settled, True, note=f"kept {done.kept}",
                                 imported=imported, size=size_of(records.of(settled.target)),
                                 limit=limits.of(settled.target))
    raise NotFoundError(f"no runtime memory item {item_id}")


def _origins_from_git(store: Store, key: str, origins: Origins) -> Origins:
    """A conflict written without origins: the parents of the merge that last changed the
    records, when git still tells (first parent: the record's fields)."""
    last = store.git.log(limit=1, path=records_path(key))
    if not last or len(last[0].parents) < 2:
        return origins
    named = []
    for parent in last[0].parents[:2]:
        machine = store.git.commit_info(parent).machine
        named.append(f"{machine} {parent[:12]}" if machine else None)
    return origins[0] or named[0], origins[1] or named[1]


def _scopes_holding(store: Store, item_id: str) -> list[str]:
    """The scope whose records hold `item_id`; the error of an unreadable memories.json when no
    readable one does (the item may be in it)."""
    unreadable: InvalidInputError | None = None
    for key in scopes_with_runtime(store):
        try:
            records = read_records(store, key)
        except InvalidInputError as exc:
            unreadable = unreadable or exc
            continue
        if item_id in records.ids():
            return [key]
    if unreadable is not None:
        raise unreadable
    return []


def import_all(store: Store, txn: WriteTxn) -> list[str]:
    """Inside a write: import hand edits of every scope's projections (sync calls this before it
    exchanges commits, so no merge renders a projection over an edit)."""
    from gitmem.runtime.tier import import_hand_edits

    limits = limits_of(store)
    done = []
    for key in scopes_with_runtime(store):
        try:  # one scope's memories.json that does not parse stops only its own imports
            read_records(store, key)
        except InvalidInputError as exc:
            store.notes.append(f"{exc}; hand edits of its USER.md/MEMORY.md wait until it is fixed")
            continue
        done += import_hand_edits(store, txn, key, limits)
    return done
