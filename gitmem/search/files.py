"""What the search index is built from: memory files on disk, their documents, and the manifest.

The manifest (`index/manifest.json`) records, per indexed file, its stamp (gitmem/stamps.py: inode,
size, modification and change times...) and content hash, plus which index folder and generation
are current. Comparing it with a fresh lstat of every memory file tells which files changed since
they were indexed, without reading them; a file that had not settled when it was indexed is
hashed again until it has.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from gitmem.errors import ParseError
from gitmem.format.document import DOCUMENT_COPY_RE
from gitmem.format.entry import Entry
from gitmem.format.freshness import entry_volatility
from gitmem.format.layers import LAYERS, classify_path, is_workspace_key
from gitmem.format.markdown import conflict_marker_lines, decode_memory_bytes, parse_topic_file
from gitmem.fsio import NotRegularFileError, read_regular_file
from gitmem.search.documents import document_sections
from gitmem.stamps import Stamp, file_stamp, settled, stamp_of

SCHEMA_VERSION = 2  # 2: day and month terms (dates.py)
MANIFEST_NAME = "manifest.json"
BODY_STORE_CHARS = 4000


@lru_cache(maxsize=65536)
def indexable(relpath: str) -> bool:
    """True for topic files, single files of an indexed layer (state.md) and document copies."""
    role = classify_path(relpath)
    if role.kind == "topic":
        return True
    if role.kind == "single":
        return LAYERS[role.layer].indexed
    return DOCUMENT_COPY_RE.match(relpath) is not None


FileStamp = Stamp  # the cheap identity of a file on disk (see gitmem/stamps.py)

_TOPIC_DIRS_GLOBAL = frozenset(
    name for name, spec in LAYERS.items() if spec.shape == "topics" and spec.global_ok
)
_TOPIC_DIRS_WORKSPACE = frozenset(
    name for name, spec in LAYERS.items() if spec.shape == "topics" and spec.workspace_ok
)
_SINGLES_GLOBAL = frozenset(
    f"{name}.md" for name, spec in LAYERS.items()
    if spec.shape == "single" and spec.indexed and spec.global_ok
)
_SINGLES_WORKSPACE = frozenset(
    f"{name}.md" for name, spec in LAYERS.items()
    if spec.shape == "single" and spec.indexed and spec.workspace_ok
)


def _scan_scope(folder: str, prefix: str, topic_dirs: frozenset[str], singles: frozenset[str],
                out: dict[str, FileStamp]) -> None:
    """Stat the memory files of one scope folder: `<layer>/*.md` and indexed single files."""
    try:
        with os.scandir(folder) as listing:
            items = list(listing)
    except OSError:
        return
    for item in items:
        name = item.name
        try:
            if name in topic_dirs and item.is_dir(follow_symlinks=False):
                base = f"{prefix}/{name}/"
                with os.scandir(item.path) as files:
                    for sub in files:
                        sub_name = sub.name
                        if sub_name.endswith(".md") and sub_name[0] != ".":
                            # The link itself, never its target: reading refuses what is not a
                            # regular file, and the refusal is recorded (see read_file).
                            out[base + sub_name] = stamp_of(sub.stat(follow_symlinks=False))
            elif name in singles:
                out[f"{prefix}/{name}"] = stamp_of(item.stat(follow_symlinks=False))
            elif name == "documents" and item.is_dir(follow_symlinks=False):
                _scan_documents(item.path, f"{prefix}/documents", out)
        except OSError:  # vanished while scanning: not a memory file now
            continue


def _scan_documents(folder: str, prefix: str, out: dict[str, FileStamp]) -> None:
    """Stat the managed document copies under `documents/active` and `documents/archived`."""
    for status in ("active", "archived"):
        try:
            with os.scandir(os.path.join(folder, status)) as files:
                for sub in files:
                    if sub.name.endswith(".md") and sub.name[0] != ".":
                        # As for topic files: the link, folder or FIFO itself is recorded, and
                        # reading it refuses it with a note (see read_file).
                        stamp = stamp_of(sub.stat(follow_symlinks=False))
                        out[f"{prefix}/{status}/{sub.name}"] = stamp
        except OSError:
            continue


def scan_memory_files(root: Path) -> dict[str, FileStamp]:
    """Every indexable memory file under root with its stamp (scandir over the known folders)."""
    out: dict[str, FileStamp] = {}
    base = os.fspath(root)
    _scan_scope(os.path.join(base, "global"), "global", _TOPIC_DIRS_GLOBAL, _SINGLES_GLOBAL, out)
    try:
        with os.scandir(os.path.join(base, "workspaces")) as listing:
            keys = [item.name for item in listing
                    if item.is_dir(follow_symlinks=False) and is_workspace_key(item.name)]
    except OSError:
        keys = []
    for key in keys:
        prefix = f"workspaces/{key}"
        _scan_scope(os.path.join(base, "workspaces", key), prefix, _TOPIC_DIRS_WORKSPACE,
                    _SINGLES_WORKSPACE, out)
    return {path: stamp for path, stamp in out.items() if indexable(path)}


def digest(data: bytes) -> str:
    """Content hash used to confirm that a file whose stat changed really changed."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(slots=True)
class FileRecord:
    """What the manifest knows about one indexed file."""

    stamp: FileStamp
    digest: str
    recorded_ns: int
    error: str = ""
    segment: str = ""  # the index segment holding this file's entries

    @property
    def racy(self) -> bool:
        """Changed too close to its indexing for the stamp to prove a later change absent."""
        return not settled(self.stamp, self.recorded_ns)


@dataclass
class Manifest:
    """Index bookkeeping: schema version, current index folder and generation, file records."""

    schema: int = SCHEMA_VERSION
    folder: str = ""
    generation: int = -1
    files: dict[str, FileRecord] = field(default_factory=dict)

    def to_json(self, log: str = "") -> str:
        """The manifest as compact JSON (rows assembled directly: it is rewritten whole when its
        log of changes (search/manifeststore.py), named `log`, has grown)."""
        rows = ",".join(row_json(path, r) for path, r in self.files.items())
        fields: dict[str, object] = {"schema": self.schema, "folder": self.folder,
                                     "generation": self.generation}
        if log:
            fields["log"] = log
        head = json.dumps(fields, separators=(",", ":"))
        return f'{head[:-1]},"files":[{rows}]}}'


def row_json(path: str, r: FileRecord) -> str:
    """One file's row: path, mtime_ns, size, digest, recorded_ns, error, segment, then mode,
    device, inode, ctime_ns (an older gitmem wrote only the first seven: such a file is hashed
    once)."""
    quote = encode_basestring_ascii
    return (f"[{quote(path)},{r.stamp[4]},{r.stamp[3]},{quote(r.digest)},{r.recorded_ns},"
            f"{quote(r.error)},{quote(r.segment)},{r.stamp[0]},{r.stamp[1]},{r.stamp[2]},"
            f"{r.stamp[5]}]")


def record_of_row(row: list[Any]) -> FileRecord:
    """The record a row (row_json) describes."""
    return FileRecord(_row_stamp(row), str(row[3]), int(row[4]), str(row[5]), str(row[6]))


def _row_stamp(row: list[Any]) -> FileStamp:
    mode, device, inode, ctime = (int(v) for v in row[7:11]) if len(row) >= 11 else (0, 0, 0, 0)
    return (mode, device, inode, int(row[2]), int(row[1]), ctime)


@dataclass(frozen=True)
class FileContent:
    """A memory file read from disk: its record and the documents it yields."""

    record: FileRecord
    docs: list[dict[str, Any]]


def read_file(root: Path, relpath: str) -> FileContent | None:
    """Read, hash and parse one memory file; None when it no longer exists.

    A file that cannot be read (not a regular file, binary, not UTF-8, broken frontmatter) is
    recorded with its error and no entries: it is skipped, and never blocks (a FIFO is refused,
    not opened)."""
    path = root / relpath
    try:
        st = os.lstat(path)
        data = read_regular_file(path)
    except NotRegularFileError as exc:
        record = FileRecord(stamp_of(st), "", time.time_ns(),
                            f"{relpath}:1: not a regular file ({exc.kind})")
        return FileContent(record, [])
    except OSError:
        return None
    record = FileRecord(stamp_of(st), digest(data), time.time_ns())
    try:
        text = decode_memory_bytes(data, relpath)
        if DOCUMENT_COPY_RE.match(relpath):
            return FileContent(record, document_sections(relpath, text, BODY_STORE_CHARS))
        topic = parse_topic_file(text, relpath)
    except ParseError as exc:
        record.error = str(exc)
        return FileContent(record, [])
    conflicted = bool(conflict_marker_lines(text))
    docs = [entry_document(relpath, entry, conflicted) for entry in topic.entries]
    return FileContent(record, docs)


def entry_document(relpath: str, entry: Entry, conflicted: bool) -> dict[str, Any]:
    """The fields of one entry as the index stores them (text fields analysed later)."""
    role = classify_path(relpath)
    topic = role.slug or role.layer
    return {
        "path": relpath,
        "line": entry.line,
        "id": entry.id or "",
        "scope": role.scope,
        "layer": role.layer,
        "topic": topic,
        "title": entry.title,
        "body": entry.body[:BODY_STORE_CHARS] if len(entry.body) > BODY_STORE_CHARS else entry.body,
        "full_body": entry.body,
        "importance": entry.get("Importance").strip().lower() or "normal",
        "volatility": entry_volatility(entry),
        "verified": entry.get("Verified").strip()[:10],
        "created": entry.get("Created").strip()[:10],
        "valid_until": entry.get("Valid-until").strip()[:10],
        "source": entry.get("Source").strip(),
        "status": entry.status,
        "conflicted": conflicted,
    }


# -- what changed on disk ---------------------------------------------------------------------


def diff_files(root: Path, files: dict[str, FileRecord],
               stamps: dict[str, FileStamp]) -> tuple[list[str], dict[str, FileRecord]]:
    """(paths whose content changed, new records of files only touched) since indexing."""
    changed = [p for p in files if p not in stamps]
    touched: dict[str, FileRecord] = {}
    now_ns = time.time_ns()
    for relpath, stamp in stamps.items():
        record = files.get(relpath)
        if record is None:
            changed.append(relpath)
        elif record.stamp != stamp or record.racy:
            _confirm(root, relpath, record, stamp, now_ns, changed, touched)
    return changed, touched


def diff_paths(root: Path, files: dict[str, FileRecord],
               paths: set[str]) -> tuple[list[str], dict[str, FileRecord]]:
    """`diff_files` restricted to the given paths (those change notifications named)."""
    stamps: dict[str, FileStamp] = {}
    for relpath in paths:
        if not indexable(relpath):
            continue
        stamp = file_stamp(root / relpath)
        if stamp is not None:
            stamps[relpath] = stamp
    gone = {p for p in paths if p not in stamps and p in files}
    known = {p: files[p] for p in paths if p in files}
    changed, touched = diff_files(root, known, stamps)
    return sorted(set(changed) | gone), touched


def _confirm(root: Path, relpath: str, record: FileRecord, stamp: FileStamp, now_ns: int,
             changed: list[str], touched: dict[str, FileRecord]) -> None:
    """Hash a suspect file: changed content goes to `changed`, same content to `touched`."""
    try:
        data = read_regular_file(root / relpath)
    except OSError:
        changed.append(relpath)
        return
    if len(data) != stamp[3] or digest(data) != record.digest:
        changed.append(relpath)
    elif record.stamp != stamp or settled(stamp, now_ns):
        touched[relpath] = FileRecord(stamp, record.digest, now_ns, record.error, record.segment)


def normalize_relpath(root: Path, path: str | os.PathLike[str]) -> str:
    """A repo-relative posix path, whether given relative or absolute."""
    candidate = Path(path)
    if candidate.is_absolute():
        with contextlib.suppress(ValueError):
            candidate = candidate.relative_to(root)
    text = candidate.as_posix()
    return text[2:] if text.startswith("./") else text


# -- segments ---------------------------------------------------------------------------------

SEGMENT_FANOUT = 6  # fold segments once this many of one size tier pile up
TIER_BASE = 24  # live documents below which a segment is in the smallest tier


def merge_candidates(segments: list[Any], files: dict[str, FileRecord],
                     updating: set[str]) -> list[str]:
    """Paths to move into the new segment so that segments do not pile up."""
    # `segments` are whoosh segment objects. They are grouped in tiers by live documents
    # (TIER_BASE x SEGMENT_FANOUT^n); when a tier other than the largest segment's holds
    # SEGMENT_FANOUT segments, the files still living in them move into the new segment, which
    # leaves those segments empty (and dropped). Re-adding a few small files is far cheaper than
    # whoosh's term-by-term segment merge.
    if len(segments) <= SEGMENT_FANOUT:
        return []
    live = {s.segment_id(): s.doc_count_all() - s.deleted_count() for s in segments}
    base = max(live, key=live.__getitem__)
    tiers: dict[int, list[str]] = {}
    for name, count in live.items():
        if name != base and count > 0:
            tiers.setdefault(_tier(count), []).append(name)
    crowded = sorted(t for t, names in tiers.items() if len(names) >= SEGMENT_FANOUT)
    if not crowded:
        return []
    chosen = set(tiers[crowded[0]])
    return sorted(p for p, r in files.items() if r.segment in chosen and p not in updating)


def _tier(live_docs: int) -> int:
    tier = 0
    while live_docs >= TIER_BASE * SEGMENT_FANOUT**tier:
        tier += 1
    return tier


def doc_from_stored(fields: dict[str, Any]) -> dict[str, Any]:
    """The document dict of an indexed entry, rebuilt from its stored fields."""
    body = fields.get("body", "")
    return {
        "path": fields["path"], "line": fields["line"], "id": fields.get("id", ""),
        "scope": fields.get("scope", ""), "layer": fields.get("layer", ""),
        "topic": fields.get("topic", ""), "title": fields.get("title", ""), "body": body,
        "full_body": body, "importance": fields.get("importance", "normal"),
        "volatility": fields.get("volatility", "normal"), "verified": fields.get("verified", ""),
        "created": fields.get("created", ""), "valid_until": fields.get("valid_until", ""),
        "source": fields.get("source", ""), "status": fields.get("status", "live"),
        "conflicted": bool(fields.get("conflicted", False)),
    }
