"""Three-way merges of JSON files by key (memory.json, runtime records, document index; pure).

JSON: objects merge key by key and lists merge item by item: a dict item is matched on the first of
`record_keys` it carries (else on its whole value), any other item on its value. A change on one
side wins over no change; an item edited on one side and deleted on the other keeps the edit; two
different changes of one scalar keep ours. The last two are reported in `notes` by key path only
(values are not echoed: they may be URLs). Valid JSON never gets markers, so it stays loadable.
Output keeps ours' indentation, ASCII escaping, line ending and final newline.

"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from gitmem.format.markdown import detect_newline
from gitmem.merge.common import MergeResult, fast_path, interleave
from gitmem.merge.lines import merge_lines


class _Missing:
    """Marks a key or item absent on one side (distinct from JSON null)."""


MISSING: Any = _Missing()
REGISTRY_KEYS: tuple[str, ...] = ("key", "id", "name")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (so 1 and true differ), with MISSING equal only to itself."""
    if a is MISSING or b is MISSING:
        return a is b
    return _canonical(a) == _canonical(b)


class _JsonMerge:
    """One JSON merge: the record keys to match list items on, and the notes it collects."""

    def __init__(self, record_keys: tuple[str, ...]) -> None:
        self.record_keys = record_keys
        self.notes: list[str] = []

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
        merged: list[Any] = []
        for key in interleave(list(keyed[1]), list(keyed[2])):
            value = self.member(f"{where}[{key}]", *(side.get(key, MISSING) for side in keyed))
            if value is not MISSING:
                merged.append(value)
        return merged

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
    path: str, base: str | None, ours: str, theirs: str, record_keys: tuple[str, ...]
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
    merger = _JsonMerge(record_keys)
    merged = merger.value("", base_v, ours_v, theirs_v)
    notes = [f"{path}: {note}" for note in merger.notes]
    return MergeResult(_dump_like(merged, ours), notes=notes)


def merge_registry(
    base: str | None, ours: str, theirs: str, *, path: str = "memory.json"
) -> MergeResult:
    """memory.json: deep merge by key; lists of records matched on key/id/name."""
    return _merge(path, base, ours, theirs, REGISTRY_KEYS)


def merge_records(
    base: str | None, ours: str, theirs: str, *, key: str = "id", path: str = "records"
) -> MergeResult:
    """Record files: lists of records matched on `key`, else on `content` (runtime memories)."""
    return _merge(path, base, ours, theirs, tuple(dict.fromkeys((key, "id", "content"))))
