"""The one import engine every source goes through: provenance, scope and layer, the secret
gate, updates of what an earlier import made, links, and one commit (docs/decisions/0032).

- Every entry records `**Source:** import:<tool>:<path>#<anchor>` and `**Import-hash:**`, the
  digest of its title and text as imported. A later import finds its entries by Source:
  unchanged source -> nothing; changed source and an entry nobody edited (its text still hashes
  to Import-hash) -> updated in place, same Id; changed source and an entry a person edited ->
  the person's text is kept and the import reports it (`kept-edit`), nothing is overwritten.
- Text a live entry of the same scope and layer already holds is not written twice (`duplicate`).
- A source file holding a likely secret refuses the whole import, naming file and line, unless
  --allow-secret; a file a source cannot read refuses it too. Either way nothing is written.
- The source is read once: a first pass checks every file, chooses every Id, decides every
  action and learns every name a link may use, leaving its plan in a spool on disk; the second
  replays the plan and writes, each entry with its links resolved. A dry run is the first pass
  alone. Everything one import writes is one commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import IMPORTANCE_VALUES, Entry, normalize_text, text_hash
from gitmem.format.freshness import guess_volatility
from gitmem.format.references import RELATION_TYPES, add_relation
from gitmem.format.safetext import clean_text, safe_text
from gitmem.format.wording import guess_layer
from gitmem.imports.hot import HotWriter
from gitmem.imports.plan import Known, PlanIndex
from gitmem.imports.spool import FileDone, Hot, Relink, Spool, Write
from gitmem.imports.writer import Pending, TopicWriter
from gitmem.notes.model import Action, ImportReport, Note, SourceFile
from gitmem.secrets.scan import find_secrets, refusal
from gitmem.store.paths import sanitize_workspace_key, topic_slug
from gitmem.store.store import Store, WriteTxn
from gitmem.verbs.base import heading_for

WAY_OUT = "pass --allow-secret to import it anyway"
TOPIC_LAYERS = ("semantic", "episodic", "procedural", "learnings", "decisions", "codebase")
Progress = Callable[[int], None]


@dataclass(frozen=True)
class ImportOptions:
    tool: str
    dry_run: bool = False
    scope: str | None = None  # forced: global | workspace
    layer: str | None = None  # forced layer
    allow_secret: bool = False


def project_workspace(store: Store, project: Path | None) -> str:
    """The project's workspace key; a folder outside any repository is named by itself."""
    try:
        return store.resolve_workspace(None, cwd=project)
    except InvalidInputError:
        if project is None:
            raise
        return sanitize_workspace_key(project.resolve().name)


def import_digest(title: str, body: str) -> str:
    """What Import-hash records: the entry's title and text, whitespace-insensitive."""
    return text_hash(title + "\n" + body)[:16]


class Importer:
    """One pass (see the module text): over the source files a reader yields (a dry run, or the
    first pass when it has a spool to leave its plan in), or over that plan (the writing pass).
    What a pass must remember of every note (names, known entries, texts) is in `plan`, on disk."""

    def __init__(self, store: Store, options: ImportOptions, txn: WriteTxn | None, plan: PlanIndex,
                 *, final: bool = False, spool: Spool | None = None) -> None:
        self.store, self.options, self.txn, self.spool, self.plan = store, options, txn, spool, plan
        self.report = ImportReport(options.tool, options.dry_run)
        self.prefix = f"import:{options.tool}:"
        self.final = final  # the writing pass: every name is known
        self.writer = TopicWriter(store, txn)
        if not final:
            self._known_entries()
        self.taken: dict[tuple[str, str], int] = {}
        self.filled: set[tuple[str, str]] | None = None  # the scope+layers the store has entries in
        self.scopes: dict[Path | None, str] = {}
        self.slugs: dict[str, str] = {}
        # The first pass checks the hot items (budgets, sizes) but the writing pass adds them, in
        # order, so its own account is the one reported.
        hot_report = ImportReport(options.tool, options.dry_run) if spool is not None else self.report
        self.hot = HotWriter(store, txn, self.prefix, hot_report)
        self.today = store.today().isoformat()

    # -- what earlier imports made -----------------------------------------------------------
    def _known_entries(self) -> None:
        """Every entry an earlier import of this tool made, by its Source value, into the plan."""
        for relpath in self.store.all_topic_files():
            try:
                if self.prefix not in self.store.path(relpath).read_text(encoding="utf-8"):
                    continue
            except (OSError, UnicodeDecodeError):
                continue
            document = self.writer.document(relpath)
            for entry in document.entries if document else []:
                source = entry.get("Source")
                if source.startswith(self.prefix) and entry.id:
                    self.plan.set_known(source, Known(relpath, entry.id, entry.get("Import-hash"),
                                                      import_digest(entry.title, entry.body),
                                                      entry.is_forgotten, entry.get("Related")))
                    self._name(entry.title, entry.id)

    def _name(self, name: str, entry_id: str) -> None:
        self.plan.add_name(normalize_text(name), entry_id)

    # -- one source file ---------------------------------------------------------------------
    def add_file(self, source: SourceFile) -> None:
        self.report.files += 1
        if self.spool is not None:
            self.spool.put(FileDone())
        if not self.final and not self.options.allow_secret:
            found = find_secrets(source.text, path=source.path)
            if found:
                raise refusal(found, "", WAY_OUT)
        for line, why in source.skipped:
            self._act("skipped", None, "", f"{source.path}:{line}", why)
        for note in source.notes:
            try:
                self._plan(source, note)
            except InvalidInputError as error:  # a topic or layer it cannot take: say whose
                raise InvalidInputError(f"{source.path}:{note.line}: {error}") from None
        if source.items:
            scope = self._scope_of(source, "global")
            self.hot.add(source, scope)
            if self.spool is not None:
                self.spool.put(Hot(source, scope))

    def _scope_of(self, source: SourceFile, wanted: str) -> str:
        if (self.options.scope or wanted) == "global":
            return L.GLOBAL
        project = None if self.store.workspace_flag else source.project  # --workspace wins
        if project not in self.scopes:
            self.scopes[project] = self._workspace(project)
        return self.scopes[project]

    def _workspace(self, project: Path | None) -> str:
        return project_workspace(self.store, project)

    def _layer_of(self, note: Note, scope: str) -> str:
        layer = self.options.layer or note.layer or guess_layer(f"{note.title}\n{note.body}")
        if layer not in TOPIC_LAYERS:
            raise InvalidInputError(f"cannot import into layer {layer!r} (use {'|'.join(TOPIC_LAYERS)})")
        if scope == L.GLOBAL and not L.layer_spec(layer).global_ok:
            if self.options.layer:
                raise InvalidInputError(f"layer {layer} lives in a workspace; import with --scope workspace")
            layer = "semantic"
        return layer

    def _plan(self, source: SourceFile, note: Note) -> None:
        where = f"{source.path}:{note.line}"
        scope = self._scope_of(source, note.scope)
        layer = self._layer_of(note, scope)
        body = safe_text(clean_text(note.body)).strip("\n")
        title = heading_for(note.body or note.title, note.title or None)
        origin = self.plan.claim(" ".join(f"{self.prefix}{source.path}#{note.anchor}".split()))
        digest = import_digest(title, body)
        found = self.plan.known(origin)
        if found is not None:
            self._plan_update(found, note, title, body, digest, where)
            return
        relpath = L.topic_path(scope, layer, self._slug(note.topic))
        text_digest = text_hash(body or title)
        hit = self._duplicate(scope, layer, text_digest)
        if hit:
            self._act("duplicate", hit, relpath, where, title)
            self._names(note, hit, where)
            return
        new_id = self._next_id(scope, layer)
        importance = note.fields.get("Importance", "normal")
        fields = {"Id": new_id, "Importance": importance if importance in IMPORTANCE_VALUES else "normal",
                  "Volatility": guess_volatility(body), "Created": note.fields.get("Created", self.today),
                  "Verified": self.today,
                  **{k: v for k, v in note.fields.items() if k not in ("Importance", "Created")},
                  "Source": origin, "Import-hash": digest}
        self.plan.set_seen(scope, layer, text_digest, new_id)
        self.plan.set_known(origin, Known(relpath, new_id, digest, digest, False, "", fresh=True))
        self._act("added", new_id, relpath, where, title)
        self._names(note, new_id, where)
        self._write(relpath, Pending(note.topic, Entry(title=title, body=body, fields=fields), None),
                    note, where, changed=True)

    def _plan_update(self, found: Known, note: Note, title: str, body: str, digest: str,
                     where: str) -> None:
        relpath, entry_id = found.relpath, found.id
        if found.fresh:
            return
        self._names(note, entry_id, where)
        if found.forgotten:
            self._act("forgotten", entry_id, relpath, where, title)
            return
        if found.recorded == digest or found.current != found.recorded:
            self._act("unchanged" if found.recorded == digest else "kept-edit", entry_id, relpath, where, title)
            if self.spool is not None and note.links:
                self.spool.put(Relink(relpath, note.topic, entry_id, found.related, note.links, where))
            return
        document = self.writer.document(relpath)
        index = document.find(entry_id) if document else None
        if document is None or index is None:
            return  # moved or deleted by a person since: not brought back
        self._act("updated", entry_id, relpath, where, title)
        changed = document.entries[index].with_body(body, title).with_fields(Import_hash=digest,
                                                                             Verified=self.today)
        self._write(relpath, Pending(note.topic, changed, entry_id), note, where, changed=True)

    def _write(self, relpath: str, pending: Pending, note: Note, where: str, *, changed: bool) -> None:
        """Leave an entry for the writing pass (a dry run writes nothing)."""
        if self.spool is not None and (changed or note.links):
            self.spool.put(Write(relpath, pending, note.links, where, changed))

    def _slug(self, topic: str) -> str:
        slug = self.slugs.get(topic)
        if slug is None:
            slug = self.slugs[topic] = topic_slug(topic)
        return slug

    def _duplicate(self, scope: str, layer: str, digest: str) -> str | None:
        """A live entry of this scope and layer whose text hashes to `digest` (text_hash)."""
        if self.filled is None:  # nothing is written before the writing pass: ask once
            counts = self.store.catalog.counts()
            self.filled = {key for key, (_files, entries) in counts.items() if entries}
        if (scope, layer) not in self.filled:
            return self.plan.seen(scope, layer, digest)
        for hit in self.store.catalog.find_text(scope, layer, digest):
            if hit.status == "live" and hit.id:
                return hit.id
        return self.plan.seen(scope, layer, digest)

    def _next_id(self, scope: str, layer: str) -> str:
        key = (scope, layer)
        if key not in self.taken:  # nothing is written before the writing pass: ask once
            self.taken[key] = self.store.catalog.max_number(scope, layer)
        number = self.taken[key] + 1
        self.taken[key] = number
        return L.format_id(scope, layer, number)

    def _act(self, action: str, entry_id: str | None, relpath: str, where: str, title: str) -> None:
        if self.spool is not None:
            self.spool.put(Action(action, entry_id, relpath, where, title))
        else:
            self.report.actions.append(Action(action, entry_id, relpath, where, title))

    # -- links -------------------------------------------------------------------------------
    def _names(self, note: Note, entry_id: str, where: str) -> None:
        for name in (note.title, *note.aliases):
            self._name(name, entry_id)
        if not self.final and self.spool is None:  # a dry run reports its links from the plan
            for kind, name in note.links:
                self.plan.add_link(entry_id, kind, name, where)

    def _linked(self, entry: Entry, links: tuple[tuple[str, str], ...], where: str, relpath: str) -> Entry:
        """The entry with the links its note records (writing pass: every name is known)."""
        if not self.final or not links or entry.id is None:
            return entry
        value = self._related(entry.id, entry.get("Related"), links, where, relpath)
        return entry if value == entry.get("Related") else entry.with_fields(Related=value)

    def _related(self, entry_id: str, value: str, links: tuple[tuple[str, str], ...], where: str,
                 relpath: str) -> str:
        """An entry's Related value with its note's links added (each reported)."""
        for kind, name in links:
            kind = kind if kind in RELATION_TYPES else "semantic"
            target = self.plan.name(normalize_text(name))
            if target is None:
                self._act("unlinked", entry_id, relpath, where, f"{kind}: {name} (no such note)")
            elif target != entry_id:
                added = add_relation(value, kind, target)
                if added is not None:
                    value = added
                    self._act("linked", entry_id, relpath, f"{kind}:{target}", "")
        return value

    def planned_links(self) -> None:
        """The first pass's account of the links (what a dry run reports)."""
        seen: set[tuple[str, str, str]] = set()
        for entry_id, kind, name, where in self.plan.links():
            kind = kind if kind in RELATION_TYPES else "semantic"
            target = self.plan.name(normalize_text(name))
            if target is None:
                self._act("unlinked", entry_id, "", where, f"{kind}: {name} (no such note)")
            elif target != entry_id and (entry_id, kind, target) not in seen:
                seen.add((entry_id, kind, target))
                self._act("linked", entry_id, "", f"{kind}:{target}", "")

    def run(self, files: Iterable[SourceFile], progress: Progress | None) -> None:
        for source in files:
            self.add_file(source)
            if progress is not None:
                progress(self.report.files)

    def replay(self, spool: Spool) -> None:
        """The writing pass: the first pass's plan, in its order, each entry with its links."""
        for record in spool.replay():
            if isinstance(record, Action):
                self.report.actions.append(record)
            elif isinstance(record, FileDone):
                self.report.files += 1
            elif isinstance(record, Hot):
                self.hot.add(record.source, record.scope)
            elif isinstance(record, Relink):
                self._replay_relink(record)
            else:
                self._replay_write(record)
        self.writer.flush()

    def _replay_relink(self, record: Relink) -> None:
        value = self._related(record.id, record.related, record.links, record.where, record.relpath)
        if value == record.related:
            return
        document = self.writer.document(record.relpath)
        index = document.find(record.id) if document else None
        if document is not None and index is not None:
            entry = document.entries[index].with_fields(Related=value)
            self.writer.add(record.relpath, Pending(record.topic, entry, record.id))

    def _replay_write(self, record: Write) -> None:
        pending = record.pending
        entry = self._linked(pending.entry, record.links, record.where, record.relpath)
        if record.changed or entry is not pending.entry:
            self.writer.add(record.relpath, Pending(pending.topic, entry, pending.replaces))


def run_import(store: Store, options: ImportOptions, read: Callable[[], Iterable[SourceFile]],
               progress: Progress | None = None) -> ImportReport:
    """Read every source file and write what they hold: one commit, or nothing on any error."""
    if options.dry_run:
        with store.reading(), PlanIndex() as plan:
            store.catch_up_catalog()
            first = Importer(store, options, None, plan)
            first.run(read(), progress)
            first.planned_links()
        return first.report
    with store.writing("import", allow_secret=options.allow_secret) as txn, Spool() as spool, PlanIndex() as plan:
        first = Importer(store, options, None, plan, spool=spool)
        first.run(read(), progress)
        del first  # what it decided is in the spool and the plan: memory for the writing pass
        second = Importer(store, options, txn, plan, final=True)
        second.replay(spool)
        counts = second.report.counts()
        summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        txn.message = f"import: {options.tool} ({summary or 'nothing'})" if txn.touched else ""
    second.report.commit = store.git.head_oid() if txn.touched else None
    return second.report
