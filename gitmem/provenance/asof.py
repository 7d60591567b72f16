"""`gitmem as-of DATE|REV ...`: the store as it was, read from git without touching the work tree.

`show` parses the files holding the id in that commit's tree. `search` needs an index of the
whole tree as it was: the commit's memory files are exported into `index/as-of/<commit>/` (a
local, gitignored cache) and indexed there once, starting from a copy of the store's own index so
that only the files the commit holds differently are indexed again; later searches of the same
commit reuse it, and the newest few snapshots are kept. Freshness is graded on the commit's day:
as it looked then.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Sequence
from datetime import date, datetime
from datetime import time as day_time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.errors import NotFoundError
from gitmem.format import layers as L
from gitmem.format.freshness import grade_entry, parse_day
from gitmem.git.history import CommitInfo
from gitmem.provenance.index import HistoryIndex, Progress
from gitmem.provenance.trace import MEMORY_FOLDERS, EntryTrace, commit_date, subject

if TYPE_CHECKING:
    from gitmem.store.store import Store

SNAPSHOT_DIR = "index/as-of"
KEEP_SNAPSHOTS = 3
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+)?$")


def resolve_when(store: Store, when: str, progress: Progress | None = None) -> CommitInfo:
    """A date (the last commit made on or before the end of that day, or before that moment)
    or any revision git understands (oid, branch, tag, HEAD~3)."""
    store.require()
    history = store.git
    text = when.strip()
    if _DATE_RE.match(text):
        moment = _moment(text)
        if moment is not None:
            with HistoryIndex(history, progress) as index:  # the first-parent line, without walking git
                found = index.commit_before(int(moment.timestamp()))
            if found is None:
                raise NotFoundError(f"the store has no commit on or before {text}")
            return history.commit_info(found)
    return history.commit_info(text)


def _moment(text: str) -> datetime | None:
    """The end of a day, or an exact moment, in this machine's time zone."""
    try:
        if len(text) == 10:
            return caller.as_local(datetime.combine(date.fromisoformat(text), day_time(23, 59, 59)))
        return caller.as_local(datetime.fromisoformat(text))
    except ValueError:
        return None


def commit_day(commit: CommitInfo) -> date:
    return caller.local_date(commit.time)


def as_of_json(commit: CommitInfo, when: str) -> dict[str, str]:
    return {"asked": when, "commit": commit.oid, "date": commit_date(commit),
            "message": subject(commit.message)}


def show_at(store: Store, when: str, entry_id: str, progress: Progress | None = None) -> dict[str, Any]:
    """One entry as it was in the commit `when` names."""
    commit = resolve_when(store, when, progress)
    versions = EntryTrace(store.git, entry_id).versions_at(commit.oid)
    if not versions:
        raise NotFoundError(f"{entry_id} did not exist at {when} (commit {commit.oid[:7]})")
    version = versions[0]
    entry, role = version.entry, L.classify_path(version.path)
    day = commit_day(commit)
    fresh = grade_entry(entry, day, store.registry.freshness_windows())
    status = entry.status
    until = parse_day(entry.get("Valid-until"))
    if status == "live" and until is not None and until < day:
        status = "expired"
    return {
        "id": entry.id, "title": entry.title, "body": entry.body,
        "fields": dict(entry.ordered_fields()), "scope": role.scope, "layer": role.layer,
        "path": version.path, "line": entry.line, "status": status, "freshness": fresh.grade,
        "age_days": fresh.age_days, "label": fresh.label(), "as_of": as_of_json(commit, when),
    }


def search_at(store: Store, when: str, query: str, *, scopes: Sequence[str] | None,
              layer: str | None, limit: int, include_all: bool,
              progress: Progress | None = None) -> dict[str, Any]:
    """Ranked hits over the store as it was in the commit `when` names."""
    from dataclasses import asdict

    commit = resolve_when(store, when, progress)
    index = snapshot_index(store, commit.oid)
    try:
        hits = index.search(query, scopes=scopes, layer=layer, limit=limit,
                            include_all=include_all, now=commit_day(commit))
    finally:
        index.close()
    return {"as_of": as_of_json(commit, when), "hits": [_shown(asdict(h)) for h in hits]}


def _shown(hit: dict[str, Any]) -> dict[str, Any]:
    """As `gitmem search` prints hits: a credential stored in the text is never shown."""
    from gitmem.secrets.mask import hide_secrets

    for name in ("title", "snippet", "source"):
        if isinstance(hit.get(name), str):
            hit[name] = hide_secrets(hit[name])
    return hit


def snapshot_index(store: Store, oid: str) -> Any:
    """The search index of commit `oid`'s tree, built on first use and cached under index/."""
    from gitmem.search.index import SearchIndex

    base = store.root / SNAPSHOT_DIR
    folder = base / oid
    if not (folder / ".ready").is_file():
        _build_snapshot(store, base, oid)
    with contextlib.suppress(OSError):
        os.utime(folder)  # most recently used snapshots are the ones kept
    _prune(base)
    return SearchIndex(folder, watch=False)


def _build_snapshot(store: Store, base: Path, oid: str) -> None:
    """Export and index into a private folder, then move it into place in one rename."""
    from gitmem.search.index import SearchIndex

    base.mkdir(parents=True, exist_ok=True)
    scratch = base / f".{oid}.{os.getpid()}.tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        store.git.export_tree(oid, scratch, MEMORY_FOLDERS)
        _seed(store.root / "index", scratch / "index")
        index = SearchIndex(scratch, watch=False)
        try:
            index.refresh()  # re-indexes what differs from the copy; builds when there is none
        except Exception:  # noqa: BLE001 - a copy taken mid-write: index from scratch instead
            index.close()
            shutil.rmtree(scratch / "index", ignore_errors=True)
            index = SearchIndex(scratch, watch=False)
            index.rebuild()
        index.close()
        (scratch / ".ready").write_text(f"{time.time()}\n", encoding="utf-8")
        try:
            os.rename(scratch, base / oid)
        except OSError:
            if not (base / oid / ".ready").is_file():  # not a concurrent twin: a real failure
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _seed(live: Path, target: Path) -> None:
    """Copy the store's current index (the folder its manifest names, then the manifest)."""
    from gitmem.search import manifeststore
    from gitmem.search.files import MANIFEST_NAME

    loaded = manifeststore.load(live / MANIFEST_NAME)
    if loaded is None:
        return
    try:
        shutil.copytree(live / loaded.manifest.folder, target / loaded.manifest.folder)
        manifeststore.write_base(target / MANIFEST_NAME, loaded.manifest)  # its log taken in
    except OSError:  # replaced by a rebuild meanwhile: build from nothing instead
        shutil.rmtree(target, ignore_errors=True)


def _prune(base: Path) -> None:
    """Keep the most recently used snapshots only."""
    try:
        folders = [p for p in base.iterdir() if p.is_dir()]
    except OSError:
        return
    for scratch in [p for p in folders if p.name.startswith(".")]:
        folders.remove(scratch)
        with contextlib.suppress(OSError):
            if time.time() - scratch.stat().st_mtime > 3600:  # left by a build that was killed
                shutil.rmtree(scratch, ignore_errors=True)
    folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[KEEP_SNAPSHOTS:]:
        shutil.rmtree(old, ignore_errors=True)
