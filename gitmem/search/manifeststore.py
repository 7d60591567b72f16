"""The manifest on disk: a base file and a log of changes since it, so an update writes what it
changed, not a row for every file of the store.

`index/manifest.json` is the base (search/files.py: every file's row, the index folder and
generation), and names its log (`"log": "manifest.<nonce>.log"`). An update appends one line to
that log: the new generation, the rows of the files it indexed and the paths it dropped. Once the
log holds about a quarter of the base's rows, the next update writes a whole new base naming a
new, empty log, and removes the old log.

Only the holder of the index's write lock writes; readers take no lock and see only whole lines
(a line is appended by one write; a line without its newline, left by a crash, is not read, and
the next append starts after it). A reader that read a base whose log a compaction just removed
reads the new base instead. A reader that knows the base reads only the log's lines it has not
read yet. A base without a log (written by an earlier gitmem) is the whole manifest.

The last base read from each path is kept, by its stamp, for this process's next reader of it (a
long-lived process opens several readers of one index: the warm server's calls running side by
side); each reader gets rows of its own. A base is replaced, never rewritten in
place, so an equal stamp (inode included) means the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from gitmem.fsio import read_regular_text
from gitmem.search.files import SCHEMA_VERSION, FileRecord, Manifest, record_of_row, row_json
from gitmem.stamps import Stamp, file_stamp

LOG_SHARE = 4  # compact once the log holds 1/LOG_SHARE as many rows as the base
LOG_MIN_ROWS = 256  # ... and at least this many (a small store's log stays a few lines)
LOAD_ATTEMPTS = 5  # a base whose log vanished (compacted meanwhile) is read again this often
# path -> (stamp of the base, the manifest it holds, its log's name): the last base read there
_bases: dict[Path, tuple[Stamp, Manifest, str]] = {}


@dataclass
class Loaded:
    """A manifest as read, and where its reading stopped: the base's stamp, its log's name and
    the offset after the log's last whole line (what a later read continues from)."""

    manifest: Manifest
    base: Stamp
    log: str
    offset: int
    base_rows: int
    log_rows: int


def log_name() -> str:
    return f"manifest.{secrets.token_hex(6)}.log"


def load(path: Path) -> Loaded | None:
    """The manifest at `path` with its log applied; None when missing, unreadable or of another
    schema (the index is then rebuilt)."""
    for _attempt in range(LOAD_ATTEMPTS):
        base = file_stamp(path)
        if base is None:
            return None
        known = _bases.get(path)
        if known is not None and known[0] == base:
            manifest, log = known[1], known[2]
        else:
            read = _read_base(path)
            if read is None:
                return None
            manifest, log = read
            _bases[path] = (base, manifest, log)
        manifest = Manifest(manifest.schema, manifest.folder, manifest.generation, _copied(manifest.files))
        loaded = Loaded(manifest, base, log, 0, len(manifest.files), 0)
        if not log or catch_up(path, loaded):
            return loaded
    return None


def _copied(files: dict[str, FileRecord]) -> dict[str, FileRecord]:
    """A table of rows of its own: an index writer updates a row's segment in place."""
    return {path: FileRecord(r.stamp, r.digest, r.recorded_ns, r.error, r.segment)
            for path, r in files.items()}


def _read_base(path: Path) -> tuple[Manifest, str] | None:
    """The base file's manifest and the name of its log; None when unreadable or of another schema."""
    try:
        data: dict[str, Any] = json.loads(read_regular_text(path))
        manifest = Manifest(int(data["schema"]), str(data["folder"]), int(data["generation"]),
                            {str(row[0]): record_of_row(row) for row in data["files"]})
        log = str(data.get("log") or "")
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    if manifest.schema != SCHEMA_VERSION or not manifest.folder:
        return None
    return manifest, log


def reread(path: Path, loaded: Loaded | None) -> Loaded | None:
    """The manifest as on disk now, after `loaded` was read: only the log's new lines when the
    base is the one read before, the whole of it otherwise."""
    base = file_stamp(path)
    if loaded is not None and base == loaded.base and (not loaded.log or catch_up(path, loaded)):
        return loaded
    return load(path) if base else None


def catch_up(path: Path, loaded: Loaded) -> bool:
    """Apply the log lines written since `loaded` was read; False when its log is gone (a
    compaction wrote a new base: read that instead)."""
    try:
        with open(path.with_name(loaded.log), "rb") as log:
            log.seek(loaded.offset)
            data = log.read()
    except OSError:  # gone (compacted meanwhile), or not a file gitmem can read: read again
        return False
    end = data.rfind(b"\n") + 1
    if not end:
        return True
    files = dict(loaded.manifest.files)
    generation = loaded.manifest.generation
    for line in data[:end].splitlines():
        try:
            change: dict[str, Any] = json.loads(line)
            generation = int(change["generation"])
            for row in change["rows"]:
                files[str(row[0])] = record_of_row(row)
            for gone in change["gone"]:
                files.pop(str(gone), None)
        except (ValueError, KeyError, TypeError, IndexError):
            break  # a damaged line: what follows it is not trusted either
        loaded.log_rows += len(change["rows"]) + len(change["gone"])
    loaded.manifest = Manifest(loaded.manifest.schema, loaded.manifest.folder, generation, files)
    loaded.offset += end
    return True


def save(path: Path, manifest: Manifest, before: Loaded | None, changed: set[str]) -> Loaded:
    """Write `manifest` (under the index's write lock): one log line of the `changed` paths'
    rows when `before` is the state on disk it was made from and the log has room, else a new
    base and an empty log."""
    if before is not None and before.log and before.manifest.folder == manifest.folder \
            and before.log_rows + len(changed) < max(LOG_MIN_ROWS, before.base_rows // LOG_SHARE) \
            and file_stamp(path) == before.base:
        appended = _append(path, before, manifest, changed)
        if appended is not None:
            return appended
    return write_base(path, manifest)


def _append(path: Path, before: Loaded, manifest: Manifest, changed: set[str]) -> Loaded | None:
    rows = ",".join(row_json(p, manifest.files[p]) for p in sorted(changed) if p in manifest.files)
    gone = ",".join(encode_basestring_ascii(p) for p in sorted(changed) if p not in manifest.files)
    line = f'{{"generation":{manifest.generation},"rows":[{rows}],"gone":[{gone}]}}\n'.encode()
    target = path.with_name(before.log)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size != before.offset:  # a torn line (a crash) or a writer we did not see: start over
            return None
        os.write(fd, line)
    except OSError:
        return None
    finally:
        os.close(fd)
    return Loaded(manifest, before.base, before.log, before.offset + len(line), before.base_rows,
                  before.log_rows + len(changed))


def write_base(path: Path, manifest: Manifest) -> Loaded:
    """A whole new base naming a fresh, empty log (made first: a reader of the base finds it),
    written to a temp file and renamed over the old; then every other log is removed."""
    log = log_name()
    path.with_name(log).write_bytes(b"")
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(manifest.to_json(log), "utf-8")
    os.replace(tmp, path)
    for stale in path.parent.glob("manifest.*.log"):
        if stale.name != log:
            with contextlib.suppress(OSError):
                stale.unlink()
    base = file_stamp(path)
    assert base is not None, "the manifest just written"
    return Loaded(manifest, base, log, 0, len(manifest.files), 0)
