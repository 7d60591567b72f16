"""`gitmem export`: everything a store holds, as JSON, JSONL or Markdown (streamed).

Records (the same in JSON and JSONL; JSONL gives each a `kind` and one line):
- `header`: format `gitmem-export`, version, when, the registered workspaces;
- `topic`: one topic file (path, scope, layer, topic, front matter, preamble) with its `entries`
  (JSON nests them; JSONL gives each `entry` its own line after its topic): id, title, body,
  every field in file order, repeated field lines, status;
- `relation`: every link the entries record (Related, Supersedes), as from/type/to;
- `runtime`: every runtime-tier item with its scope; `document`: every document's record;
- `file`: the verbatim text of what is not an entry (runtime records and projections, the
  document index and copies, state/working/junk, INDEX.md, meta.json, and with a whole-store
  export the review queue), so an import restores them exactly.
Markdown is for people: each topic file as gitmem writes it, under a heading naming its path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC
from typing import IO, Any

from gitmem.documents.shelf import read_index
from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.markdown import render_entry
from gitmem.format.references import parse_related
from gitmem.format.reviewqueue import REVIEW_PATH
from gitmem.runtime.tier import read_records
from gitmem.store.store import Store

FORMAT = "gitmem-export"
VERSION = 1
FORMATS = ("json", "jsonl", "markdown")
_FILE_FOLDERS = ("runtime", "documents")
_SCOPE_FILES = ("INDEX.md", "meta.json", "state.md", "working.md", "junk.md")


def _scopes(store: Store, only: str | None) -> list[str]:
    keys = store.scope_keys()
    return keys if only is None else [k for k in keys if k == only]


def entry_record(entry: Entry) -> dict[str, Any]:
    record: dict[str, Any] = {"id": entry.id, "title": entry.title, "body": entry.body,
                              "fields": dict(entry.fields), "status": entry.status}
    if entry.extra_fields:
        record["extra_fields"] = [list(pair) for pair in entry.extra_fields]
    return record


def relations_of(entry: Entry) -> Iterator[dict[str, Any]]:
    for item in parse_related(entry.get("Related")):
        yield {"from": entry.id, "type": item.type or "untyped", "to": item.ref or item.raw}
    for name, kind in (("Supersedes", "supersedes"), ("Superseded-by", "superseded-by")):
        if entry.get(name):
            yield {"from": entry.id, "type": kind, "to": entry.get(name)}


def topics(store: Store, scopes: list[str]) -> Iterator[tuple[dict[str, Any], list[Entry]]]:
    for relpath in store.all_topic_files():
        role = L.classify_path(relpath)
        if role.scope not in scopes:
            continue
        document = store.read_file(relpath)
        if document is None:
            continue
        meta = {key: value for key, value in document.meta.items()}
        yield ({"path": relpath, "scope": role.scope, "layer": role.layer,
                "topic": str(document.meta.get("topic") or role.slug), "meta": meta,
                "preamble": document.preamble}, document.entries)


def files(store: Store, scopes: list[str]) -> Iterator[dict[str, Any]]:
    # The review queue (proposed facts of digests already consolidated) is the store's, not a
    # scope's: it goes with a whole-store export.
    top = [REVIEW_PATH] if scopes == store.scope_keys() else []
    for scope in [None, *scopes]:
        if scope is None:
            yield from _texts(store, top)
            continue
        base = L.scope_dir(scope)
        names = [f"{base}/{name}" for name in _SCOPE_FILES]
        for folder in _FILE_FOLDERS:
            root = store.path(f"{base}/{folder}")
            if root.is_dir():
                names += sorted(p.relative_to(store.root).as_posix() for p in root.rglob("*")
                                if p.is_file() and not p.is_symlink())
        yield from _texts(store, names)


def _texts(store: Store, names: list[str]) -> Iterator[dict[str, Any]]:
    for relpath in names:
        path = store.path(relpath)
        if path.is_file() and not path.is_symlink():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                raise InvalidInputError(f"cannot export {relpath}: not readable UTF-8 text "
                                        "(`gitmem check` names what is wrong with it)") from None
            yield {"path": relpath, "text": text}


def side_records(store: Store, scopes: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, record) of the runtime items and documents of the scopes."""
    for scope in scopes:
        for item in read_records(store, scope).items:
            yield "runtime", {"scope": scope, **item.as_json()}
    for scope in scopes:
        for record in read_index(store, scope).documents:
            yield "document", {"scope": scope, **record.as_json()}


def header(store: Store) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION,
            "exported_at": store.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "workspaces": {k: dict(v) for k, v in sorted(store.registry.workspaces.items())}}


def export(store: Store, out: IO[str], fmt: str = "json", scope: str | None = None) -> dict[str, int]:
    """Write the export of `scope` (None: every scope) to `out`; returns counts per kind."""
    with store.reading():
        store.catch_up_catalog()
        scopes = _scopes(store, scope)
        writer = {"json": _json, "jsonl": _jsonl, "markdown": _markdown}[fmt]
        return writer(store, out, scopes)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def _jsonl(store: Store, out: IO[str], scopes: list[str]) -> dict[str, int]:
    counts = {"topic": 0, "entry": 0, "relation": 0, "runtime": 0, "document": 0, "file": 0}
    out.write(_dump({"kind": "header", **header(store)}) + "\n")
    relations: list[dict[str, Any]] = []
    for topic, entries in topics(store, scopes):
        out.write(_dump({"kind": "topic", **topic}) + "\n")
        counts["topic"] += 1
        for entry in entries:
            out.write(_dump({"kind": "entry", "path": topic["path"], **entry_record(entry)}) + "\n")
            counts["entry"] += 1
            relations.extend(relations_of(entry))
    for relation in relations:
        out.write(_dump({"kind": "relation", **relation}) + "\n")
    counts["relation"] = len(relations)
    for kind, record in side_records(store, scopes):
        out.write(_dump({"kind": kind, **record}) + "\n")
        counts[kind] += 1
    for record in files(store, scopes):
        out.write(_dump({"kind": "file", **record}) + "\n")
        counts["file"] += 1
    return counts


def _json(store: Store, out: IO[str], scopes: list[str]) -> dict[str, int]:
    counts = {"topic": 0, "entry": 0, "relation": 0, "runtime": 0, "document": 0, "file": 0}
    head = header(store)
    out.write("{\n" + ",\n".join(f"  {_dump(k)}: {_dump(v)}" for k, v in head.items()))
    out.write(',\n  "topics": [')
    relations: list[dict[str, Any]] = []
    for n, (topic, entries) in enumerate(topics(store, scopes)):
        records = [entry_record(e) for e in entries]
        out.write(("," if n else "") + "\n    " + _dump({**topic, "entries": records}))
        counts["topic"] += 1
        counts["entry"] += len(records)
        for entry in entries:
            relations.extend(relations_of(entry))
    counts["relation"] = len(relations)
    out.write("\n  ],\n  \"relations\": [" + ",".join("\n    " + _dump(r) for r in relations) + "\n  ]")
    sides: dict[str, list[dict[str, Any]]] = {"runtime": [], "document": []}
    for kind, record in side_records(store, scopes):
        sides[kind].append(record)
        counts[kind] += 1
    for kind, key in (("runtime", "runtime"), ("document", "documents")):
        out.write(f",\n  \"{key}\": [" + ",".join("\n    " + _dump(r) for r in sides[kind]) + "\n  ]")
    out.write(',\n  "files": [')
    for n, record in enumerate(files(store, scopes)):
        out.write(("," if n else "") + "\n    " + _dump(record))
        counts["file"] += 1
    out.write("\n  ]\n}\n")
    return counts


def _markdown(store: Store, out: IO[str], scopes: list[str]) -> dict[str, int]:
    counts = {"topic": 0, "entry": 0, "runtime": 0, "document": 0}
    out.write(f"# gitmem export\n\nExported {header(store)['exported_at']}.\n")
    for topic, entries in topics(store, scopes):
        out.write(f"\n# {topic['path']}\n\n")
        counts["topic"] += 1
        for entry in entries:
            out.write(render_entry(entry.with_fields()).rstrip("\n") + "\n\n")
            counts["entry"] += 1
    sides = list(side_records(store, scopes))
    if sides:
        out.write("\n# Runtime tier and documents\n\n")
    for kind, record in sides:
        text = record.get("content") if kind == "runtime" else record.get("title")
        out.write(f"- {kind} {record['id']} ({record['scope']}): {text}\n")
        counts[kind] += 1
    return counts
