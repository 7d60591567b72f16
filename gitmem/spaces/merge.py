"""`gitmem space merge FROM INTO`: import every entry of one space into another, in one commit.

Entries keep their topic files (same scope, layer and topic). An entry whose text the target
already holds in that scope+layer is not copied again. An entry keeps its id when the number is
past every number the target ever handed out (deleted entries' numbers included: Ids are never
re-used, see format/idmarks.py), else it is renumbered past them; links between imported entries
(Related, Supersedes, Superseded-by) follow the new numbers. Each copy records where it came from:
`**Source:** space:<from>/<old id>` (followed by its earlier source, if it had one). The source
store is left as it was and, when it is a mounted space, deactivated (its entries now live in
the target). Single-file layers (state, working) and runtime files are per store and not merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import new_topic_file
from gitmem.format.references import Relation, parse_item, parse_related, render_related, typed
from gitmem.spaces.lookup import open_named
from gitmem.spaces.mounts import (
    home_name,
    is_home,
    load_mounts,
    save_mounts,
)

if TYPE_CHECKING:
    from gitmem.store.store import Store


@dataclass
class MergeReport:
    source: str
    target: str
    imported: dict[str, str] = field(default_factory=dict)  # old id -> id in the target
    renumbered: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, str] = field(default_factory=dict)  # old id -> the target's entry
    files: list[str] = field(default_factory=list)
    deactivated: bool = False
    commit: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"from": self.source, "into": self.target, "imported": self.imported,
                "renumbered": self.renumbered, "duplicates": self.duplicates, "files": self.files,
                "source_deactivated": self.deactivated, "commit": self.commit}


@dataclass
class _Plan:
    """The entries to write per target file, and old id -> new id for every source entry."""

    files: dict[str, list[Entry]] = field(default_factory=dict)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)  # ids given out by this merge


def _open(home: Store, name: str) -> tuple[str, Store]:
    store = open_named(home, name, writing=True)  # merging names its spaces: inactive ones too
    return (home_name(home) if is_home(home, name) else name), store


def merge_spaces(home: Store, source: str, target: str, *, deactivate: bool = True) -> MergeReport:
    src_name, src = _open(home, source)
    dst_name, dst = _open(home, target)
    if src.root.resolve() == dst.root.resolve():
        raise InvalidInputError(f"{source} and {target} are the same store")
    report = MergeReport(src_name, dst_name)
    with src.reading():
        src.catch_up_catalog()
        sources = [(p, src.read_file(p)) for p in src.all_topic_files()]
    with dst.writing("space merge") as txn:
        plan = _plan(dst, src_name, sources, report)
        for relpath in sorted(plan.files):
            role = L.classify_path(relpath)
            if role.scope != L.GLOBAL:
                dst.register_workspace(txn, role.scope)
            document = dst.read_file(relpath) or new_topic_file(plan.meta[relpath], role.slug)
            document.entries.extend(relinked(e, plan.ids) for e in plan.files[relpath])
            dst.write_topic(txn, relpath, document)
            report.files.append(relpath)
        listing = "\n".join(f"- {old} -> {new}" for old, new in sorted(report.imported.items()))
        txn.message = (f"space merge: {len(report.imported)} entries from {src_name}"
                       + (f"\n\n{listing}\n" if listing else ""))
    report.commit = dst.git.head_oid() if report.imported else None
    if deactivate and not is_home(home, source):
        mounts = load_mounts(home.root)
        if mounts[source].active:
            mounts[source].active = False
            save_mounts(home.root, mounts)
            report.deactivated = True
    return report


def _plan(dst: Store, src_name: str, sources: list[tuple[str, Any]], report: MergeReport) -> _Plan:
    plan = _Plan()
    taken: dict[tuple[str, str], int] = {}
    seen_text: dict[tuple[str, str, str], str] = {}
    for relpath, document in sources:
        role = L.classify_path(relpath)
        if document is None or role.kind != "topic":
            continue
        for entry in document.entries:
            key = (role.scope, role.layer)
            digest = (role.scope, role.layer, entry.content_hash)
            existing = next(iter(dst.catalog.find_text(*digest)), None)
            duplicate = existing.id if existing and existing.id else seen_text.get(digest)
            if duplicate:
                report.duplicates[entry.id or entry.title] = duplicate
                if entry.id:
                    plan.ids[entry.id] = duplicate
                continue
            new_id = _new_id(dst, key, entry.id, taken, plan.used)
            plan.used.add(new_id)
            if entry.id:
                plan.ids[entry.id] = new_id
                report.imported[entry.id] = new_id
                if new_id != entry.id:
                    report.renumbered[entry.id] = new_id
            else:
                report.imported[entry.title] = new_id
            seen_text[digest] = new_id
            origin = f"space:{src_name}/{entry.id or new_id}"
            earlier = entry.get("Source")
            fields = {**entry.fields, "Id": new_id,
                      "Source": f"{origin}, {earlier}" if earlier else origin}
            plan.files.setdefault(relpath, []).append(Entry(entry.title, entry.body, fields))
            plan.meta.setdefault(relpath, {"topic": str(document.meta.get("topic") or role.slug),
                                            "layer": role.layer, "scope": role.scope})
    return plan


def _new_id(dst: Store, key: tuple[str, str], old: str | None, taken: dict[tuple[str, str], int],
            used: set[str]) -> str:
    """The old id when its number is past every number the target ever handed out (a deleted
    entry's number included: Ids are never re-used), else the next number past everything."""
    top = max(taken.get(key, 0), dst.catalog.max_number(*key))
    parsed = L.parse_id(old) if old else None
    if old and parsed and (parsed.scope, parsed.layer) == key and parsed.number > top \
            and old not in used:
        taken[key] = max(top, parsed.number)
        return old
    taken[key] = top + 1
    return L.format_id(key[0], key[1], top + 1)


def relinked(entry: Entry, ids: dict[str, str]) -> Entry:
    """Links between imported entries point at their ids in the target."""
    fields = dict(entry.fields)
    for name in ("Supersedes", "Superseded-by"):
        value = fields.get(name, "").strip()
        if value in ids:
            fields[name] = ids[value]
    if fields.get("Related"):
        fields["Related"] = render_related([_relink(i, ids) for i in parse_related(fields["Related"])])
    return Entry(entry.title, entry.body, fields, extra_fields=entry.extra_fields)


def _relink(item: Relation, ids: dict[str, str]) -> Relation:
    if item.space or item.target is None or item.target not in ids:
        return item
    return typed(item.type, ids[item.target]) if item.type else parse_item(ids[item.target])
