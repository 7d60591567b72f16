"""`gitmem doc add | update | show | list | archive | restore`.

Documents live per scope, like the rest of memory: `global/documents/` for the whole store and
`workspaces/<key>/documents/` for one project (ids `<scope>-doc-NNNN`). Each change is one write
transaction; everything is checked before the first file is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.documents.access import access_stamp, load_access, record_access
from gitmem.documents.model import (
    DocIndex,
    DocRecord,
    body_digest,
    document_slug,
    next_id,
    parse_doc_id,
    timestamp,
    unique_filename,
)
from gitmem.documents.repair import committed_body, readable_index, restore_copies, writable_index
from gitmem.documents.shelf import (
    DocLimits,
    copy_path,
    copy_size,
    doc_scopes,
    limits_of,
    make_room,
    place,
    read_body,
    read_index,
    with_hand_edit,
    write_index,
)
from gitmem.documents.sources import check_source_paths
from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.secrets.scan import refuse_secrets

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


@dataclass
class DocResult:
    """What one document change did."""

    action: str  # added | updated | unchanged | archived | restored
    record: DocRecord
    path: str
    changed: bool = True
    archived: list[tuple[DocRecord, str]] = field(default_factory=list)  # moved to make room
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "id": self.record.id, "path": self.path,
                "revision": self.record.revision, "status": self.record.status,
                "changed": self.changed, "notes": self.notes,
                "archived": [{"id": r.id, "title": r.title, "path": p} for r, p in self.archived]}

    def text(self) -> str:
        lines = list(self.notes)
        lines.append(f"{self.action} {self.record.id} (revision {self.record.revision}): {self.path}")
        if self.archived:
            lines.append(f"the active documents were over their cap: {len(self.archived)} archived "
                         "(least recently accessed first; still readable with `gitmem doc show ID`):")
            lines += [f"  {r.id} {r.title} -> {p}" for r, p in self.archived]
        return "\n".join(lines)


# -- checks -------------------------------------------------------------------------------------
def _one_line(text: str, what: str, limit: int = 300) -> str:
    cleaned = " ".join(text.split())
    if len(cleaned) > limit:
        raise InvalidInputError(f"{what} is {len(cleaned)} characters; the limit is {limit}")
    return cleaned


def _check_body(body: str, limits: DocLimits) -> str:
    size = len(body.encode("utf-8"))
    if not body.strip():
        raise InvalidInputError("the document is empty; nothing changed")
    if size > limits.body:
        raise InvalidInputError(f"refused: the document is {size} bytes; one document holds at most "
                                f"{limits.body} bytes{_in_units(limits.body)}; nothing changed")
    return body


def _in_units(size: int) -> str:
    """' (2 MiB)' for a whole number of MiB or KiB, else nothing."""
    for unit, name in ((1024 * 1024, "MiB"), (1024, "KiB")):
        if size % unit == 0:
            return f" ({size // unit} {name})"
    return ""


def _scope_key(store: Store, scope: str | None, workspace: str | None) -> str:
    """`global`, the named/current workspace, or (no choice) the current workspace if any."""
    if scope is not None or workspace:
        return store.scope_for(scope or "workspace", workspace)
    try:
        return store.resolve_workspace()
    except InvalidInputError:
        return L.GLOBAL


def _locate(store: Store, doc_id: str, *, writing: bool = True) -> tuple[str, DocIndex, DocRecord]:
    """(scope, index, record) of a document; for a write the index must parse (else refused),
    for a read the last good version from git stands in (with a note)."""
    parsed = parse_doc_id(doc_id)
    if parsed is None:
        raise InvalidInputError(f"malformed document id {doc_id!r} (expected <scope>-doc-NNNN)")
    scope = parsed[0]
    if scope != L.GLOBAL and not store.path(L.scope_dir(scope)).is_dir():
        raise NotFoundError(f"no document {doc_id}")
    index = writable_index(store, scope) if writing else readable_index(store, scope)
    record = index.find(doc_id.strip())
    if record is None:
        raise NotFoundError(f"no document {doc_id}")
    return scope, index, record


def _prepare(store: Store, scope: str) -> list[str]:
    """Before a write takes the store (and commits any hand edit): refuse an index that does not
    parse, and put back copies deleted or moved by hand, so that no loss is ever committed."""
    store.require()
    return restore_copies(store, scope, writable_index(store, scope))


def _checked_revision(record: DocRecord, revision: int | None) -> None:
    if revision is not None and revision != record.revision:
        raise InvalidInputError(
            f"refused: {record.id} is at revision {record.revision}, not {revision} (it changed "
            "since you read it); read it again (`gitmem doc show`) and retry; nothing changed")


def _now(store: Store) -> str:
    return timestamp(store.now())


def _replace_record(index: DocIndex, record: DocRecord) -> None:
    index.documents = [record if d.id == record.id else d for d in index.documents]


def _moved(scope: str, records: list[DocRecord]) -> list[tuple[DocRecord, str]]:
    return [(r, copy_path(scope, r)) for r in records]


def _finish(store: Store, txn: WriteTxn, scope: str, index: DocIndex, message: str) -> None:
    if scope != L.GLOBAL:
        store.register_workspace(txn, scope)
    write_index(store, txn, scope, index)
    txn.message = message


# -- writes -------------------------------------------------------------------------------------
def add(store: Store, body: str, *, title: str, description: str = "",
        source_paths: list[str] | tuple[str, ...] = (), scope: str | None = None,
        workspace: str | None = None, session: str = "", cwd: Path | None = None,
        allow_secret: bool = False) -> DocResult:
    """Add a document; when the active ones would pass their cap, the least recently accessed
    are archived first (and reported). A likely secret is refused unless `allow_secret`."""
    limits = limits_of(store)
    body = _check_body(body, limits)
    refuse_secrets(f"{title}\n{description}\n{body}", "document (title, description, text)",
                   allow=allow_secret)
    heading = _one_line(title, "the title", 200)
    if not heading:
        raise InvalidInputError("--title must not be empty")
    about = _one_line(description, "the description")
    # Paths and the session are names, committed as given: a token there is refused always.
    refuse_secrets("\n".join([*source_paths, session]), "source path or session", overridable=False)
    sources = check_source_paths(list(source_paths), cwd or store.cwd, store.root)
    key = _scope_key(store, scope, workspace)
    slug = document_slug(heading)
    restored = _prepare(store, key)
    with store.writing("doc add", allow_secret=allow_secret) as txn:
        index = read_index(store, key)
        now = _now(store)
        digest, size = body_digest(body)
        record = DocRecord(next_id(index, key), heading, unique_filename(slug, index), about,
                           "active", sources, _one_line(session, "the session", 200), now, now, 1,
                           digest, size)
        moved = make_room(store, txn, key, index, copy_size(record, body), limits, None, now)
        place(store, txn, key, None, record, body)
        index.documents.append(record)
        _finish(store, txn, key, index, f"doc add: {record.id} ({record.title})"
                + "".join(f"\n- archived {r.id} to make room" for r in moved))
        return DocResult("added", record, copy_path(key, record), archived=_moved(key, moved),
                         notes=restored)


def update(store: Store, doc_id: str, body: str, *, revision: int | None = None,
           allow_secret: bool = False) -> DocResult:
    """Replace a document's text; `revision` (the one the caller read) must still be current."""
    limits = limits_of(store)
    body = _check_body(body, limits)
    refuse_secrets(body, "document text", allow=allow_secret)
    scope = _locate(store, doc_id)[0]
    restored = _prepare(store, scope)
    # Checked before the write starts too: a refused update must not even commit the hand edit.
    _checked_revision(with_hand_edit(store, scope, _locate(store, doc_id)[2])[0], revision)
    with store.writing("doc update", allow_secret=allow_secret) as txn:
        scope, index, stored = _locate(store, doc_id)
        record, _old_body = with_hand_edit(store, scope, stored)
        notes = restored + ([f"{record.id}: its copy was edited by hand; recorded as revision "
                             f"{record.revision}"] if record.revision != stored.revision else [])
        _checked_revision(record, revision)
        digest, size = body_digest(body)
        if digest == record.sha256 and record.conflict is None:
            if record is not stored:
                place(store, txn, scope, stored, record, body)
                _replace_record(index, record)
                _finish(store, txn, scope, index, f"doc update: {record.id} (hand edit)")
            return DocResult("unchanged", record, copy_path(scope, record), record is not stored,
                             notes=notes + ["the text is the same; nothing else changed"])
        now = _now(store)
        extra = {k: v for k, v in record.extra.items() if k != "conflict"}
        new = replace(record, revision=record.revision + 1, sha256=digest, size=size, updated_at=now,
                      extra=extra)
        moved = []
        if new.status == "active":
            moved = make_room(store, txn, scope, index, copy_size(new, body), limits, new.id, now)
        place(store, txn, scope, stored, new, body)
        _replace_record(index, new)
        _finish(store, txn, scope, index, f"doc update: {new.id} (revision {new.revision})"
                + "".join(f"\n- archived {r.id} to make room" for r in moved))
        return DocResult("updated", new, copy_path(scope, new), archived=_moved(scope, moved), notes=notes)


def _set_status(store: Store, doc_id: str, status: str) -> DocResult:
    verb = "archive" if status == "archived" else "restore"
    limits = limits_of(store)
    restored = _prepare(store, _locate(store, doc_id)[0])
    with store.writing(f"doc {verb}") as txn:
        scope, index, stored = _locate(store, doc_id)
        record, body = with_hand_edit(store, scope, stored)
        if body is None:
            raise NotFoundError(f"{copy_path(scope, stored)} is missing; restore it with git first")
        if record.status == status and record is stored:
            return DocResult("unchanged", record, copy_path(scope, record), False,
                             notes=[*restored, f"{record.id} is already {status}"])
        new = replace(record, status=status)
        moved = []
        if status == "active":
            moved = make_room(store, txn, scope, index, copy_size(new, body), limits, new.id, _now(store))
        place(store, txn, scope, stored, new, body)
        _replace_record(index, new)
        _finish(store, txn, scope, index, f"doc {verb}: {new.id} ({new.title})")
        return DocResult(f"{status}" if status == "archived" else "restored", new,
                         copy_path(scope, new), archived=_moved(scope, moved), notes=restored)


def archive(store: Store, doc_id: str) -> DocResult:
    """Move a document to archived/: out of default search and the card, still readable."""
    return _set_status(store, doc_id, "archived")


def restore(store: Store, doc_id: str) -> DocResult:
    """Bring an archived document back to active/ (making room if needed)."""
    return _set_status(store, doc_id, "active")


# -- reads --------------------------------------------------------------------------------------
def _view(store: Store, scope: str, record: DocRecord, seen: dict[str, str]) -> dict[str, Any]:
    return {**record.as_json(), "scope": scope, "path": copy_path(scope, record),
            "lastAccessedAt": seen.get(record.id, "")}


def show(store: Store, doc_id: str) -> dict[str, Any]:
    """A document with its text (as the copy holds it now); counts as an access.

    `revision` is the one `doc update --revision` checks against: a hand edit of the copy not
    yet recorded counts as the next revision (`editedByHand` says so)."""
    store.require()
    scope, _index, stored = _locate(store, doc_id, writing=False)
    record, body = with_hand_edit(store, scope, stored)
    found = read_body(store, scope, record) if body is not None else None
    if found is None:
        found = committed_body(store, scope, stored)
        if found is None:
            raise NotFoundError(f"{copy_path(scope, stored)} is missing and git holds no copy of it")
        store.notes.append(f"{copy_path(scope, stored)} is missing (deleted by hand?): showing the "
                           "text git last held; the next `gitmem doc` write puts it back")
    body, line = found
    record_access(store.root, [record.id], access_stamp(store.now()))
    view = _view(store, scope, record, load_access(store.root))
    view.update(body=body, line=line, editedByHand=record is not stored)
    return view


def list_documents(store: Store, *, include_all: bool = False, scope: str | None = None,
                   workspace: str | None = None) -> list[dict[str, Any]]:
    """Active documents (with archived ones when `include_all`), newest update first."""
    store.require()
    if scope is not None or workspace:
        scopes = [store.scope_for(scope or "workspace", workspace)]
    else:
        scopes = doc_scopes(store)
    seen = load_access(store.root)
    out = []
    for key in scopes:
        records = readable_index(store, key).documents  # a broken index: git's last good one
        for record in records:
            if include_all or record.status == "active":
                out.append(_view(store, key, record, seen))
    out.sort(key=lambda v: str(v["updatedAt"]), reverse=True)
    return sorted(out, key=lambda v: v["status"] != "active")  # stable: active first
