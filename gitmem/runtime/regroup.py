"""Several runtime items replaced by others in one commit: a maintenance proposal accepted
(consolidate/maintain.py proposes, consolidate/runtimereview.py accepts). Optimistic: the items
a proposal replaces must still read as they did when it was made."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.runtime.budget import size_of
from gitmem.runtime.model import (
    IMPORTANCE,
    PROJECTIONS,
    Item,
    RuntimeFile,
    check_content,
    new_id,
    normalize_content,
)
from gitmem.runtime.tier import limits_of
from gitmem.runtime.verbs import RuntimeResult
from gitmem.runtime.writes import commit_scope, load_scope, now_stamp, runtime_writing
from gitmem.secrets.scan import refuse_secrets

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


def replace_group(store: Store, key: str, target: str, sources: list[tuple[str, str]], texts: list[str], *,
                  verb: str, message: str, provenance: dict[str, Any],
                  also: Callable[[WriteTxn, list[Item]], None] | None = None) -> tuple[RuntimeResult, list[Item]]:
    """Replace the `sources` items ((id, content) as they read when proposed) by items holding
    `texts`, in one commit with whatever `also(txn, new items)` writes; refused, nothing written, when a source
    changed or vanished since, or the result would pass the budget. The new items keep where
    they came from (`maintenance` in memories.json: `provenance` and the replaced items)."""
    limits = limits_of(store)
    contents = list(dict.fromkeys(check_content(text, limits.item) for text in texts))
    for content in contents:
        refuse_secrets(content, "runtime memory text", overridable=False)
    with runtime_writing(store, verb, limits, lambda: [key]) as txn:
        records, imported = load_scope(store, key, limits)
        replaced = _current_sources(records.of(target), sources)
        gone = {item.id for item in replaced}
        kept = [i for i in records.of(target) if i.id not in gone]
        known = {normalize_content(i.content) for i in kept}
        now = now_stamp(store)
        extra = {"maintenance": {**provenance, "replaced": [{"id": i.id, "content": i.content} for i in replaced]}}
        taken = records.ids()
        new: list[Item] = []
        for content in (c for c in contents if c not in known):
            new.append(Item(new_id(taken), content, target, _strongest(replaced),
                            min((i.created_at for i in replaced if i.created_at), default=now), now,
                            _shared_branches(replaced), extra))
            taken.add(new[-1].id)
        first = next(n for n, i in enumerate(records.items) if i.id in gone)
        items = [i for i in records.items[:first] if i.id not in gone] + new + \
            [i for i in records.items[first:] if i.id not in gone]
        before, after = size_of(records.of(target)), size_of([i for i in items if i.target == target])
        if after > limits.of(target) and after > before:
            raise InvalidInputError(f"refused: {key} {PROJECTIONS[target]} would be {after} bytes, over its "
                                    f"budget of {limits.of(target)}; nothing changed")
        if also is not None:
            also(txn, new)
        lines = "".join(f"\n- replaced {i.id}: {i.content}" for i in replaced)
        lines += "".join(f"\n- new {i.id}: {i.content}" for i in new)
        commit_scope(store, txn, key, RuntimeFile(items, records.extra), message + lines, imported)
    result = RuntimeResult("replaced", key, target, new[0] if new else None, True,
                           note=f"{len(replaced)} item(s) replaced by {len(new)}", imported=imported,
                           size=after, limit=limits.of(target))
    return result, new


def _current_sources(items: list[Item], sources: list[tuple[str, str]]) -> list[Item]:
    """The items `sources` names, each still holding the text it was proposed with."""
    by_id = {item.id: item for item in items}
    found = []
    for ident, content in sources:
        item = by_id.get(ident)
        if item is None or normalize_content(item.content) != normalize_content(content):
            how = "was removed" if item is None else "changed"
            raise InvalidInputError(f"refused: runtime item {ident} {how} since this was proposed; "
                                    "nothing written (reject it; the next maintenance pass proposes "
                                    "from what is there now)")
        found.append(item)
    if not found:
        raise InvalidInputError("refused: the proposal names no runtime item; nothing written")
    return found


def _strongest(items: list[Item]) -> str:
    return next((level for level in IMPORTANCE if any(i.importance == level for i in items)), "normal")


def _shared_branches(items: list[Item]) -> tuple[str, ...]:
    """Branches the merged item shows on: all of theirs when every item had some, else all."""
    if not all(i.branches for i in items):
        return ()
    return tuple(dict.fromkeys(b for i in items for b in i.branches))
