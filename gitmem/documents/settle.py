"""Settling a document two machines changed differently (`gitmem resolve` on what `gitmem
conflicts` lists for documents: `<copy>:LINE`, the copy's path, the document id, or
`<scope>/documents/index.json:LINE`).

A merge leaves the copy's text with conflict blocks (its generated front matter too) and the
index record with the other machine's version under `"conflict"`. Settling a block of the body
keeps the chosen version(s) of its lines; a block of the front matter is settled by generating
the front matter again. Once no block is left in the body, the record is settled too: the body
becomes the next revision (past both machines' revisions) and `"conflict"` goes. Naming the
document (its id or the index) settles every block of its copy at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gitmem.documents.model import (
    DocIndex,
    DocRecord,
    body_digest,
    parse_doc_id,
    render_copy,
    timestamp,
)
from gitmem.documents.repair import committed_body, writable_index
from gitmem.documents.shelf import copy_path, index_path, write_index
from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.format.conflicts import ConflictBlock, Version, conflict_blocks
from gitmem.format.document import DOCUMENT_COPY_RE, split_copy
from gitmem.store.tree import read_memory_text

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn

Chooser = Callable[[ConflictBlock], list[Version]]  # the versions of a block to keep, in order
_LOCATED = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+))?$")
_INDEX_RE = re.compile(r"^(?P<scope>global|workspaces/[a-z0-9][a-z0-9-]{0,63})/documents/index\.json$")


@dataclass(frozen=True)
class DocTarget:
    """The document a resolve target names, and the line of the copy it names (None: all)."""

    scope: str
    doc_id: str
    path: str  # what the target named: the copy or index.json
    line: int | None


@dataclass(frozen=True)
class Settled:
    path: str  # the copy
    chosen: list[Version]  # what was kept of the first block settled (empty: none was left)
    record_settled: bool
    left: int  # blocks still in the copy's body


def document_target(store: Store, target: str) -> DocTarget | None:
    """The document `target` names, or None when it names no document."""
    parsed = parse_doc_id(target)
    if parsed is not None:
        return DocTarget(parsed[0], target.strip(), index_path(parsed[0]), None)
    located = _LOCATED.match(target.strip())
    if located is None:
        return None
    path, line = located["path"], int(located["line"]) if located["line"] else None
    scope = _scope_of(path)
    if DOCUMENT_COPY_RE.match(path) and scope:
        index = writable_index(store, scope)
        record = next((r for r in index.documents if copy_path(scope, r) == path), None)
        if record is None:
            raise NotFoundError(f"{path} is no document's copy (`gitmem doc list --all` lists them)")
        return DocTarget(scope, record.id, path, line)
    if _INDEX_RE.match(path) and scope:
        return DocTarget(scope, _record_at(writable_index(store, scope), path, line), path, None)
    return None


def _scope_of(path: str) -> str:
    parts = path.split("/")
    if parts[0] == L.GLOBAL:
        return L.GLOBAL
    return parts[1] if len(parts) > 2 and parts[0] == "workspaces" else ""


def _record_at(index: DocIndex, path: str, line: int | None) -> str:
    """The id of the record in conflict that `path:line` names (the only one, when line is 0)."""
    conflicted = [r.id for r in index.documents if r.conflict is not None]
    if not conflicted:
        raise NotFoundError(f"no document is in conflict in {path} (`gitmem conflicts` lists what is)")
    if len(conflicted) > 1:
        raise InvalidInputError(f"{path} holds {len(conflicted)} documents in conflict: name one "
                                f"({', '.join(conflicted)})")
    del line  # the listing prints line 0 for a record: the record, not a line, is what counts
    return conflicted[0]


def settle(store: Store, txn: WriteTxn, target: DocTarget, how: str | None,
           choose: Chooser) -> Settled:
    """Inside the caller's write: settle the named block (or every block) of the document's copy
    with `choose` (the versions `how` keeps: ours, theirs, both); `how` None means the person
    edited the copy and removed the markers."""
    index = writable_index(store, target.scope)
    record = index.find(target.doc_id)
    if record is None:
        raise NotFoundError(f"no document {target.doc_id}")
    path = copy_path(target.scope, record)
    try:
        text = read_memory_text(store.root, path)
        _values, body, first = split_copy(text)
    except FileNotFoundError:
        found = committed_body(store, target.scope, record)
        if found is None:
            raise NotFoundError(f"{path} is missing and git holds no copy of it") from None
        (body, first), text = found, ""
    in_front = any(b.line < first for b in conflict_blocks(text))
    blocks = conflict_blocks(body)
    if how is None:
        if blocks:
            raise InvalidInputError(
                f"the markers are still in {path}:{blocks[0].line + first - 1}: edit the copy (keep "
                "what should stay, delete the marker lines) and run `gitmem resolve` again, or use "
                "--ours, --theirs or --both")
        if record.conflict is None and target.line is None:
            raise NotFoundError(f"{target.doc_id} is not in conflict (`gitmem conflicts` lists what is)")
        chosen: list[Version] = []
    else:
        body, chosen = _settle_blocks(body, blocks, first, target, choose,
                                      record.conflict is not None or in_front)
    left = len(conflict_blocks(body))
    new = _settled_record(store, record, body, how) if left == 0 else record
    store.write_file(txn, path, render_copy(new, body))
    if new is not record:
        index.documents = [new if d.id == new.id else d for d in index.documents]
        write_index(store, txn, target.scope, index)
    return Settled(path, chosen, new is not record, left)


def _settle_blocks(body: str, blocks: list[ConflictBlock], first: int, target: DocTarget,
                   choose: Chooser, conflicted: bool) -> tuple[str, list[Version]]:
    """The body with the named block (every block, when none is named) replaced by its chosen
    versions. A line in the front matter names a block that generating it again settles."""
    if target.line is not None and target.line < first:
        if not conflicted:
            raise NotFoundError(f"{target.path}:{target.line} is not in conflict (`gitmem "
                                "conflicts` lists what is)")
        return body, []  # the front matter is generated again below
    if target.line is not None:
        named = [b for b in blocks
                 if b.line + first - 1 <= target.line <= b.line + first - 1 + b.text.count("\n")]
        if not named:
            raise NotFoundError(f"{target.path}:{target.line} is not in conflict (`gitmem conflicts`"
                                " lists what is)")
        blocks = named
    elif not blocks and not conflicted:
        raise NotFoundError(f"{target.doc_id} is not in conflict (`gitmem conflicts` lists what is)")
    chosen: list[Version] = []
    for block in sorted(blocks, key=lambda b: b.start, reverse=True):
        versions = choose(block)
        chosen = versions
        newline = "\r\n" if "\r\n" in block.text else "\n"
        kept = "".join(v.text if v.text.endswith("\n") or not v.text else v.text + newline
                       for v in versions)
        body = body[:block.start] + kept + body[block.end:]
    return body, chosen


def _settled_record(store: Store, record: DocRecord, body: str, how: str | None) -> DocRecord:
    """The record once its copy holds no conflict: the next revision past both machines'."""
    other = record.conflict or {}
    found = other.get("theirs")
    theirs: dict[str, Any] = found if isinstance(found, dict) else {}
    their_revision = theirs.get("revision")
    revision = max(record.revision, their_revision if isinstance(their_revision, int) else 0) + 1
    digest, size = body_digest(body)
    extra = {k: v for k, v in record.extra.items() if k != "conflict"}
    new = replace(record, revision=revision, sha256=digest, size=size,
                  updated_at=timestamp(store.now()), extra=extra)
    if how == "theirs" and theirs:  # the other machine's title, description and sources too
        new = replace(new, title=str(theirs.get("title") or new.title),
                      description=str(theirs.get("description") or ""),
                      source_paths=tuple(str(p) for p in theirs.get("sourcePaths") or ()))
    return new
