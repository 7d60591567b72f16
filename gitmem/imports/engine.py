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
- Everything one import writes is one commit; `--dry-run` plans the same and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import IMPORTANCE_VALUES, Entry, TopicFile, normalize_text, text_hash
from gitmem.format.freshness import guess_volatility
from gitmem.format.markdown import new_topic_file
from gitmem.format.references import RELATION_TYPES, add_relation
from gitmem.format.safetext import clean_text, safe_text
from gitmem.format.wording import guess_layer
from gitmem.imports.hot import HotWriter
from gitmem.imports.model import Action, Note, SourceFile
from gitmem.secrets.scan import find_secrets, refusal
from gitmem.store.paths import sanitize_workspace_key, topic_slug
from gitmem.store.store import Store, WriteTxn
from gitmem.verbs.base import heading_for

WAY_OUT = "pass --allow-secret to import it anyway"
TOPIC_LAYERS = ("semantic", "episodic", "procedural", "learnings", "decisions", "codebase")


@dataclass(frozen=True)
class ImportOptions:
    tool: str
    dry_run: bool = False
    scope: str | None = None  # forced: global | workspace
    layer: str | None = None  # forced layer
    allow_secret: bool = False


@dataclass
class ImportReport:
    tool: str
    dry_run: bool
    files: int = 0
    actions: list[Action] = field(default_factory=list)
    commit: str | None = None

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for action in self.actions:
            found[action.action] = found.get(action.action, 0) + 1
        return found

    def as_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "dry_run": self.dry_run, "files": self.files,
                "counts": self.counts(), "commit": self.commit,
                "actions": [a.as_json() for a in self.actions]}


def import_digest(title: str, body: str) -> str:
    """What Import-hash records: the entry's title and text, whitespace-insensitive."""
    return text_hash(title + "\n" + body)[:16]


@dataclass
class _Planned:
    note: Note
    entry: Entry
    replaces: str | None  # the id of the entry it updates, None for a new one


class Importer:
    """One import run over the source files a reader yields (see the module text)."""

    def __init__(self, store: Store, options: ImportOptions, txn: WriteTxn | None) -> None:
        self.store, self.options, self.txn = store, options, txn
        self.report = ImportReport(options.tool, options.dry_run)
        self.prefix = f"import:{options.tool}:"
        self.titles: dict[str, str] = {}
        self.known = self._known_entries()
        self.taken: dict[tuple[str, str], int] = {}
        self.seen: dict[tuple[str, str, str], str] = {}
        self.links: list[tuple[str, str, str, str, str]] = []  # relpath, id, type, name, source
        self.scopes: dict[Path | None, str] = {}
        self.registered: set[str] = set()
        self.hot = HotWriter(store, txn, self.prefix, self.report)
        self.today = store.today().isoformat()

    # -- what earlier imports made -----------------------------------------------------------
    def _known_entries(self) -> dict[str, tuple[str, str]]:
        """Source value -> (file, id) of every entry an earlier import of this tool made."""
        known: dict[str, tuple[str, str]] = {}
        for relpath in self.store.all_topic_files():
            try:
                if self.prefix not in self.store.path(relpath).read_text(encoding="utf-8"):
                    continue
            except (OSError, UnicodeDecodeError):
                continue
            document = self.store.read_file(relpath)
            for entry in document.entries if document else []:
                source = entry.get("Source")
                if source.startswith(self.prefix) and entry.id:
                    known[source] = (relpath, entry.id)
                    self.titles_add(entry.title, entry.id)
        return known

    def titles_add(self, name: str, entry_id: str) -> None:
        self.titles.setdefault(normalize_text(name), entry_id)

    # -- one source file ---------------------------------------------------------------------
    def add_file(self, source: SourceFile) -> None:
        self.report.files += 1
        if not self.options.allow_secret:
            found = find_secrets(source.text, path=source.path)
            if found:
                raise refusal(found, "", WAY_OUT)
        for line, why in source.skipped:
            self._act("skipped", None, "", f"{source.path}:{line}", why)
        per_file: dict[str, list[_Planned]] = {}
        for note in source.notes:
            planned = self._plan(source, note)
            if planned is not None:
                relpath, item = planned
                per_file.setdefault(relpath, []).append(item)
        for relpath, items in per_file.items():
            self._write(relpath, items)
        if source.items:
            self.hot.add(source, self._scope_of(source, "global"))

    def _scope_of(self, source: SourceFile, wanted: str) -> str:
        if (self.options.scope or wanted) == "global":
            return L.GLOBAL
        project = None if self.store.workspace_flag else source.project  # --workspace wins
        if project not in self.scopes:
            self.scopes[project] = self._workspace(project)
        return self.scopes[project]

    def _workspace(self, project: Path | None) -> str:
        """The project's workspace key; a folder outside any repository is named by itself."""
        try:
            return self.store.resolve_workspace(None, cwd=project)
        except InvalidInputError:
            if project is None:
                raise
            return sanitize_workspace_key(project.resolve().name)

    def _layer_of(self, note: Note, scope: str, source: SourceFile) -> str:
        layer = self.options.layer or note.layer or guess_layer(f"{note.title}\n{note.body}")
        if layer not in TOPIC_LAYERS:
            raise InvalidInputError(f"cannot import into layer {layer!r} (use {'|'.join(TOPIC_LAYERS)})")
        if scope == L.GLOBAL and not L.layer_spec(layer).global_ok:
            if self.options.layer:
                raise InvalidInputError(f"layer {layer} lives in a workspace; import with --scope workspace")
            layer = "semantic"
        return layer

    def _plan(self, source: SourceFile, note: Note) -> tuple[str, _Planned] | None:
        where = f"{source.path}:{note.line}"
        scope = self._scope_of(source, note.scope)
        layer = self._layer_of(note, scope, source)
        body = safe_text(clean_text(note.body)).strip("\n") or ""
        title = heading_for(note.body or note.title, note.title or None)
        origin = " ".join(f"{self.prefix}{source.path}#{note.anchor}".split())
        digest = import_digest(title, body)
        importance = note.fields.get("Importance", "normal")
        if importance not in IMPORTANCE_VALUES:
            importance = "normal"
        found = self.known.get(origin)
        if found is not None:
            return self._plan_update(found, note, title, body, digest, where)
        hit = self._duplicate(scope, layer, body or title)
        relpath = L.topic_path(scope, layer, topic_slug(note.topic))
        if hit:
            self._act("duplicate", hit, relpath, where, title)
            self._remember_links(relpath, hit, note, where)
            return None
        new_id = self._next_id(scope, layer)
        fields = {"Id": new_id, "Importance": importance, "Volatility": guess_volatility(body),
                  "Created": note.fields.get("Created", self.today), "Verified": self.today,
                  **{k: v for k, v in note.fields.items() if k not in ("Importance", "Created")},
                  "Source": origin, "Import-hash": digest}
        self.seen[(scope, layer, text_hash(body or title))] = new_id
        self.known[origin] = (relpath, new_id)
        self._act("added", new_id, relpath, where, title)
        self._remember_links(relpath, new_id, note, where)
        return relpath, _Planned(note, Entry(title=title, body=body, fields=fields), None)

    def _plan_update(self, found: tuple[str, str], note: Note, title: str, body: str, digest: str,
                     where: str) -> tuple[str, _Planned] | None:
        relpath, entry_id = found
        document = self.store.read_file(relpath)
        index = document.find(entry_id) if document else None
        if document is None or index is None:
            return None  # moved or deleted by a person since: not brought back
        entry = document.entries[index]
        self._remember_links(relpath, entry_id, note, where)
        recorded = entry.get("Import-hash")
        if entry.is_forgotten:
            self._act("forgotten", entry_id, relpath, where, title)
            return None
        if recorded == digest:
            self._act("unchanged", entry_id, relpath, where, title)
            return None
        if import_digest(entry.title, entry.body) != recorded:
            self._act("kept-edit", entry_id, relpath, where, title)
            return None
        updated = entry.with_body(body, title).with_fields(Import_hash=digest, Verified=self.today)
        self._act("updated", entry_id, relpath, where, title)
        return relpath, _Planned(note, updated, entry_id)

    def _duplicate(self, scope: str, layer: str, text: str) -> str | None:
        digest = text_hash(text)
        for hit in self.store.catalog.find_text(scope, layer, digest):
            if hit.status == "live" and hit.id:
                return hit.id
        return self.seen.get((scope, layer, digest))

    def _next_id(self, scope: str, layer: str) -> str:
        key = (scope, layer)
        number = max(self.taken.get(key, 0), self.store.catalog.max_number(scope, layer)) + 1
        self.taken[key] = number
        return L.format_id(scope, layer, number)

    def _act(self, action: str, entry_id: str | None, relpath: str, where: str, title: str) -> None:
        self.report.actions.append(Action(action, entry_id, relpath, where, title))

    def _remember_links(self, relpath: str, entry_id: str, note: Note, where: str) -> None:
        for name in (note.title, *note.aliases):
            self.titles_add(name, entry_id)
        for kind, name in note.links:
            self.links.append((relpath, entry_id, kind if kind in RELATION_TYPES else "semantic",
                               name, where))

    # -- writing -----------------------------------------------------------------------------
    def _write(self, relpath: str, items: list[_Planned]) -> None:
        if self.txn is None:
            return
        role = L.classify_path(relpath)
        if role.scope != L.GLOBAL and role.scope not in self.registered:
            self.store.register_workspace(self.txn, role.scope)
            self.registered.add(role.scope)
        document = self.store.read_file(relpath) or new_topic_file(
            {"topic": items[0].note.topic, "layer": role.layer, "scope": role.scope}, items[0].note.topic)
        for item in items:
            index = document.find(item.replaces) if item.replaces else None
            if index is None:
                document.entries.append(item.entry)
            else:
                document.entries[index] = item.entry
        self.store.write_topic(self.txn, relpath, document)

    def finish_links(self) -> None:
        """Links resolved once every note is known; a name no note has is reported, not linked."""
        by_file: dict[str, list[tuple[str, str, str]]] = {}
        for relpath, entry_id, kind, name, where in self.links:
            target = self.titles.get(normalize_text(name))
            if target is None or target == entry_id:
                if target is None:
                    self._act("unlinked", entry_id, relpath, where, f"{kind}: {name} (no such note)")
                continue
            by_file.setdefault(relpath, []).append((entry_id, kind, target))
        for relpath, links in sorted(by_file.items()):
            document = self.store.read_file(relpath) if self.txn is not None else None
            for entry_id, kind, target in links:
                if document is not None and not self._link(document, entry_id, kind, target):
                    continue
                self._act("linked", entry_id, relpath, f"{kind}:{target}", "")
            if document is not None and self.txn is not None:
                self.store.write_topic(self.txn, relpath, document)

    @staticmethod
    def _link(document: TopicFile, entry_id: str, kind: str, target: str) -> bool:
        index = document.find(entry_id)
        if index is None:
            return False
        entry = document.entries[index]
        value = add_relation(entry.get("Related"), kind, target)
        if value is None:
            return False
        document.entries[index] = entry.with_fields(Related=value)
        return True


def run_import(store: Store, options: ImportOptions, files: Iterable[SourceFile]) -> ImportReport:
    """Read every source file and write what they hold: one commit, or nothing on any error."""
    if options.dry_run:
        with store.reading():
            store.catch_up_catalog()
        importer = Importer(store, options, None)
        for source in files:
            importer.add_file(source)
        importer.finish_links()
        return importer.report
    with store.writing("import") as txn:
        importer = Importer(store, options, txn)
        for source in files:
            importer.add_file(source)
        importer.finish_links()
        counts = importer.report.counts()
        summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        txn.message = f"import: {options.tool} ({summary or 'nothing'})" if txn.touched else ""
    importer.report.commit = store.git.head_oid() if txn.touched else None
    return importer.report
