"""Record files: a JSON object holding one list of records (`runtime/memories.json` holds `items`,
`documents/index.json` holds `documents`). Both are read and written the same way: a broken file
is an error naming its line, keys this version does not know are kept, and a record a merge left
in conflict carries the other machine's version under `"conflict"` (see merge/records.py), with
the `<machine> <commit>` each version came from, so that every machine holding the record (the
one that merged, the one that fast-forwarded to the merge) tells which version is its own."""

from __future__ import annotations

import json
from typing import Any

from gitmem.errors import InvalidInputError


def safe_copy_name(name: str) -> bool:
    """A document copy's file name: one `<name>.md` inside its status folder."""
    return name.endswith(".md") and "/" not in name and "\\" not in name and \
        name not in (".md",) and not name.startswith(".") and "\0" not in name


def invalid_record(key: str, number: int, raw: Any) -> str | None:
    """Why the `number`-th record of a record file (under `key`: runtime `items`, document
    `documents`) cannot be read, or None: the one rule its loader, `check` and every commit of
    a hand edit apply."""
    if key == "items":
        if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
            return f"item {number} has no text `content`"
    elif key == "documents":
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) \
                or not isinstance(raw.get("filename"), str):
            return f"document {number} lacks an `id` or a `filename`"
        if not safe_copy_name(raw["filename"]):
            return (f"document {number} has the file name {raw['filename']!r}: one `<name>.md` "
                    "inside its status folder")
    return None


def load_record_list(text: str, path: str, key: str) -> tuple[list[Any], dict[str, Any]]:
    """(the raw records under `key`, the other top-level keys); empty text holds no records."""
    if not text.strip():
        return [], {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix it by hand "
                                "or restore it with git") from None
    if not isinstance(data, dict) or not isinstance(data.get(key, []), list):
        article = "an" if key[0] in "aeiou" else "a"
        raise InvalidInputError(f"{path}: expected an object with {article} `{key}` list")
    return list(data.get(key, [])), {k: v for k, v in data.items() if k != key}


def dump_record_list(extra: dict[str, Any], key: str, records: list[dict[str, Any]],
                     schema_version: int) -> str:
    """The file's text: its other keys, then the records; two-space indent, UTF-8 kept, final newline."""
    data = {**extra, key: records}
    data.setdefault("schemaVersion", schema_version)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


OURS_FROM = "ours_from"  # where the record's own fields came from (the merging machine's side)
THEIRS_FROM = "theirs_from"  # where the version under "theirs" came from


def conflict_origins(conflict: dict[str, Any]) -> tuple[str | None, str | None]:
    """(`<machine> <commit>` of the record's fields, of the version under "theirs"); None for a
    side a merge did not name (a conflict written by an older gitmem)."""
    ours, theirs = conflict.get(OURS_FROM), conflict.get(THEIRS_FROM)
    return (ours if isinstance(ours, str) and ours else None,
            theirs if isinstance(theirs, str) and theirs else None)


def conflict_of(extra: dict[str, Any]) -> dict[str, Any] | None:
    """The other machine's version when a merge found two different edits of this record."""
    value = extra.get("conflict")
    return value if isinstance(value, dict) else None


def record_line(text: str, number: int) -> int:
    """The line where the `number`-th record of a record list starts (best effort: the line
    before its `"id"` key), else 1."""
    seen, indent = 0, -1
    for line_number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if stripped.startswith('"id"') and indent in (-1, len(line) - len(stripped)):
            indent = len(line) - len(stripped)  # nested records (a conflict's) sit deeper
            seen += 1
            if seen == number:
                return max(1, line_number - 1)
    return 1
