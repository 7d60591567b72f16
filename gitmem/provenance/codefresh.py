"""Code-bound freshness: an entry about code is `suspect` once that code changed after the entry
was last verified.

An entry names its code with `**Paths:** src/api/, src/db/schema.py` (paths in its workspace's
repository); a codebase entry without Paths uses its topic when the topic names a file or folder
of the repository. When such an entry is written or verified where the repository is known, the
repository's HEAD is recorded with it (`**Code-Commit:**`): every later commit (in HEAD and not in
that one) touching one of its paths makes the entry suspect, even minutes later the same day. An
entry without a Code-Commit, or whose Code-Commit this clone does not have, falls back to days: a
commit made on a later day than its Verified day. `gitmem verify ID` clears the mark.

Cost: one `git log --since` per workspace repository per call (search, show, card), plus one
`git log ANCHOR..HEAD` per distinct Code-Commit, cached in state/code-changes.json by the
repository's HEAD, so an unchanged repository costs a `git rev-parse HEAD`. Where the workspace's
repository is not known on this machine (no `gitmem associate`, not the current directory's
repository), no entry is suspect.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.format import layers as L
from gitmem.format.freshness import parse_day
from gitmem.format.references import parse_paths, path_matches
from gitmem.fsio import read_regular_file, write_json_atomic
from gitmem.git import workrepo
from gitmem.git.gitlog import Commit, commits_after, commits_since

CACHE_FILE = "state/code-changes.json"
MAX_NAMED = 10  # commits named per suspect entry
MISSING = "missing"  # cached for a Code-Commit this clone does not have (until HEAD moves)


@dataclass(frozen=True)
class Suspicion:
    """One commit that changed an entry's code after it was verified."""

    file: str
    commit: str
    days: int
    more_files: int = 0

    def text(self) -> str:
        more = f" (and {self.more_files} more file(s))" if self.more_files else ""
        if self.days <= 0:
            return f"{self.file}{more} changed in {self.commit}, after this was verified"
        unit = "day" if self.days == 1 else "days"
        return f"{self.file}{more} changed in {self.commit}, {self.days} {unit} after this was verified"


@dataclass(frozen=True)
class Bound:
    """What the check needs to know about one entry."""

    key: object  # the caller's handle for the entry
    scope: str
    paths: tuple[str, ...]
    verified: date
    anchor: str = ""  # the repository's HEAD when it was written or verified (Code-Commit)


def entry_paths(fields: dict[str, str], layer: str, topic: str, repo: Path | None) -> list[str]:
    """The code paths an entry is about: its Paths field, else a codebase topic naming a path."""
    paths, _bad = parse_paths(fields.get("Paths", ""))
    if paths or layer != "codebase" or repo is None:
        return paths
    candidate = topic.strip().strip("/")
    if candidate and ".." not in candidate.split("/") and (repo / candidate).exists():
        return [candidate + ("/" if (repo / candidate).is_dir() else "")]
    return []


class CodeWatch:
    """Suspect marks for entries of the workspaces whose repositories this machine knows."""

    def __init__(self, store_root: Path, cwd: Path) -> None:
        self.root = store_root
        self.cwd = cwd
        self._repos: dict[str, Path | None] = {}
        self._cwd: tuple[str | None, Path | None] | None = None
        self._associations: dict[str, str] | None = None
        self._cache: dict[str, dict[str, object]] | None = None

    # -- where the code is --------------------------------------------------------------------
    def repo_for(self, scope: str) -> Path | None:
        """The local repository of a workspace: an associated folder, else the current one."""
        if scope == L.GLOBAL or not scope:
            return None
        if scope not in self._repos:
            self._repos[scope] = self._find_repo(scope)
        return self._repos[scope]

    def _find_repo(self, key: str) -> Path | None:
        from gitmem.store.registry import load_associations

        if self._associations is None:
            self._associations = load_associations(self.root)
        store = self.root.resolve()
        for folder, owner in sorted(self._associations.items()):
            if owner == key and Path(folder).is_dir():
                top = workrepo.toplevel(Path(folder))
                if top is not None and top != store:
                    return top
        if self._cwd is None:
            self._cwd = self._cwd_workspace()
        return self._cwd[1] if self._cwd[0] == key else None

    def _cwd_workspace(self) -> tuple[str | None, Path | None]:
        """(workspace key, repository) of the current folder's repository, keyed as
        gitmem.store.workspaces keys it (origin URL, else folder name); through the git binary,
        so a search does not load pygit2 for this."""
        from gitmem.store.registry import associated_key
        from gitmem.store.workspaces import repository_key

        if associated_key(self.root, self.cwd):
            return None, None  # an associated folder: found through its association
        found = workrepo.find_repository(self.cwd)
        if found is None or found.top == self.root.resolve():
            return None, None
        try:
            return repository_key(found), found.top
        except GitmemError:
            return None, None

    def bound(self, key: object, scope: str, layer: str, topic: str,
              fields: dict[str, str]) -> Bound | None:
        """The entry as the check needs it, or None when it is not bound to known code."""
        repo = self.repo_for(scope)
        if repo is None:
            return None
        paths = entry_paths(fields, layer, topic, repo)
        verified = parse_day(fields.get("Verified", "")) or parse_day(fields.get("Created", ""))
        if not paths or verified is None:
            return None
        return Bound(key, scope, tuple(paths), verified, fields.get("Code-Commit", "").strip())

    def anchor(self, scope: str, layer: str, topic: str, fields: dict[str, str]) -> str | None:
        """What a write or verify records as Code-Commit: the HEAD of the workspace's repository
        when the entry is bound to its code, else None (no anchor: the day rule applies)."""
        repo = self.repo_for(scope)
        if repo is None or not entry_paths(fields, layer, topic, repo):
            return None
        return workrepo.head(repo)

    # -- the check ----------------------------------------------------------------------------
    def check(self, items: Iterable[Bound]) -> dict[object, list[Suspicion]]:
        """Suspicions per entry key (entries with none are left out)."""
        by_repo: dict[Path, list[Bound]] = {}
        for item in items:
            repo = self.repo_for(item.scope)
            if repo is not None:
                by_repo.setdefault(repo, []).append(item)
        found: dict[object, list[Suspicion]] = {}
        for repo, bound in by_repo.items():
            head = workrepo.head(repo)  # once per repository: every answer below is cached by it
            if head is None:
                continue
            after = {a: self._after(repo, head, a) for a in {b.anchor for b in bound if b.anchor}}
            dated = [b for b in bound if after.get(b.anchor) is None]
            commits = self._commits(repo, head, min(b.verified for b in dated)) if dated else []
            for item in bound:
                anchored = after.get(item.anchor)
                if anchored is None and commits is None:
                    continue
                marks = suspicions(item, anchored if anchored is not None else commits or [],
                                   by_day=anchored is None)
                if marks:
                    found[item.key] = marks
        return found

    def _after(self, repo: Path, head: str, anchor: str) -> list[Commit] | None:
        """The commits after `anchor` (None when this clone does not have it), cached by HEAD."""
        cache = self._load_cache()
        record = cache.setdefault(str(repo), {})
        known = record.get("after") if record.get("head") == head else None
        rows = known.get(anchor) if isinstance(known, dict) else None
        if isinstance(rows, list):
            return [Commit(r[0], files=tuple(r[2]), time=int(r[1])) for r in rows]
        if rows == MISSING:
            return None
        commits: list[Commit] | None = None
        if workrepo.rev_parse(repo, anchor) is not None:
            with contextlib.suppress(GitmemError):
                commits = commits_after(repo, anchor)
        if record.get("head") != head:
            record.clear()
            record["head"] = head
        afters = record.setdefault("after", {})
        assert isinstance(afters, dict)
        afters[anchor] = MISSING if commits is None else [[c.oid, c.time, list(c.files)] for c in commits]
        with contextlib.suppress(OSError):
            write_json_atomic(self.root / CACHE_FILE, cache)
        return commits

    def _commits(self, repo: Path, head: str, since: date) -> list[Commit] | None:
        cache = self._load_cache()
        record = cache.get(str(repo)) or {}
        cached_since = parse_day(str(record.get("since", "")))
        if record.get("head") == head and cached_since is not None and cached_since <= since:
            rows = record.get("commits") or []
            assert isinstance(rows, list)
            return [Commit(r[0], files=tuple(r[2]), time=int(r[1])) for r in rows]
        try:
            commits = commits_since(repo, since)
        except GitmemError:
            return None  # a repository git cannot read marks nothing, and breaks nothing
        afters = record.get("after") if record.get("head") == head else None
        cache[str(repo)] = {"head": head, "since": since.isoformat(),
                            "commits": [[c.oid, c.time, list(c.files)] for c in commits],
                            **({"after": afters} if isinstance(afters, dict) else {})}
        with contextlib.suppress(OSError):  # only a cache: a read-only store still answers
            write_json_atomic(self.root / CACHE_FILE, cache)
        return commits

    def _load_cache(self) -> dict[str, dict[str, object]]:
        if self._cache is None:
            try:
                data = json.loads(read_regular_file(self.root / CACHE_FILE).decode("utf-8"))
                self._cache = data if isinstance(data, dict) else {}
            except (OSError, ValueError):
                self._cache = {}
        return self._cache


def suspicions(item: Bound, commits: list[Commit], *, by_day: bool = True) -> list[Suspicion]:
    """The commits (newest first, at most MAX_NAMED) that touched the entry's paths: of
    `commits` (those after its Code-Commit), or with `by_day`, those made later than the day it
    was verified."""
    out: list[Suspicion] = []
    for commit in commits:
        day = caller.local_date(commit.time)
        if by_day and day <= item.verified:
            continue
        touched = [f for f in commit.files if any(path_matches(p, f) for p in item.paths)]
        if touched:
            out.append(Suspicion(touched[0], commit.oid[:7], (day - item.verified).days,
                                 len(touched) - 1))
            if len(out) >= MAX_NAMED:
                break
    return out
