"""`gitmem merge-driver %O %A %B %P`: the entry-level merge as a git merge driver.

With `.gitattributes` naming the `gitmem` driver (written by `gitmem init`) and the driver
registered in the store's git config (`gitmem init`, `gitmem hooks install`), a plain `git pull`
or `git merge` in the store merges memory files entry by entry, exactly like `gitmem sync`.

Git's contract: read the ancestor (%O), ours (%A) and theirs (%B), write the result over %A, exit
0 when clean and non-zero when conflict markers were left. Generated files (layer indexes,
SYSTEM.md) never conflict: the side that changed is taken (ours when both did) and the next
`gitmem sync` or write regenerates them from the merged topic files.

Ids follow the sync rule: an Id the common ancestor has is one entry (two different edits of it
are a conflict, never a renumbering); a new Id both sides used for different entries is
renumbered on the side not yet published (ours in a merge, the commit being replayed in a
rebase). Conflict markers name each side's machine and commit, as in a sync: this machine and
HEAD, and the machine that made the commit being merged (from its Gitmem-Machine trailer).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import caller

if TYPE_CHECKING:
    from gitmem.merge.common import Labels
    from gitmem.merge.entries import MergeResult

DRIVER_NAME = "gitmem entry-level merge"


def merge_driver_command(root: Path, python: str | None = None) -> str:
    """The merge.gitmem.driver value: the entry-level merge through this interpreter."""
    python = python or sys.executable
    return f"{shlex.quote(python)} -m gitmem --root {shlex.quote(str(root))} merge-driver %O %A %B %P"


def configure_merge_driver(root: Path, python: str | None = None) -> None:
    """Register the gitmem merge driver in the store's own git config (idempotent)."""
    from gitmem.git.repo import GitRepo

    repo = GitRepo(root)
    repo.set_config("merge.gitmem.name", DRIVER_NAME)
    repo.set_config("merge.gitmem.driver", merge_driver_command(Path(root).absolute(), python))


def _read(path: str) -> str | None:
    """A side's text; None for an absent side (git passes an empty file for a missing base)."""
    if not path or not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8")


def _taken_ids(root: Path) -> Callable[[str, str], set[int]] | None:
    """Id numbers in use in the store (from its catalog), or None when there is no catalog."""
    if not (root / "state" / "catalog.sqlite").is_file():
        return None
    from gitmem.store.catalog import Catalog

    catalog = Catalog(root)
    return catalog.numbers


def _merging_commit(root: Path, rebase: bool) -> tuple[str, str] | None:
    """(oid, name) of the commit git is bringing in: the one being merged (git names it in a
    GITHEAD_<oid> variable) or, in a rebase, the local commit being replayed."""
    if rebase:
        done = root / ".git" / "rebase-merge" / "done"
        try:
            picks = [line.split() for line in done.read_text(encoding="utf-8").splitlines()]
        except OSError:
            return None
        picks = [p for p in picks if len(p) >= 2 and not p[0].startswith("#")]
        return (picks[-1][1], "") if picks else None
    for key, value in caller.environ().items():
        if key.startswith("GITHEAD_") and len(key) > 8:
            return key[8:], value
    return None


def driver_labels(root: Path, rebase: bool) -> Labels:
    """Marker labels for a plain git merge: `<machine> <short commit>` of each side."""
    from gitmem.git.machine import machine_name
    from gitmem.git.repo import GitRepo
    from gitmem.merge.common import Labels

    here = machine_name()
    try:
        repo = GitRepo(root)
        head = repo.head_oid() or ""
        other = _merging_commit(root, rebase)
        if other is None:
            return Labels(f"{here} {head[:12]}".strip(), "theirs")
        oid, name = other
        if rebase:  # HEAD is the upstream being rebased onto; the replayed commit is this machine's
            upstream = repo.commit_info(head).machine if head else None
            return Labels(f"{upstream or 'upstream'} {head[:12]}".strip(), f"{here} {oid[:12]}")
        machine = repo.commit_info(oid).machine
    except Exception:  # noqa: BLE001 - labels are a courtesy; the merge must still happen
        return Labels()
    named = name if name and " " not in name and name != oid else "remote"
    return Labels(f"{here} {head[:12]}".strip(), f"{machine or named} {oid[:12]}")


def merge_texts(path: str, base: str | None, ours: str, theirs: str, *, root: Path | None = None,
                rebase: bool = False, labels: Labels | None = None) -> MergeResult:
    """The driver's merge of one file (pure apart from reading the catalog under `root`)."""
    from gitmem.format import layers as L
    from gitmem.merge.common import PLAIN, Labels
    from gitmem.merge.entries import MergeResult
    from gitmem.merge.files import is_generated, merge_file
    from gitmem.merge.prep import ConflictBlocks, renumber_local_ids

    taken = _taken_ids(root) if root is not None else None
    blocks = ConflictBlocks()
    if L.classify_path(path).kind in ("topic", "single"):
        base, ours, theirs = blocks.protect(base), blocks.protect(ours) or "", blocks.protect(theirs) or ""
    if L.classify_path(path).kind == "topic":
        local, remote = (theirs, ours) if rebase else (ours, theirs)
        rewritten, renumbered, notes = renumber_local_ids(
            {path: (base, local)}, {path: (base, remote)}, taken)
        if path in rewritten:
            if rebase:
                theirs = rewritten[path]
            else:
                ours = rewritten[path]
    else:
        renumbered, notes = {}, []
    if rebase and L.classify_path(path).kind not in ("topic", "single"):
        # A rebase's %A is the upstream. The file merges decide "this machine's side" by position
        # (the review queue keeps the published accept, a document index renumbers the
        # unpublished record), so they get the sides as a merge or a sync gives them.
        shown = labels or PLAIN
        merged = merge_file(path, base, theirs, ours, taken_ids=taken,
                            labels=Labels(shown.theirs, shown.ours))
    else:
        merged = merge_file(path, base, ours, theirs, taken_ids=taken, labels=labels or PLAIN)
    if merged is None:  # git calls the driver only when both sides exist; keep ours
        merged = MergeResult(ours)
    merged.text = blocks.restore(merged.text, base, path)
    merged.renumbered = {**renumbered, **merged.renumbered}
    merged.notes = notes + merged.notes
    if is_generated(path):
        merged.conflicts = []  # a placeholder: regenerated by the next sync or write
    return merged


def run_merge_driver(base: str, ours: str, theirs: str, path: str, root: Path | None = None) -> int:
    """Merge %O/%A/%B of `path` into the %A file; 0 when clean, 1 when markers were written."""
    from gitmem.format.markdown import conflict_marker_lines
    from gitmem.merge.entries import merge_lines

    where = Path(caller.absolute(str(root or '.')))
    try:
        texts = (_read(base), _read(ours) or "", _read(theirs) or "")
    except (OSError, UnicodeDecodeError):
        return 1  # not text: leave ours in place and let git report the conflict
    base_text = texts[0] or None
    from gitmem.store.gitgate import rebase_in_progress

    rebase = rebase_in_progress(where / ".git")
    try:
        merged = merge_texts(path, base_text, texts[1], texts[2], root=where, rebase=rebase)
        if merged.conflicts or conflict_marker_lines(merged.text):
            # Only a conflict names where each side came from: the same merge again, labelled.
            # A clean merge (most of them) never opens the repository.
            merged = merge_texts(path, base_text, texts[1], texts[2], root=where, rebase=rebase,
                                 labels=driver_labels(where, rebase))
    except Exception:  # noqa: BLE001 - never leave git without an answer: fall back to lines
        merged = merge_lines(path, base_text, texts[1], texts[2])
    with open(ours, "wb") as handle:
        handle.write(merged.text.encode("utf-8"))
    return 1 if conflict_marker_lines(merged.text) else 0
