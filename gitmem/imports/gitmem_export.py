"""`gitmem import gitmem FILE`: gitmem's own export (JSON or JSONL, see export.py) read back.

This is a restore, so it keeps what the export says, Ids and every field included (Source too:
the import is named by its commit, `import: gitmem ...`):
- an entry whose Id the store already holds, created the same day (the same entry): `unchanged`
  when title, text and fields are equal, else the store's version is kept (`kept-edit`), never
  overwritten; an Id the store gave another entry (created another day) is renumbered;
- an entry whose text a live entry of that scope and layer holds under another Id: `duplicate`;
- any other entry keeps its Id unless the store handed that number out before this import, in
  which case it is renumbered past every number of the store and of the export (`renumbered`),
  and links between the imported entries follow the new number;
- a `file` record (runtime tier, documents, state, working, INDEX.md) is written when the store
  has no such file, left when it holds the same text, and kept (`kept-edit`) when it differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import new_topic_file, render_frontmatter
from gitmem.format.reviewqueue import REVIEW_PATH
from gitmem.format.safetext import clean_text, safe_text, safe_title
from gitmem.imports.export import FORMAT
from gitmem.merge.review import merge_review
from gitmem.notes.model import Action, ImportReport, malformed, read_source_text
from gitmem.secrets.scan import find_secrets, refusal
from gitmem.spaces.merge import relinked
from gitmem.store.store import Store, WriteTxn

WAY_OUT = "pass --allow-secret to import it anyway"


def _records(path: Path, shown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record with its kind) of a JSON or JSONL export."""
    text = read_source_text(path, shown)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        first = text.lstrip().split("\n", 1)[0]
        if exc.msg != "Extra data" and not _is_json(first):
            raise malformed(shown, exc.lineno, f"not JSON ({exc.msg})") from None
    else:
        if isinstance(whole, dict) and "kind" not in whole:
            yield from _json_records(whole, shown)
            return
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise malformed(shown, number, f"not JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            raise malformed(shown, number, "a JSONL export line is an object with a kind")
        yield number, record


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _json_records(data: dict[str, Any], shown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    yield 1, {"kind": "header", **{k: v for k, v in data.items()
                                  if k not in ("topics", "relations", "runtime", "documents", "files")}}
    for topic in _listed(data, "topics", shown):
        yield 1, {"kind": "topic", **{k: v for k, v in topic.items() if k != "entries"}}
        for entry in _listed(topic, "entries", shown):
            yield 1, {"kind": "entry", "path": topic.get("path"), **entry}
    for record in _listed(data, "files", shown):
        yield 1, {"kind": "file", **record}


def _listed(data: dict[str, Any], key: str, shown: str) -> list[dict[str, Any]]:
    """The objects listed under `key` (none when absent), else a one-line error."""
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise malformed(shown, 1, f"{key!r} is not a list of objects")
    return value


def _check_header(line: int, record: dict[str, Any], shown: str) -> None:
    if record.get("format") != FORMAT:
        raise malformed(shown, line, f"not a gitmem export (format {record.get('format')!r})")
    if record.get("version") != 1:
        raise malformed(shown, line, f"export version {record.get('version')!r} is not known (1 is)")


def _entry(line: int, record: dict[str, Any], shown: str) -> tuple[str, Entry]:
    relpath, fields = record.get("path"), record.get("fields")
    if not isinstance(relpath, str) or L.classify_path(relpath).kind != "topic":
        raise malformed(shown, line, f"entry path {relpath!r} is not a topic file of a store")
    if not isinstance(fields, dict) or not isinstance(record.get("title"), str) \
            or not isinstance(record.get("body"), str):
        raise malformed(shown, line, "an entry needs a title, a body and fields")
    extra = tuple((str(a), str(b)) for a, b in record.get("extra_fields") or [])
    bad = next((str(k) for k, _v in (*fields.items(), *extra) if not _FIELD_NAME.fullmatch(str(k))), None)
    if bad is not None:
        raise malformed(shown, line, f"field name {bad!r} is not a field name (letters, digits, '-')")
    return relpath, Entry(safe_title(record["title"]), _safe_body(record["body"]),
                          {str(k): str(v) for k, v in fields.items()}, extra_fields=extra)


_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def _safe_body(body: str) -> str:
    """An entry's body as exported, unless a line of it would read as an entry heading, a field
    or a conflict marker (an export edited by hand): then escaped, as every write escapes it."""
    escaped = safe_text(body)
    return body if escaped == clean_text(body) else escaped


class Restore:
    def __init__(self, store: Store, path: Path, shown: str, *, allow_secret: bool) -> None:
        self.store, self.path, self.shown, self.allow_secret = store, path, shown, allow_secret
        self.report = ImportReport("gitmem", False)
        self.ids: dict[str, str] = {}
        self.topics: dict[str, dict[str, Any]] = {}
        self.workspaces: dict[str, Any] = {}

    def _act(self, what: str, entry_id: str | None, relpath: str, line: int, title: str) -> None:
        self.report.actions.append(Action(what, entry_id, relpath, f"{self.shown}:{line}", title))

    def plan(self) -> None:
        """First pass: check every record and choose every entry's Id."""
        self.report.files = 1
        tops: dict[tuple[str, str], int] = {}
        planned: list[tuple[int, str, Entry]] = []
        seen_header = False
        for line, record in _records(self.path, self.shown):
            kind = record["kind"]
            if kind == "header":
                _check_header(line, record, self.shown)
                seen_header = True
                workspaces = record.get("workspaces")
                self.workspaces = workspaces if isinstance(workspaces, dict) else {}
            elif kind == "topic" and isinstance(record.get("path"), str):
                self.topics[record["path"]] = record
            elif kind == "entry":
                relpath, entry = _entry(line, record, self.shown)
                parsed = L.parse_id(entry.id or "")
                if parsed is not None:
                    key = (parsed.scope, parsed.layer)
                    tops[key] = max(tops.get(key, 0), parsed.number)
                planned.append((line, relpath, entry))
            if not self.allow_secret:
                self._gate(line, record)
        if not seen_header:
            raise malformed(self.shown, 1, "not a gitmem export (no header record)")
        self._choose_ids(planned, tops)

    def _gate(self, line: int, record: dict[str, Any]) -> None:
        text = "\n".join(str(record.get(k, "")) for k in ("title", "body", "text", "content"))
        text += "\n" + "\n".join(str(v) for v in (record.get("fields") or {}).values())
        found = find_secrets(text, path=f"{self.shown}:{line}")
        if found:
            raise refusal(found, "", WAY_OUT)

    def _choose_ids(self, planned: list[tuple[int, str, Entry]], tops: dict[tuple[str, str], int]) -> None:
        catalog = self.store.catalog
        start: dict[tuple[str, str], int] = {}
        self.writes: list[tuple[int, str, Entry]] = []
        for line, relpath, entry in planned:
            role = L.classify_path(relpath)
            key = (role.scope, role.layer)
            start.setdefault(key, catalog.max_number(*key))
            old = entry.id
            here = self._held(old) if old else None
            if here is not None and here.get("Created") == entry.get("Created"):
                same = (here.title, here.body, dict(here.fields)) == (entry.title, entry.body, dict(entry.fields))
                self._act("unchanged" if same else "kept-edit", old, relpath, line, entry.title)
                continue
            hit = next((h for h in catalog.find_text(role.scope, role.layer, entry.content_hash)
                        if h.status == "live" and h.id), None)
            if hit is not None and hit.id:
                if old:
                    self.ids[old] = hit.id
                self._act("duplicate", hit.id, relpath, line, entry.title)
                continue
            parsed = L.parse_id(old or "")
            if old and parsed and (parsed.scope, parsed.layer) == key and parsed.number > start[key]:
                new = old
            else:
                tops[key] = max(tops.get(key, 0), start[key]) + 1
                new = L.format_id(role.scope, role.layer, tops[key])
            if old:
                self.ids[old] = new
            self._act("added" if new == old else "renumbered", new, relpath, line, entry.title)
            self.writes.append((line, relpath, entry.with_fields(Id=new) if new != old else entry))

    def _held(self, entry_id: str) -> Entry | None:
        """The store's entry with this Id, if it holds one."""
        for relpath in self.store.catalog.locate(entry_id):
            document = self.store.read_file(relpath)
            index = document.find(entry_id) if document else None
            if document is not None and index is not None:
                return document.entries[index]
        return None

    def write(self, txn: WriteTxn) -> None:
        for line, record in _records(self.path, self.shown):
            if record["kind"] == "file":
                self._file(txn, line, record)
        keys = {L.classify_path(p).scope for _, p, _ in self.writes} - {L.GLOBAL}
        for key in sorted(keys | {k for k in self.workspaces if L.is_workspace_key(k)}):
            known = self.workspaces.get(key)
            title = known.get("title") if isinstance(known, dict) else None
            self.store.register_workspace(txn, key, title if isinstance(title, str) else None)
        by_file: dict[str, list[Entry]] = {}
        for _, relpath, entry in self.writes:
            by_file.setdefault(relpath, []).append(relinked(entry, self.ids))
        for relpath, entries in by_file.items():
            document = self.store.read_file(relpath) or self._new_topic(relpath)
            document.entries.extend(entries)
            self.store.write_topic(txn, relpath, document)

    def _new_topic(self, relpath: str) -> TopicFile:
        role = L.classify_path(relpath)
        topic = self.topics.get(relpath)
        if topic is None or not isinstance(topic.get("meta"), dict):
            return new_topic_file({"topic": role.slug, "layer": role.layer, "scope": role.scope}, role.slug)
        meta = topic["meta"]
        return TopicFile(frontmatter_raw=render_frontmatter(meta) if meta else "", meta=dict(meta),
                         preamble=str(topic.get("preamble") or ""))

    def _file(self, txn: WriteTxn, line: int, record: dict[str, Any]) -> None:
        relpath, text = record.get("path"), record.get("text")
        if not isinstance(relpath, str) or not isinstance(text, str) or not _restorable(relpath):
            raise malformed(self.shown, line, f"file record {relpath!r} is not a file an export holds")
        target = self.store.path(relpath)
        if target.exists() and relpath == REVIEW_PATH:  # both queues' items, as a sync merges them
            merged = merge_review(None, target.read_text(encoding="utf-8"), text).text
            changed = self.store.write_file(txn, relpath, merged)
            self._act("updated" if changed else "unchanged", None, relpath, line, "(file)")
            return
        if target.exists():
            same = target.read_text(encoding="utf-8") == text
            self._act("unchanged" if same else "kept-edit", None, relpath, line, "(file)")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        self.store.write_file(txn, relpath, text)
        self._act("added", None, relpath, line, "(file)")


def _restorable(relpath: str) -> bool:
    if relpath == REVIEW_PATH:
        return True
    parts = relpath.split("/")
    if ".." in parts or relpath.startswith("/") or "\\" in relpath:
        return False
    scope = parts[0] if parts[0] == L.GLOBAL else (parts[1] if parts[0] == "workspaces" and len(parts) > 2 else "")
    rest = parts[1:] if parts[0] == L.GLOBAL else parts[2:]
    if not scope or (scope != L.GLOBAL and not L.is_workspace_key(scope)) or not rest:
        return False
    return rest[0] in ("runtime", "documents") or (len(rest) == 1 and rest[0] in
                                                    ("INDEX.md", "meta.json", "state.md", "working.md", "junk.md"))


def restore(store: Store, path: Path, shown: str, *, dry_run: bool = False,
            allow_secret: bool = False) -> ImportReport:
    job = Restore(store, path, shown, allow_secret=allow_secret)
    if dry_run:
        with store.reading():
            store.catch_up_catalog()
            job.plan()
        job.report.dry_run = True
        return job.report
    with store.writing("import", allow_secret=allow_secret) as txn:
        job.plan()
        job.write(txn)
        counts = job.report.counts()
        summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        txn.message = f"import: gitmem {path.name} ({summary})" if txn.touched else ""
    job.report.commit = store.git.head_oid() if txn.touched else None
    if not txn.touched and not job.report.actions:
        raise InvalidInputError(f"{shown} holds nothing to import")
    return job.report
