"""The git binary, for code running inside git hooks.

A hook runs while git itself holds the index: the staged content lives in the index file git
names in GIT_INDEX_FILE, which only the git binary (inheriting that environment) sees exactly
as git does. Starting it costs a few milliseconds, where loading pygit2 costs far more, so the
hook path speaks to git through these small functions. Everything else uses `gitmem.git`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitLayerError

NULL_OID = "0" * 40


@dataclass(frozen=True)
class StagedChange:
    """One path staged for the next commit (`git diff --cached --raw`)."""

    path: str
    status: str  # A, M, D, T (renames are reported as D + A)
    mode: str  # new mode ("000000" when deleted)
    oid: str  # new blob id (NULL_OID when deleted)


def run(root: Path, args: Sequence[str], *, data: bytes | None = None,
        env: dict[str, str] | None = None, check: bool = True) -> bytes:
    """Run `git ARGS` in `root` and return its stdout; GitLayerError when it fails."""
    try:
        proc = subprocess.run(
            ["git", *args], cwd=root, input=data, capture_output=True,
            env=env if env is not None else caller.child_env(), check=False,
        )
    except OSError as exc:
        raise GitLayerError(f"cannot run git: {exc}") from exc
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitLayerError(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
    return proc.stdout


def _split_z(out: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in out.split(b"\0") if part]


def rev_parse(root: Path, rev: str) -> str | None:
    """Full oid of a commit, or None when it does not exist (an unborn HEAD)."""
    out = run(root, ["rev-parse", "-q", "--verify", f"{rev}^{{commit}}"], check=False)
    value = out.decode().strip()
    return value or None


def git_dir(root: Path) -> Path:
    """The repository's git directory (honours GIT_DIR)."""
    path = Path(run(root, ["rev-parse", "--git-dir"]).decode().strip())
    return path if path.is_absolute() else root / path


def hooks_dir(root: Path) -> Path:
    """Where git looks for hooks (honours core.hooksPath)."""
    path = Path(run(root, ["rev-parse", "--git-path", "hooks"]).decode().strip())
    return path if path.is_absolute() else root / path


def staged_changes(root: Path) -> list[StagedChange]:
    """Every path whose staged content differs from HEAD (all paths while HEAD is unborn)."""
    out = run(root, ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"])
    parts = out.split(b"\0")
    changes = []
    for position in range(0, len(parts) - 1, 2):
        meta = parts[position].decode()
        if not meta.startswith(":"):
            continue
        _old_mode, new_mode, _old_oid, new_oid, status = meta[1:].split(" ")
        path = parts[position + 1].decode("utf-8", "surrogateescape")
        changes.append(StagedChange(path, status[:1], new_mode, new_oid))
    return changes


def read_blobs(root: Path, oids: Iterable[str]) -> dict[str, bytes]:
    """Contents of blobs by oid, read with one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(oids))
    if not wanted:
        return {}
    out = run(root, ["cat-file", "--batch"], data="".join(f"{o}\n" for o in wanted).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for oid in wanted:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        if len(header) != 3:
            raise GitLayerError(f"git cat-file: object {oid} is missing")
        size = int(header[2])
        blobs[oid] = out[eol + 1 : eol + 1 + size]
        pos = eol + 1 + size + 1
    return blobs


def changed_between(root: Path, old: str, new: str) -> list[str]:
    """Paths that differ between two commits."""
    return _split_z(run(root, ["diff", "--name-only", "-z", "--no-renames", old, new]))


def files_in(root: Path, rev: str) -> list[str]:
    """Every file of a commit."""
    return _split_z(run(root, ["ls-tree", "-r", "-z", "--name-only", rev]))


def add(root: Path, paths: Iterable[str], *, index_file: Path | None = None) -> None:
    """Stage these paths from the working tree (into another index file when given)."""
    listed = list(dict.fromkeys(paths))
    if not listed:
        return
    env = None
    if index_file is not None:
        env = {**caller.environ(), "GIT_INDEX_FILE": str(index_file)}
    run(root, ["add", "--", *listed], env=env)


def write_blob(root: Path, data: bytes) -> str:
    """Store bytes as a blob exactly as given (no filters) and return its oid."""
    return run(root, ["hash-object", "-w", "--no-filters", "--stdin"], data=data).decode().strip()


def set_index_entries(root: Path, entries: Iterable[tuple[str, str, str]],
                      *, index_file: Path | None = None) -> None:
    """Point index entries (mode, oid, path) at blobs, leaving the working tree alone."""
    lines = "".join(f"{mode} {oid}\t{path}\0" for mode, oid, path in entries)
    if not lines:
        return
    env = None
    if index_file is not None:
        env = {**caller.environ(), "GIT_INDEX_FILE": str(index_file)}
    run(root, ["update-index", "-z", "--index-info"], data=lines.encode(), env=env)


def config_get(root: Path, key: str) -> str | None:
    """A value from the repository's own (local) config, or None."""
    out = run(root, ["config", "--local", "--get", key], check=False)
    return out.decode().rstrip("\n") if out else None


def config_set(root: Path, key: str, value: str) -> None:
    run(root, ["config", "--local", key, value])


def config_unset(root: Path, key: str) -> None:
    run(root, ["config", "--local", "--unset-all", key], check=False)



@dataclass(frozen=True)
class TreeDelta:
    """One path that differs between a commit and one parent (`git diff-tree --raw`); a side
    where the path is absent has NULL_OID."""

    path: str
    status: str  # A, D, M, T (renames are reported as D + A)
    old: str
    new: str


def diff_trees(root: Path, pairs: Sequence[tuple[str, str | None]], under: Sequence[str]) -> list[list[TreeDelta]]:
    """For each (commit, parent) — parent None: against nothing, for a root commit — the paths
    below `under` that differ, all from one `git diff-tree --stdin` (a process per call, not
    per commit: reading a long history)."""
    if not pairs:
        return []
    lines = "".join(f"{commit} {parent}\n" if parent else f"{commit}\n" for commit, parent in pairs)
    out = run(root, ["-c", "core.quotePath=false", "diff-tree", "--stdin", "-r", "-z", "--root",
                     "--always", "--no-renames", "--no-abbrev", "--", *under], data=lines.encode())
    found: list[list[TreeDelta]] = []
    parts = out.split(b"\0")
    index = 0
    while index < len(parts):
        part = parts[index]
        index += 1
        if not part:
            continue
        if not part.startswith(b":"):  # the header of the next pair: the commit's id
            found.append([])
            continue
        _old_mode, _new_mode, old, new, status = part[1:].decode().split(" ")
        path = parts[index].decode("utf-8", "surrogateescape")
        index += 1
        found[-1].append(TreeDelta(path, status[:1], old, new))
    if len(found) != len(pairs):
        raise GitLayerError(f"git diff-tree answered {len(found)} of {len(pairs)} commits")
    return found
