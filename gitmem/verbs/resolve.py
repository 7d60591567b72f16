"""`gitmem resolve TARGET [--ours | --theirs | --both]`: settle one conflict block, in one commit.

TARGET is an entry Id, or `PATH:LINE` as `gitmem conflicts` prints it (state.md and working.md
sections have no Id), or a PATH holding a single block.

- `--ours` keeps the version this machine wrote (the one whose marker line names this machine);
  when neither does, the first one, as git means "ours". `--theirs` keeps the other one.
- `--both` keeps every version: the first as it is, each further one as an entry of its own
  with the next free Id of its scope and layer (a state/working section gets its heading
  suffixed with the machine it came from instead).
- Without a flag, the person has edited the file: the verb checks that the markers of that
  entry are gone and that no other marker lines were left or invented, normalizes the file (Ids
  and dates for entries written in by hand) and commits it.

While a plain `git merge`/`git pull` (or a rebase, a cherry-pick) stopped on a conflict, the file
is settled and staged instead of committed: `git commit` (`git rebase --continue`) finishes it. Afterwards state/CONFLICT.md lists what is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.documents.settle import DocTarget, document_target, settle
from gitmem.errors import InvalidInputError, NotFoundError, ParseError
from gitmem.format import layers as L
from gitmem.format.conflicts import (
    ConflictBlock,
    HeldBlocks,
    Version,
    conflict_blocks,
    conflict_spans,
    parse_label,
)
from gitmem.format.markdown import conflict_marker_lines, parse_topic_file, render_entry
from gitmem.fsio import write_text_atomic
from gitmem.runtime.verbs import resolve_item
from gitmem.store.tree import conflicted_files, read_memory_text
from gitmem.sync.conflicts import list_conflicts, refresh_conflict_file, this_machine

if TYPE_CHECKING:
    from gitmem.store.store import Store

HOW = ("ours", "theirs", "both")
_TARGET_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")


@dataclass(frozen=True)
class ResolveResult:
    """What `gitmem resolve` did."""

    target: str
    path: str
    how: str  # ours | theirs | both | edit
    kept: str  # what was kept, in words
    new_ids: list[str]
    commit: str | None  # None while a plain git merge is in progress (the file is staged)
    left: int  # conflict blocks left in the store

    def as_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def resolve(store: Store, target: str, how: str | None = None) -> ResolveResult:
    """Settle the conflict block `target` names; one commit (or a staged file mid-merge)."""
    if how is not None and how not in HOW:
        raise InvalidInputError(f"unknown resolution {how!r} (use --ours, --theirs or --both)")
    merging = _git_operation_in_progress(store)
    document = document_target(store, target)
    if document is not None:
        return _resolve_document(store, target, document, how, merging)
    runtime_path = _runtime_record(store, target) if how is not None else None
    if how is not None and runtime_path is not None:
        return _resolve_runtime(store, target, runtime_path, how)
    with store.writing("resolve", absorb=False) as txn:
        path = _find_path(store, target)
        text = read_memory_text(store.root, path)  # ParseError naming a file that is no text
        head = _head_text(store, path)
        block = _find_block(text, target, path)
        if how is None:
            new_text, kept, new_ids = _edited(store, target, path, text, head, block)
        else:
            if block is None:
                raise NotFoundError(_not_in_conflict(target, path))
            new_text, kept, new_ids = _settled(store, path, text, block, how)
            new_text = _validated(store, path, new_text, head if head is not None else text)
        if merging:
            txn.message = ""
            write_text_atomic(store.path(path), new_text)
            store.git.stage_paths([path])
        else:
            if not store.write_file(txn, path, new_text, settling=True):
                txn.note(path)  # the person's edit is already on disk: commit it as it is
            txn.message = f"resolve: {target} ({kept})"
    commit = None if merging else store.git.head_oid()
    left = len(refresh_conflict_file(store))
    return ResolveResult(target, path, how or "edit", kept, new_ids, commit, left)


def resolve_with_text(store: Store, target: str, text: str) -> ResolveResult:
    """Settle block `target` with `text` in its place, in one commit: what deleting the marker
    lines around an edited version and running `gitmem resolve TARGET` commits. The text passes
    the secret gate and the same checks as a hand edit; a refusal writes nothing."""
    from gitmem.secrets.scan import refuse_secrets

    if not text.strip():
        raise InvalidInputError("the edited text is empty: keep a version, or forget the entry after")
    if conflict_marker_lines(text):
        raise InvalidInputError("the edited text still holds a conflict marker line")
    refuse_secrets(text, "the edited text", overridable=False)
    if _git_operation_in_progress(store) or document_target(store, target) is not None:
        raise InvalidInputError(f"{target} cannot be settled with an edited text here: use"
                                " `gitmem resolve` with --ours, --theirs or --both")
    with store.writing("resolve", absorb=False) as txn:
        path = _find_path(store, target)
        current = read_memory_text(store.root, path)
        block = _find_block(current, target, path)
        if block is None:
            raise NotFoundError(_not_in_conflict(target, path))
        newline = "\r\n" if "\r\n" in current else "\n"
        edited = _with_eol(newline.join(text.replace("\r\n", "\n").split("\n")).rstrip("\r\n"), newline)
        new_text = _validated(store, path, current[: block.start] + edited + current[block.end:],
                              current)
        store.write_file(txn, path, new_text, settling=True)
        txn.message = f"resolve: {target} (kept the edited file)"
    left = len(refresh_conflict_file(store))
    return ResolveResult(target, path, "edit", "kept the edited file", [], store.git.head_oid(), left)


def _resolve_document(store: Store, target: str, document: DocTarget, how: str | None,
                      merging: bool) -> ResolveResult:
    """A document's copy or record: settled by the documents tier (see documents/settle.py)."""
    if merging:
        raise InvalidInputError("a git merge is in progress in the store: finish it (`git commit`)"
                                f" or abort it, then run `gitmem resolve {target}` again")
    with store.writing("resolve", absorb=False) as txn:
        settled = settle(store, txn, document, how, lambda block: _pick(block, how or "both"))
        kept = _kept_words(settled.chosen, how or "edit") if settled.chosen else (
            "generated the front matter again" if how else "kept the edited copy")
        if settled.record_settled:
            kept += f"; {document.doc_id} settled"
        txn.message = f"resolve: {target} ({kept})"
    left = len(refresh_conflict_file(store))
    return ResolveResult(target, settled.path, how or "edit", kept, [], store.git.head_oid(), left)


def _runtime_record(store: Store, target: str) -> str | None:
    """The memories.json holding runtime record `target` in conflict, or None."""
    if not target.startswith("rt-"):
        return None
    return next((c.path for c in list_conflicts(store) if c.kind == "record" and c.ref == target
                 and c.path.endswith("/runtime/memories.json")), None)


def _resolve_runtime(store: Store, target: str, path: str, how: str) -> ResolveResult:
    """A runtime memory record in conflict: --ours or --theirs keeps that version of its text."""
    if how == "both":
        raise InvalidInputError(f"{target} is one runtime memory item: keep one version with --ours "
                                "or --theirs (then add the other text with `gitmem runtime add`)")
    resolve_item(store, target, how)
    left = len(refresh_conflict_file(store))
    return ResolveResult(target, path, how, f"kept {how}", [],
                         store.git.head_oid(), left)


def _git_operation_in_progress(store: Store) -> bool:
    """A plain git merge, rebase or cherry-pick stopped on a conflict: git finishes it, not us."""
    from gitmem.store.gitgate import rebase_in_progress

    gitdir = store.root / ".git"
    return rebase_in_progress(gitdir) or any((gitdir / name).exists()
                                             for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD"))


# -- finding the block ------------------------------------------------------------------------
def _find_path(store: Store, target: str) -> str:
    """The file `target` names, or the one holding (or having held) that entry's conflict."""
    located = _TARGET_LINE.match(target)
    for path in (located["path"] if located else None, target):
        if path and _is_store_file(path) and store.path(path).is_file():
            return path
    _refuse_records(store, target)
    if L.parse_id(target) is None:
        raise InvalidInputError(
            f"{target!r} is neither an entry Id nor PATH:LINE of a conflict (see `gitmem conflicts`)")
    candidates = list(dict.fromkeys([*conflicted_files(store.root), *store.catalog.locate(target),
                                     *store.git.dirty_paths()]))
    for path in candidates:
        if not L.is_memory_file(path):
            continue
        try:
            text = read_memory_text(store.root, path)
        except (FileNotFoundError, ParseError):
            continue  # gone, or not a regular UTF-8 file: no conflict block can be read in it
        if any(target in b.ids for b in conflict_blocks(text)):
            return path
    for path in candidates:  # an edit removed the markers: the conflict is in HEAD's version
        head = _head_text(store, path)
        if head is not None and any(target in b.ids for b in conflict_blocks(head)):
            return path
    raise NotFoundError(f"{target} is not in conflict (`gitmem conflicts` lists what is)")


def _refuse_records(store: Store, target: str) -> None:
    """A runtime record or document in conflict has no markers: name the verb that settles it."""
    if not target.startswith("rt-") and "-doc-" not in target:
        return
    for conflict in list_conflicts(store):
        if conflict.kind == "record" and conflict.ref == target:
            raise InvalidInputError(f"{target} is a record in conflict in {conflict.path}; settle it"
                                    f" with `{conflict.settle}`")


def _is_store_file(path: str) -> bool:
    """A memory file named inside the store (no way out of it through '..' or a leading '/')."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and "" not in parts and (
        L.classify_path(path).kind in ("topic", "single", "scope-index"))


def _find_block(text: str, target: str, path: str) -> ConflictBlock | None:
    """The block `target` names in `text` (None when there is none)."""
    blocks = conflict_blocks(text)
    located = _TARGET_LINE.match(target)
    if located and located["path"] == path:
        line = int(located["line"])
        for block in blocks:
            if block.line <= line <= block.line + block.text.count("\n"):
                return block
        return None
    if target == path:
        if len(blocks) > 1:
            lines = ", ".join(f"{path}:{b.line}" for b in blocks)
            raise InvalidInputError(f"{path} holds {len(blocks)} conflicts: name one ({lines})")
        return blocks[0] if blocks else None
    return next((b for b in blocks if target in b.ids), None)


def _head_text(store: Store, path: str) -> str | None:
    data = store.git.read_file_at("HEAD", path) if store.git.head_oid() else None
    return None if data is None else data.decode("utf-8", errors="replace")


def _not_in_conflict(target: str, path: str) -> str:
    return f"{target} is not in conflict in {path} (`gitmem conflicts` lists what is)"


# -- settling with a flag ---------------------------------------------------------------------
def _pick(block: ConflictBlock, how: str) -> list[Version]:
    """The versions to keep, in file order."""
    versions = list(block.versions)
    if how == "both" or len(versions) < 2:
        return versions
    here = this_machine()
    mine = [v for v in versions if v.label.split(" ", 1)[0] == here]
    ours = mine[0] if mine else versions[0]
    if how == "ours":
        return [ours]
    return [[v for v in versions if v is not ours][-1]]


def _version_words(version: Version) -> str:
    """'laptop-a's version (commit 7e6d5c4b3a21)', the same words on every machine."""
    parsed = parse_label(version.label)
    if parsed is None:
        return f"the version marked {version.label!r}" if version.label else "the unlabelled version"
    return f"{parsed[0]}'s version (commit {parsed[1]})"


def _kept_words(versions: list[Version], how: str) -> str:
    names = [_version_words(v) for v in versions]
    if how == "both":
        return "kept both versions: " + "; ".join(names)
    return f"kept {names[0]}"


def _settled(store: Store, path: str, text: str, block: ConflictBlock,
             how: str) -> tuple[str, str, list[str]]:
    """The file with the block replaced by the chosen version(s)."""
    chosen = _pick(block, how)
    newline = "\r\n" if "\r\n" in text else "\n"
    pieces = [_with_eol(chosen[0].text, newline)]
    new_ids: list[str] = []
    role = L.classify_path(path)
    taken = {i for v in chosen[:1] for i in v.ids}
    for version in chosen[1:]:
        pieces.append(_as_new(store, role, version, taken, new_ids, newline) if block.is_entry_block
                      else _with_eol(version.text, newline))
    replacement = newline.join(p.rstrip("\r\n") + newline for p in pieces)
    return text[: block.start] + replacement + text[block.end:], _kept_words(chosen, how), new_ids


def _with_eol(text: str, newline: str) -> str:
    return text if text.endswith(("\n", "\r")) else text + newline


def _as_new(store: Store, role: L.FileRole, version: Version, taken: set[str],
            new_ids: list[str], newline: str) -> str:
    """A further version kept as entries of their own: new Ids (or, for a section, a heading
    that names where it came from)."""
    topic = parse_topic_file(version.text)
    origin = version.label.split(" ", 1)[0] or "the other machine"
    out = []
    for entry in topic.entries:
        if role.kind == "single":
            entry = entry.with_body(entry.body, title=f"{entry.title} (from {origin})")
        elif entry.id is None or entry.id in taken:
            number = max(store.catalog.max_number(role.scope, role.layer),
                         *(_number(i) for i in new_ids), 0) + 1
            entry = entry.with_fields(Id=L.format_id(role.scope, role.layer, number))
            new_ids.append(entry.id or "")
        taken.add(entry.id or "")
        out.append(render_entry(entry, newline))
    return newline.join(p.rstrip("\r\n") + newline for p in out)


def _number(entry_id: str) -> int:
    parsed = L.parse_id(entry_id)
    return parsed.number if parsed else 0


# -- settling by hand ---------------------------------------------------------------------------
def _edited(store: Store, target: str, path: str, text: str, head: str | None,
            block: ConflictBlock | None) -> tuple[str, str, list[str]]:
    """The person's edit of the file, checked: that entry's markers gone, nothing else broken."""
    if block is not None:
        raise InvalidInputError(
            f"the markers of {target} are still in {path}:{block.line}: edit the file (keep what"
            " should stay, delete the three marker lines) and run `gitmem resolve"
            f" {target}` again, or use --ours, --theirs or --both")
    had = conflict_blocks(head) if head is not None else []
    if head is None or not had or (L.parse_id(target) is not None
                                   and not any(target in b.ids for b in had)):
        raise NotFoundError(_not_in_conflict(target, path))
    return _validated(store, path, text, head), "kept the edited file", []


def _validated(store: Store, path: str, text: str, before: str) -> str:
    """The text to commit: no marker line but those of blocks already in `before`, a valid
    memory file, normalized (Ids, dates) once no block is left in it."""
    spans = conflict_spans(text)
    for block in conflict_blocks(text):
        if block.text not in before:
            raise InvalidInputError(f"{path}:{block.line}: a conflict block that was not in the"
                                    " file before; finish editing and run `gitmem resolve` again")
    for line in conflict_marker_lines(text):
        offset = sum(len(x) for x in text.splitlines(keepends=True)[: line - 1])
        if not any(start <= offset < end for start, end in spans):
            raise InvalidInputError(f"{path}:{line}: a conflict marker line is left; delete it"
                                    " and run `gitmem resolve` again")
    held = HeldBlocks()
    plain = held.hold(text)
    [outcome] = store.normalize_texts({path: plain}, fix=not held.saved and not spans)
    blocking = [p for p in outcome.blocking if "conflict marker" not in p.reason]
    if blocking:
        raise InvalidInputError(f"{blocking[0]}; fix it and run `gitmem resolve` again")
    return outcome.text if not held.saved and not spans else text
