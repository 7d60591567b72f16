"""The pre-commit hook's part for runtime memory: a committed edit of USER.md / MEMORY.md goes
into memories.json, and a committed edit of memories.json renders the projections again.

The staged projection is compared with the projection gitmem last rendered, read from the
committed history exactly as a write verb does (gitmem.runtime.base); the changes are applied to
the staged memories.json, and both files are staged again in their rendered form. A line that
breaks the rules (holds `§`, too long) refuses the commit with `path:line`; nothing is dropped.
Speaks to the git binary only, like the rest of the hook.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmem import caller
from gitmem.format.normalize import Problem
from gitmem.git import binary as gitcli
from gitmem.git.gitlog import path_commits
from gitmem.runtime.base import HISTORY_DEPTH, Pair, edit_base, projection_changes
from gitmem.runtime.budget import Limits
from gitmem.runtime.edits import apply_changes
from gitmem.runtime.model import dump_records, load_records, render_projection, timestamp
from gitmem.runtime.tier import projection_path, records_path, targets_of

_RUNTIME_RE = re.compile(r"^(?:global|workspaces/(?P<key>[a-z0-9][a-z0-9-]{0,63}))/runtime/"
                         r"(?:USER\.md|MEMORY\.md|memories\.json)$")


def runtime_scope(path: str) -> str | None:
    """The scope of a runtime file a commit may carry (None for any other path)."""
    match = _RUNTIME_RE.match(path)
    return None if match is None else match["key"] or "global"


def _at(root: Path, spec: str) -> str | None:
    """A blob's text by `git rev-parse` spec (`:path` = staged, `HEAD:path`); None if absent."""
    oid = gitcli.run(root, ["rev-parse", "-q", "--verify", spec], check=False).decode().strip()
    if not oid:
        return None
    return gitcli.read_blobs(root, [oid])[oid].decode("utf-8", errors="replace")


@dataclass
class StagedRuntime:
    """What the hook did to one scope's runtime files."""

    texts: dict[str, str]  # path -> the text to stage
    staged: dict[str, str | None]  # path -> what was staged before
    notes: list[str]


def import_staged(root: Path, scope: str, limits: Limits) -> tuple[StagedRuntime, list[Problem]]:
    """Apply the staged projection edits of `scope` to its staged memories.json."""
    json_path = records_path(scope)
    staged: dict[str, str | None] = {json_path: _at(root, f":{json_path}")}
    records = load_records(staged[json_path] or "", json_path)
    problems: list[Problem] = []
    notes: list[str] = []
    for target in targets_of(scope):
        path = projection_path(scope, target)
        staged[path] = text = _at(root, f":{path}")
        rendered = render_projection([item.content for item in records.of(target)])
        if text is None or text == rendered:
            continue
        base = edit_base(*_committed(root, json_path, path), target)
        if base == text:
            continue  # staged as gitmem rendered it from older records: rendered again
        changes, bad = projection_changes(base, rendered, text, limits.item)
        problems += [Problem(path, line, f"{reason} (runtime memory: one item per line, no §)")
                     for line, reason in bad]
        when = timestamp(caller.local_time())
        records, done = apply_changes(records, target, changes, when)
        notes += [f"{path}: {line}" for line in done]
    texts = {json_path: dump_records(records)} if records.items or staged[json_path] is not None else {}
    for target in targets_of(scope):
        path = projection_path(scope, target)
        if records.of(target) or staged[path] is not None:
            texts[path] = render_projection([item.content for item in records.of(target)])
    return StagedRuntime(texts, staged, notes), problems


def _committed(root: Path, json_path: str, path: str) -> tuple[Pair, Iterator[Pair]]:
    """(memories.json, projection) at HEAD, and at each commit that changed the projection."""
    if gitcli.rev_parse(root, "HEAD") is None:
        return (None, None), iter(())

    def older() -> Iterator[Pair]:
        for oid in path_commits(root, path, HISTORY_DEPTH):
            yield _at(root, f"{oid}:{json_path}"), _at(root, f"{oid}:{path}")

    return (_at(root, f"HEAD:{json_path}"), _at(root, f"HEAD:{path}")), older()


def _working_copy_is(target: Path, staged: str | None) -> bool:
    """True when the working copy is missing or holds exactly the staged text (so it may be
    rewritten); a FIFO, folder or non-text file there is left alone."""
    from gitmem.fsio import read_regular_text

    try:
        return read_regular_text(target) == staged
    except FileNotFoundError:
        return True
    except (OSError, UnicodeDecodeError):
        return False


def stage_runtime(root: Path, result: StagedRuntime) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Write the rendered texts: (paths whose working copy held exactly what was staged, now
    rewritten, for `git add`; index entries (mode, oid, path) for the others)."""
    from gitmem.fsio import write_text_atomic

    whole: list[str] = []
    index_only: list[tuple[str, str, str]] = []
    for path, text in result.texts.items():
        before = result.staged.get(path)
        if text == before:
            continue
        target = root / path
        if _working_copy_is(target, before):
            write_text_atomic(target, text)
            whole.append(path)
        else:
            index_only.append(("100644", gitcli.write_blob(root, text.encode("utf-8")), path))
    return whole, index_only
