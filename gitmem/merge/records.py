"""Three-way merges of JSON files by key (memory.json, runtime records, document index; pure).

JSON: objects merge key by key and lists merge item by item: a dict item is matched on the first of
`record_keys` it carries (else on its whole value), any other item on its value. A change on one
side wins over no change; an item edited on one side and deleted on the other keeps the edit; two
different changes of one scalar keep ours. The last two are reported in `notes` by key path only
(values are not echoed: they may be URLs). Valid JSON never gets markers, so it stays loadable.
Output keeps ours' indentation, ASCII escaping, line ending and final newline.

Record files (runtime memories, document indexes) are stricter, since each record is a fact:
- a record changed on both sides merges field by field; a field both sides changed differently
  makes the record a conflict: it keeps ours' fields and gains `"conflict": {"theirs": <their
  record>, "fields": [...], "ours_from": "<machine> <commit>", "theirs_from": ...}` (the two
  origins when the merge's labels name them), reported in `conflicts` (so `gitmem conflicts`
  lists it and sync exits 3) until someone settles it. Timestamps of the last change (`updated_at`, `updatedAt`,
  `lastAccessedAt`) are not a clash: the later one is kept.
- two different records both sides added under one `<prefix>-NNNN` id (two machines numbered a
  new document alike) are both kept: ours, not yet published, takes the next free number.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from gitmem.format.markdown import detect_newline
from gitmem.format.records import OURS_FROM, THEIRS_FROM, conflict_origins
from gitmem.merge.common import PLAIN, Labels, MergeConflict, MergeResult, fast_path, interleave
from gitmem.merge.lines import merge_lines


class _Missing:
    """Marks a key or item absent on one side (distinct from JSON null)."""


MISSING: Any = _Missing()
REGISTRY_KEYS: tuple[str, ...] = ("key", "id", "name")
LATEST_WINS: frozenset[str] = frozenset({"updated_at", "updatedAt", "lastAccessedAt"})
_NUMBERED_ID = re.compile(r"^(?P<prefix>.+-)(?P<num>\d{4,})$")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (so 1 and true differ), with MISSING equal only to itself."""
    if a is MISSING or b is MISSING:
        return a is b
    return _canonical(a) == _canonical(b)


class _JsonMerge:
    """One JSON merge: the record keys to match list items on, and the notes it collects."""

    def __init__(self, record_keys: tuple[str, ...], *, records: bool = False,
                 labels: Labels = PLAIN) -> None:
        self.record_keys = record_keys
        self.records = records  # record files: clashing edits are conflicts (see above)
        self.labels = labels  # where each side came from, kept with a conflicting record
        self.notes: list[str] = []
        self.clashes: list[tuple[Any, Any]] = []  # (ours, theirs) of each conflicting record
        self.renumbered: dict[str, str] = {}

    def value(self, where: str, base: Any, ours: Any, theirs: Any) -> Any:
        """Merge one value present on both sides."""
        if _same(ours, theirs) or _same(theirs, base):
            return ours
        if _same(ours, base):
            return theirs
        if isinstance(ours, dict) and isinstance(theirs, dict):
            return self.mapping(where, base if isinstance(base, dict) else {}, ours, theirs)
        if isinstance(ours, list) and isinstance(theirs, list):
            return self.sequence(where, base if isinstance(base, list) else [], ours, theirs)
        self.notes.append(f"{where or '(top)'}: changed differently on both sides; kept ours")
        return ours

    def member(self, where: str, base: Any, ours: Any, theirs: Any) -> Any:
        """Merge a key or item that may be missing on a side; MISSING means "leave it out"."""
        if ours is not MISSING and theirs is not MISSING:
            if self.records and isinstance(ours, dict) and isinstance(theirs, dict) and "[" in where:
                return self.record(base if isinstance(base, dict) else {}, ours, theirs)
            return self.value(where, base, ours, theirs)
        present, side = (ours, "ours") if ours is not MISSING else (theirs, "theirs")
        if base is MISSING or present is MISSING:
            return present
        if _same(present, base):
            return MISSING  # deleted on the other side, untouched here
        other = "theirs" if side == "ours" else "ours"
        self.notes.append(f"{where}: edited on {side}, deleted on {other}; kept the edit")
        return present

    def mapping(
        self, where: str, base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]
    ) -> dict[str, Any]:
        """Key by key, in ours' key order with theirs' new keys after their predecessors."""
        merged: dict[str, Any] = {}
        for key in interleave(list(ours), list(theirs)):
            value = self.member(
                f"{where}.{key}" if where else key,
                base.get(key, MISSING),
                ours.get(key, MISSING),
                theirs.get(key, MISSING),
            )
            if value is not MISSING:
                merged[key] = value
        return merged

    def sequence(
        self, where: str, base: list[Any], ours: list[Any], theirs: list[Any]
    ) -> list[Any]:
        """Item by item, matched by record key; ours' order, theirs' new items after their anchors."""
        keyed = [self.keyed(items) for items in (base, ours, theirs)]
        if self.records:
            keyed[1] = self.renumber_collisions(*keyed)
        merged: list[Any] = []
        for key in interleave(list(keyed[1]), list(keyed[2])):
            value = self.member(f"{where}[{key}]", *(side.get(key, MISSING) for side in keyed))
            if value is not MISSING:
                merged.append(value)
        return merged

    def record(self, base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
        """One record changed on both sides: field by field; a clash makes it a conflict."""
        if _same(ours, theirs) or _same(theirs, base):
            return ours
        if _same(ours, base):
            return theirs
        merged: dict[str, Any] = {}
        clashing: list[str] = []
        fields = _JsonMerge(self.record_keys)
        for key in interleave(list(ours), list(theirs)):
            old, mine, other = (side.get(key, MISSING) for side in (base, ours, theirs))
            if key in LATEST_WINS and isinstance(mine, str) and isinstance(other, str):
                merged[key] = max(mine, other)
            elif key != "conflict" and not (_same(mine, other) or _same(mine, old) or _same(other, old)):
                clashing.append(key)
                if mine is not MISSING:
                    merged[key] = mine
            else:
                value = fields.member(key, old, mine, other)
                if value is not MISSING:
                    merged[key] = value
        if clashing:
            plain = {k: v for k, v in theirs.items() if k != "conflict"}
            merged["conflict"] = {"theirs": plain, "fields": clashing, **self.origins()}
            self.clashes.append((merged, plain))
        return merged

    def origins(self) -> dict[str, str]:
        """The labels of a merge that names its sides (`<machine> <commit>`); none for plain ones."""
        if self.labels == PLAIN:
            return {}
        return {OURS_FROM: self.labels.ours, THEIRS_FROM: self.labels.theirs}

    def renumber_collisions(self, base: dict[str, Any], ours: dict[str, Any],
                            theirs: dict[str, Any]) -> dict[str, Any]:
        """Ours' records re-keyed where both sides added a different record under one numbered id."""
        out: dict[str, Any] = {}
        taken = {str(item.get("id")) for side in (base, ours, theirs) for item in side.values()
                 if isinstance(item, dict)}
        for key, item in ours.items():
            other = theirs.get(key)
            ident = item.get("id") if isinstance(item, dict) else None
            match = _NUMBERED_ID.match(ident) if isinstance(ident, str) else None
            if key in base or other is None or _same(item, other) or match is None:
                out[key] = item
                continue
            number = int(match["num"])
            while (new := f"{match['prefix']}{number:0{len(match['num'])}d}") in taken:
                number += 1
            taken.add(new)
            self.renumbered[ident] = new  # type: ignore[index]
            item = {**item, "id": new}
            out[self.item_key(item)] = item
        return out

    def keyed(self, items: list[Any]) -> dict[str, Any]:
        """Items by match key; repeats numbered so every item keeps a key of its own."""
        seen: Counter[str] = Counter()
        out: dict[str, Any] = {}
        for item in items:
            key = self.item_key(item)
            seen[key] += 1
            out[key if seen[key] == 1 else f"{key}#{seen[key]}"] = item
        return out

    def item_key(self, item: Any) -> str:
        if isinstance(item, dict):
            for name in self.record_keys:
                if name in item:
                    return f"{name}={_canonical(item[name])}"
        return _canonical(item)


def _dump_like(value: Any, model: str) -> str:
    """Serialize in the style of `model`: its indent, escaping, line ending, final newline."""
    indent_match = re.search(r"\n([ \t]+)\S", model)
    indent: str | None = indent_match.group(1) if indent_match else None
    ascii_only = "\\u" in model and model.isascii()
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    if model.rstrip(" \t").endswith("\n"):
        text += "\n"
    return text.replace("\n", "\r\n") if detect_newline(model) == "\r\n" else text


def _merge(
    path: str, base: str | None, ours: str, theirs: str, record_keys: tuple[str, ...],
    *, records: bool = False, labels: Labels = PLAIN,
) -> MergeResult:
    """Load, merge as values, dump like ours; unreadable JSON falls back to a line merge."""
    fast = fast_path(base, ours, theirs)
    if fast is not None:
        return MergeResult(fast)
    try:
        base_v = MISSING if base is None else json.loads(base)
        ours_v, theirs_v = json.loads(ours), json.loads(theirs)
    except json.JSONDecodeError as exc:
        result = merge_lines(path, base, ours, theirs)
        result.notes.insert(0, f"{path}: not valid JSON ({exc.msg}); merged line by line")
        return result
    merger = _JsonMerge(record_keys, records=records, labels=labels)
    merged = merger.value("", base_v, ours_v, theirs_v)
    notes = [f"{path}: {note}" for note in merger.notes]
    notes += [f"{path}: renumbered {old} -> {new} (both machines added one)"
              for old, new in merger.renumbered.items()]
    conflicts = [MergeConflict(path, _label(mine, "id"), _title(mine), "both-edited",
                               _canonical({k: v for k, v in mine.items() if k != "conflict"}),
                               _canonical(other))
                 for mine, other in merger.clashes]
    return MergeResult(_dump_like(merged, ours), conflicts=conflicts, notes=notes,
                       renumbered=dict(merger.renumbered))


def _label(record: dict[str, Any], name: str) -> str | None:
    value = record.get(name)
    return value if isinstance(value, str) else None


def _title(record: dict[str, Any]) -> str:
    """A short human label of a record: its title or its text."""
    text = " ".join(str(record.get("title") or record.get("content") or "").split())
    return text if len(text) <= 60 else text[:60] + "…"


def record_conflicts(text: str) -> list[tuple[str | None, str]]:
    """(id, title) of every record a merge left in conflict in a record file's text."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    lists = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else [data]
    return [(_label(item, "id"), _title(item)) for items in lists if isinstance(items, list)
            for item in items if isinstance(item, dict) and isinstance(item.get("conflict"), dict)]


def conflict_labels(text: str) -> dict[str, tuple[str | None, str | None]]:
    """id -> (origin of the record's fields, origin of "theirs") of every record in conflict."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    lists = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else [data]
    return {item["id"]: conflict_origins(item["conflict"]) for items in lists
            if isinstance(items, list) for item in items
            if isinstance(item, dict) and isinstance(item.get("conflict"), dict)
            and isinstance(item.get("id"), str)}


def merge_registry(
    base: str | None, ours: str, theirs: str, *, path: str = "memory.json"
) -> MergeResult:
    """memory.json: deep merge by key; lists of records matched on key/id/name."""
    return _merge(path, base, ours, theirs, REGISTRY_KEYS)


def merge_records(
    base: str | None, ours: str, theirs: str, *, key: str = "id", path: str = "records",
    labels: Labels = PLAIN,
) -> MergeResult:
    """Record files: lists of records matched on `key`, else on `content` (runtime memories);
    a record in conflict keeps where each version came from when `labels` name it."""
    return _merge(path, base, ours, theirs, tuple(dict.fromkeys((key, "id", "content"))), records=True,
                  labels=labels)
