"""The conflicts left in the store, and where each version came from.

One scan serves `gitmem conflicts`, state/CONFLICT.md, the end of `gitmem sync` and `gitmem
resolve`. Each block of markers is described from its own marker lines, which name the machine
and the commit of each side (`<<<<<<< laptop-b 3f2c1d0e9b8a`), so every machine describes a block
alike, whether it merged, fast-forwarded or pulled with plain git. Blocks whose markers say less
(`ours`, `HEAD`, written by an older gitmem or by git itself) are described from git: the merge in
progress (HEAD and MERGE_HEAD), else the parents of the merge commit that wrote them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitmem.errors import ConflictError, GitmemError
from gitmem.format.conflicts import ConflictBlock, conflict_blocks, parse_label
from gitmem.format.markdown import conflict_marker_lines
from gitmem.fsio import read_regular_text, read_text
from gitmem.git.machine import machine_name
from gitmem.sync.state import ConflictRecord, load_sync_state, write_conflicts

if TYPE_CHECKING:
    from gitmem.store.store import Store


def this_machine() -> str:
    """The name this machine's marker labels and commits carry."""
    return machine_name()


def describe_label(label: str, here: str | None = None) -> str | None:
    """'laptop-a, commit 7e6d5c4b3a21' for a `<machine> <commit>` label (this machine marked as
    such); None for a label that names no machine."""
    parsed = parse_label(label)
    if parsed is None:
        return None
    machine, commit = parsed
    here = machine_name() if here is None else here
    who = f"{machine} (this machine)" if machine == here else machine
    return f"{who}, commit {commit}"


def _commit(store: Store, oid: str, here: str) -> str:
    """A commit as a label describes it: its machine (when gitmem made it) and short hash."""
    try:
        machine = store.git.commit_info(oid).machine
    except GitmemError:
        machine = None
    if machine is None:
        return f"commit {oid[:12]} (made outside gitmem: machine unknown)"
    return describe_label(f"{machine} {oid[:12]}", here) or oid[:12]


def _from_git(store: Store, path: str, here: str) -> tuple[str, str]:
    """Where the two versions of a block without machine labels came from, read from git."""
    merge_head = store.root / ".git" / "MERGE_HEAD"
    head = None
    try:
        head = store.git.head_oid()
        if merge_head.is_file() and head:
            theirs = read_text(merge_head).split()[0]
            return (f"{_commit(store, head, here)} (HEAD of the merge in progress)",
                    f"{_commit(store, theirs, here)} (being merged: MERGE_HEAD)")
        last = store.git.log(limit=1, path=path)
    except (GitmemError, OSError, IndexError):
        last = []
    if last and len(last[0].parents) >= 2:
        merge = last[0].oid[:12]
        return (f"{_commit(store, last[0].parents[0], here)} (first parent of merge {merge})",
                f"{_commit(store, last[0].parents[1], here)} (second parent of merge {merge})")
    unknown = "unknown: the markers were not written by a merge"
    if last:
        unknown = f"unknown: both versions were committed together in {last[0].oid[:12]}, not by a merge"
    return unknown, unknown


def describe_block(store: Store, path: str, block: ConflictBlock, here: str,
                   recorded: ConflictRecord | None = None) -> ConflictRecord:
    """One block as a record: its entry, title, and each side's origin."""
    labels = [v.label for v in block.versions]
    first = describe_label(labels[0], here) if labels else None
    last = describe_label(labels[-1], here) if labels else None
    if first is None or last is None:
        if recorded is not None and recorded.ours and recorded.theirs:
            first, last = first or recorded.ours, last or recorded.theirs
        else:
            fallback = _from_git(store, path, here)
            first, last = first or fallback[0], last or fallback[1]
    kind = "both-edited" if block.is_entry_block else "lines"
    return ConflictRecord(path, block.entry_id, block.title, kind, first, last, block.line)


def current_conflicts(
    store: Store, known: list[ConflictRecord], extra_paths: list[str] | None = None,
    *, scan_all: bool = True,
) -> list[ConflictRecord]:
    """Every block of conflict markers in the known paths, extra paths and (scan_all) memory files,
    and every record a merge left in conflict in a runtime or document record file."""
    from gitmem.format.document import DOCUMENT_COPY_RE
    from gitmem.store.tree import conflicted_files, document_conflicted

    recorded: dict[tuple[str, str | None], list[ConflictRecord]] = {}
    for rec in known:
        recorded.setdefault((rec.path, rec.entry_id), []).append(rec)
    paths = {rec.path for rec in known} | set(extra_paths or [])
    if scan_all:
        paths |= set(conflicted_files(store.root))
    here = machine_name()
    out: list[ConflictRecord] = []
    for path in sorted(paths):
        full = store.path(path)
        try:
            text = read_regular_text(full) if full.is_file() else ""
        except (OSError, UnicodeDecodeError):
            continue
        if is_record_file(path):
            out += _record_conflicts(store, path, text, here)
            continue
        if DOCUMENT_COPY_RE.match(path) and not document_conflicted(store.root, path, text):
            continue  # a document may quote markers as part of its recorded text
        blocks = conflict_blocks(text) if "<<<<<<<" in text else []
        for block in blocks:
            queue = recorded.get((path, block.entry_id))
            out.append(describe_block(store, path, block, here, queue.pop(0) if queue else None))
        lines = conflict_marker_lines(text) if not blocks else []
        if lines:  # marker lines that form no whole block: still nothing to commit or push
            stray = "unknown: marker lines outside a complete block"
            out.append(ConflictRecord(path, None, f"line {lines[0]}", "markers", stray, stray, lines[0]))
    return out


def is_record_file(path: str) -> bool:
    """Runtime records and document indexes: conflicts live inside the JSON, not as markers."""
    return path.endswith(("/runtime/memories.json", "/documents/index.json"))


def _record_conflicts(store: Store, path: str, text: str, here: str) -> list[ConflictRecord]:
    """Records a merge left in conflict (they keep this machine's fields and hold the other's
    under "conflict"); settled with `gitmem runtime resolve` / `gitmem doc update`."""
    from gitmem.merge.records import conflict_labels, record_conflicts

    found = record_conflicts(text)
    if not found:
        return []
    labels = conflict_labels(text)
    from_git: tuple[str, str] | None = None
    out = []
    for ident, title in found:
        ours, theirs = (describe_label(label, here) if label else None
                        for label in labels.get(ident or "", (None, None)))
        if ours is None or theirs is None:  # written by an older gitmem: read the merge from git
            from_git = from_git or _from_git(store, path, here)
            ours, theirs = ours or from_git[0], theirs or from_git[1]
        out.append(ConflictRecord(path, ident, title, "record", ours, theirs))
    return out


def recorded_conflicts(store: Store) -> list[ConflictRecord]:
    """The conflicts state/sync.json remembers from this machine's last sync."""
    out = []
    for item in load_sync_state(store.root).get("conflicts") or []:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            out.append(ConflictRecord(
                item["path"], item.get("entry_id"), str(item.get("title", "")),
                str(item.get("kind", "markers")), str(item.get("ours", "")), str(item.get("theirs", "")),
                int(item.get("line") or 0),
            ))
    return out


def list_conflicts(store: Store) -> list[ConflictRecord]:
    """What `gitmem conflicts` shows: every block of markers left in the store."""
    store.require()
    return current_conflicts(store, recorded_conflicts(store), store.git.dirty_paths())


def refresh_conflict_file(store: Store) -> list[ConflictRecord]:
    """Write state/CONFLICT.md for what is left (remove it when nothing is); returns the list."""
    found = list_conflicts(store)
    write_conflicts(store.root, found)
    return found


def refuse_unfinished(store: Store) -> None:
    """ConflictError while a git merge is half done. A file edited and still holding markers
    does not stop the sync: the hand-edit gate leaves it uncommitted (Store.hold_back) and the
    sync goes on without it, unless the remote changed that file too (refuse_incoming_held)."""
    gitdir = store.root / ".git"
    for name in ("MERGE_HEAD", "rebase-merge", "rebase-apply"):
        if (gitdir / name).exists():
            raise ConflictError(
                "a git merge or rebase is in progress in the store: finish it (commit or"
                " `git rebase --continue`) or abort it, then run `gitmem sync`"
            )


def refuse_incoming_held(store: Store, head: str, theirs: str) -> None:
    """ConflictError, before anything arrives, when the remote changed a file left uncommitted
    because it cannot be committed yet (markers, unparseable): merging would overwrite it."""
    held = sorted(set(store.held) & set(store.git.changed_between(head, theirs)))
    if held:
        files = ", ".join(str(store.held[p]) for p in held)
        raise ConflictError(
            f"the remote changed {files}, which holds an uncommitted edit gitmem cannot commit yet; "
            "nothing was changed: finish it (remove every marker line, fix what `gitmem check` "
            "names), then run `gitmem sync`"
        )


def block_base(store: Store, path: str, block: ConflictBlock) -> str | None:
    """The text both sides of `block` started from: the entry (by Id) or section (by title) as
    the merge base of the two commits its marker lines name holds it. None when the labels name
    no commits, the histories share no base, or the entry is new on both sides."""
    from gitmem.format.markdown import parse_topic_file

    commits = [parsed[1] for v in block.versions if (parsed := parse_label(v.label))]
    if len(commits) < 2:
        return None
    try:
        base = store.git.merge_base(commits[0], commits[-1])
        data = store.git.read_file_at(base, path) if base else None
    except GitmemError:
        return None
    if data is None:
        return None
    try:
        document = parse_topic_file(data.decode("utf-8", "replace"))
    except GitmemError:
        return None
    for entry in document.entries:
        if entry.id == block.entry_id if block.entry_id else entry.title == block.title:
            return (entry.raw or "").rstrip("\r\n") + "\n"
    return None
