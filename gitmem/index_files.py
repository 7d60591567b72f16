"""What the search index is built from: memory files on disk, their documents, and the manifest.

The manifest (`index/manifest.json`) records, per indexed file, its mtime_ns, size and content
hash, plus which index folder and generation are current. Comparing it with a fresh stat of
every memory file tells which files changed since they were indexed, without reading them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .entry import Entry
from .errors import ParseError
from .freshness import entry_volatility
from .layers import LAYERS, classify_path
from .markdown import conflict_marker_lines, parse_topic_file

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
# A file modified this close to the moment it was indexed may change again within the same
# mtime tick without its stat changing; such "racy" files are re-hashed until they age out.
RACY_NS = 2_000_000_000
BODY_STORE_CHARS = 4000


@lru_cache(maxsize=65536)
def indexable(relpath: str) -> bool:
    """True for topic files and single files of an indexed layer (state.md)."""
    role = classify_path(relpath)
    if role.kind == "topic":
        return True
    return role.kind == "single" and LAYERS[role.layer].indexed


FileStamp = tuple[int, int]  # (mtime_ns, size): the cheap identity of a file on disk

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
            if name in topic_dirs and item.is_dir():
                base = f"{prefix}/{name}/"
                with os.scandir(item.path) as files:
                    for sub in files:
                        sub_name = sub.name
                        if sub_name.endswith(".md") and sub_name[0] != ".":
                            st = sub.stat()
                            out[base + sub_name] = (st.st_mtime_ns, st.st_size)
            elif name in singles:
                st = item.stat()
                out[f"{prefix}/{name}"] = (st.st_mtime_ns, st.st_size)
        except OSError:  # vanished while scanning, or a dangling link: not a memory file now
            continue


def scan_memory_files(root: Path) -> dict[str, FileStamp]:
    """Every indexable memory file under root with its stamp (scandir over the known folders)."""
    out: dict[str, FileStamp] = {}
    base = os.fspath(root)
    _scan_scope(os.path.join(base, "global"), "global", _TOPIC_DIRS_GLOBAL, _SINGLES_GLOBAL, out)
    try:
        with os.scandir(os.path.join(base, "workspaces")) as listing:
            keys = [item.name for item in listing if item.is_dir()]
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


@dataclass
class FileRecord:
    """What the manifest knows about one indexed file."""

    mtime_ns: int
    size: int
    digest: str
    recorded_ns: int
    error: str = ""
    stamp: FileStamp = field(init=False, repr=False, compare=False)
    racy: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.stamp = (self.mtime_ns, self.size)
        # Modified too close to its indexing for the stat to prove a later change absent.
        self.racy = self.recorded_ns - self.mtime_ns < RACY_NS


@dataclass
class Manifest:
    """Index bookkeeping: schema version, current index folder and generation, file records."""

    schema: int = SCHEMA_VERSION
    folder: str = ""
    generation: int = -1
    files: dict[str, FileRecord] = field(default_factory=dict)

    def to_json(self) -> str:
        files = {
            path: [r.mtime_ns, r.size, r.digest, r.recorded_ns, r.error]
            for path, r in sorted(self.files.items())
        }
        data = {"schema": self.schema, "folder": self.folder, "generation": self.generation,
                "files": files}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data: dict[str, Any] = json.loads(text)
        files = {
            path: FileRecord(int(v[0]), int(v[1]), str(v[2]), int(v[3]), str(v[4]))
            for path, v in data["files"].items()
        }
        return cls(int(data["schema"]), str(data["folder"]), int(data["generation"]), files)


def load_manifest(path: Path) -> Manifest | None:
    """The manifest on disk, or None when it is missing, unreadable or of another schema."""
    try:
        manifest = Manifest.from_json(path.read_text("utf-8"))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return manifest if manifest.schema == SCHEMA_VERSION and manifest.folder else None


def save_manifest(path: Path, manifest: Manifest) -> None:
    """Write the manifest atomically (temp file + rename)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(manifest.to_json(), "utf-8")
    os.replace(tmp, path)


def stat_key(path: Path) -> tuple[int, int, int, int] | None:
    """Identity of a file's current version (changes whenever it is replaced)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


@dataclass(frozen=True)
class FileContent:
    """A memory file read from disk: its record and the documents it yields."""

    record: FileRecord
    docs: list[dict[str, Any]]


def read_file(root: Path, relpath: str) -> FileContent | None:
    """Read, hash and parse one memory file; None when it no longer exists."""
    path = root / relpath
    try:
        st = os.stat(path)
        data = path.read_bytes()
    except OSError:
        return None
    record = FileRecord(st.st_mtime_ns, st.st_size, digest(data), time.time_ns())
    text = data.decode("utf-8", errors="replace")
    try:
        topic = parse_topic_file(text, relpath)
    except ParseError as exc:
        record.error = str(exc)
        return FileContent(record, [])
    conflicted = bool(conflict_marker_lines(text))
    docs = [entry_document(relpath, entry, conflicted) for entry in topic.entries]
    return FileContent(record, docs)


def entry_status(entry: Entry) -> str:
    """Static part of an entry's status (expired depends on the day and is decided at search)."""
    if entry.is_forgotten:
        return "forgotten"
    if entry.is_superseded:
        return "superseded"
    return "live"


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
        "status": entry_status(entry),
        "conflicted": conflicted,
    }


def remove_quietly(path: Path) -> None:
    """Delete a file if it exists."""
    with contextlib.suppress(OSError):
        path.unlink()
