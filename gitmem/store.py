"""The store: the library API behind every verb. Each write = lock, absorb hand edits, change
files atomically, regenerate layer indexes, commit once, update the search index."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import layers as L
from .catalog import Catalog
from .entry import Entry, TopicFile
from .errors import (
    InvalidInputError,
    NotFoundError,
    StoreStateError,
    SubagentWriteError,
)
from .fsio import read_text, remove_file, store_lock, write_json_atomic, write_text_atomic
from .markdown import append_entry_text, parse_topic_file, render_topic_file
from .normalize import Outcome, normalize_text
from .paths import DERIVED_DIRS, resolve_root
from .registry import Registry, load_registry, save_registry
from .resources import read_text as read_resource

if TYPE_CHECKING:
    from .git import GitRepo
    from .index import SearchIndex

_ID_FIELD_RE = re.compile(r"^\*\*Id:\*\*[ \t]+(\S+)", re.MULTILINE)
GITIGNORE = "".join(f"/{name}/\n" for name in DERIVED_DIRS)
GITATTRIBUTES = (
    "# Entry-level merges for memory files (driver registered by `gitmem hooks install`).\n"
    "*.md merge=gitmem\n"
    "memory.json merge=gitmem\n"
    "*.json merge=gitmem\n"
)


@dataclass
class WriteTxn:
    """What one write verb changes; committed as one commit when the verb returns."""

    verb: str
    message: str = ""
    touched: list[str] = field(default_factory=list)
    parsed: dict[str, TopicFile] = field(default_factory=dict)  # what was written, to skip a re-parse
    # Topic files changed by a pull or a plain-git commit: their layer indexes are refreshed too.
    changed_elsewhere: list[str] = field(default_factory=list)
    cataloged: set[str] = field(default_factory=set)  # files whose catalog rows are already current

    def note(self, relpath: str) -> None:
        if relpath not in self.touched:
            self.touched.append(relpath)


@dataclass(frozen=True)
class Located:
    """An entry together with where it lives."""

    entry: Entry
    path: str
    scope: str
    layer: str
    topic: str


def refuse_subagent(verb: str) -> None:
    """Subagents read memory but never write it (GITMEM_SUBAGENT=1)."""
    if os.environ.get("GITMEM_SUBAGENT") == "1":
        raise SubagentWriteError(
            f"`gitmem {verb}` refused: subagents do not write memory (GITMEM_SUBAGENT=1); report your findings to your caller instead"
        )


class Store:
    """A gitmem store rooted at a folder. All verbs of the CLI are methods here."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        workspace: str | None = None,
        cwd: Path | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.root = resolve_root(root)
        self.workspace_flag = workspace
        self.cwd = (cwd or Path.cwd()).absolute()
        self.clock = clock or datetime.now
        self._git: GitRepo | None = None
        self._catalog: Catalog | None = None
        self._registry: Registry | None = None
        self._search_index: SearchIndex | None = None
        self._lock_depth = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.root / "memory.json").is_file() and (self.root / ".git").exists()

    def require(self) -> None:
        if not self.exists():
            raise StoreStateError(f"no gitmem store at {self.root}: run `gitmem init` first")

    @property
    def git(self) -> GitRepo:
        if self._git is None:
            from .git import GitRepo

            self.require()
            self._git = GitRepo(self.root, token_file=self.root / "state" / "git-token")
        return self._git

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = Catalog(self.root)
        return self._catalog

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = load_registry(self.root)
        return self._registry

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None
        if self._search_index is not None:
            self._search_index.close()
            self._search_index = None

    def now(self) -> datetime:
        return self.clock()

    def today(self) -> date:
        return self.now().date()

    # -- reading files -----------------------------------------------------------------------
    def path(self, relpath: str) -> Path:
        return self.root / relpath

    def read_file(self, relpath: str) -> TopicFile | None:
        """Parse a memory file; None when it does not exist."""
        try:
            text = read_text(self.path(relpath))
        except FileNotFoundError:
            return None
        return parse_topic_file(text, relpath)

    def write_file(self, txn: WriteTxn, relpath: str, text: str) -> bool:
        """Write atomically when the content differs; returns whether it changed."""
        target = self.path(relpath)
        try:
            if read_text(target) == text:
                return False
        except FileNotFoundError:
            pass
        self._journal(txn, relpath)
        write_text_atomic(target, text)
        txn.note(relpath)
        return True

    def append_entry(self, txn: WriteTxn, relpath: str, entry: Entry) -> bool:
        """Append an entry to an existing topic file without parsing it; False when there is no
        such file (or the catalog does not know it) and the caller must build the file."""
        try:
            text = read_text(self.path(relpath))
        except FileNotFoundError:
            return False
        if not self.catalog.has_file(relpath):
            return False
        self.write_file(txn, relpath, append_entry_text(text, entry))
        self.catalog.add_entry(relpath, entry)
        txn.cataloged.add(relpath)
        return True

    def write_topic(self, txn: WriteTxn, relpath: str, topic: TopicFile) -> bool:
        changed = self.write_file(txn, relpath, render_topic_file(topic))
        if changed:
            txn.parsed[relpath] = topic
        return changed

    def delete_file(self, txn: WriteTxn, relpath: str) -> bool:
        self._journal(txn, relpath)
        if remove_file(self.path(relpath)):
            txn.note(relpath)
            return True
        return False

    # -- the write transaction ---------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The store-wide lock, re-entrant within this object."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with store_lock(self.root):
            self._lock_depth = 1
            self._registry = None  # another process may have changed it while we waited
            try:
                yield
            finally:
                self._lock_depth = 0

    @contextlib.contextmanager
    def writing(self, verb: str, *, absorb: bool = True) -> Iterator[WriteTxn]:
        """One logical write: everything changed inside becomes exactly one commit."""
        refuse_subagent(verb)
        self.require()
        with self.locked():
            _ = self.registry  # a broken memory.json stops every write before anything changes
            self.recover_interrupted()
            if absorb:
                self.absorb_hand_edits()
            txn = WriteTxn(verb, changed_elsewhere=self.catch_up_catalog())
            yield txn
            self.finish(txn)

    def finish(self, txn: WriteTxn) -> str | None:
        """Regenerate layer indexes for what changed, commit, and refresh derived data."""
        if not txn.touched:
            self._clear_journal()
            return None

        def read(relpath: str) -> TopicFile | None:
            return txn.parsed.get(relpath) or self.read_file(relpath)

        self.catalog.refresh([p for p in txn.touched if p not in txn.cataloged], read)
        for relpath in self.regenerate_layer_indexes(txn.touched + txn.changed_elsewhere):
            txn.note(relpath)
        message = txn.message or f"{txn.verb}"
        oid = self.git.commit_paths(txn.touched, message)
        self.catalog.set_meta("head", self.git.head_oid())
        self._clear_journal()
        self.update_search_index(txn.touched)
        return oid

    def _journal(self, txn: WriteTxn, relpath: str) -> None:
        """Record, before the first byte changes, which files this verb is about to write."""
        pending = [*txn.touched, relpath]
        write_json_atomic(self.root / "state" / "journal.json", {"verb": txn.verb, "paths": pending},
                          durable=False)

    def _clear_journal(self) -> None:
        remove_file(self.root / "state" / "journal.json")

    def recover_interrupted(self) -> None:
        """Commit what a crashed write left behind, under that write's own name."""
        journal = self.root / "state" / "journal.json"
        if not journal.exists():
            return
        try:
            data = json.loads(read_text(journal))
            paths = [str(p) for p in data.get("paths", [])]
            verb = str(data.get("verb", "write"))
        except (json.JSONDecodeError, AttributeError):
            paths, verb = [], "write"
        dirty = set(self.git.dirty_paths())
        paths = [p for p in paths if p in dirty]
        if paths:
            self.catalog.refresh(paths, self._read_lenient)
            paths += self.regenerate_layer_indexes(paths)
            self.git.commit_paths(paths, f"{verb}: recovered after an interrupted write")
        self._clear_journal()

    def absorb_hand_edits(self) -> list[str]:
        """Commit changes someone made by hand (normalized) before our own write."""
        dirty = self.git.dirty_paths()
        if not dirty:
            return []
        outcomes = self.normalize_paths(dirty, fix=True)
        blocking = [p for o in outcomes for p in o.blocking]
        if blocking:
            raise InvalidInputError(
                f"{blocking[0]} — a hand edit is malformed; fix it (see `gitmem check`) and retry"
            )
        txn = WriteTxn("hand edit")
        for outcome in outcomes:
            if outcome.changed:
                self.write_file(txn, outcome.path, outcome.text)
        self._register_hand_made_workspaces(txn, dirty)
        self.catalog.refresh(dirty, self._read_lenient)
        paths = sorted(set(dirty) | set(self.regenerate_layer_indexes(dirty)) | set(txn.touched))
        listing = "\n".join(f"- {p}" for p in paths)
        self.git.commit_paths(paths, f"hand edit: {len(paths)} file(s)\n\n{listing}\n")
        self.catalog.set_meta("head", self.git.head_oid())
        self._clear_journal()
        self.update_search_index(paths)
        return paths

    def _register_hand_made_workspaces(self, txn: WriteTxn, relpaths: list[str]) -> None:
        """A workspace folder someone created by hand joins memory.json like any other."""
        from .workspaces import register_workspace

        for key in sorted({role.scope for role in map(L.classify_path, relpaths)} - {"", L.GLOBAL}):
            if key not in self.registry.workspaces:
                register_workspace(self, txn, key)

    def normalize_paths(self, relpaths: list[str], *, fix: bool) -> list[Outcome]:
        """Run the normalization rules over memory files in the working tree."""
        self.catch_up_catalog()
        texts = {
            relpath: read_text(self.path(relpath))
            for relpath in relpaths
            if L.is_memory_file(relpath) and self.path(relpath).is_file()
        }
        return self.normalize_texts(texts, fix=fix)

    def _cross_file_duplicates(self, outcome: Outcome, seen: dict[str, str]) -> None:
        from .normalize import Problem

        try:
            topic = parse_topic_file(outcome.text, outcome.path)
        except Exception:  # noqa: BLE001 - the parse problem is already reported
            return
        for entry in topic.entries:
            if entry.id and entry.id in seen and seen[entry.id] != outcome.path:
                outcome.problems.append(
                    Problem(outcome.path, entry.line, f"duplicate Id {entry.id} (also in {seen[entry.id]})")
                )
            elif entry.id:
                seen[entry.id] = outcome.path

    def _read_lenient(self, relpath: str) -> TopicFile | None:
        """Parse for the catalog; a file that cannot be parsed counts as empty, never fatal."""
        try:
            return self.read_file(relpath)
        except InvalidInputError:
            return TopicFile()

    def catch_up_catalog(self) -> list[str]:
        """Bring the catalog up to HEAD: re-read only files changed since it last looked.

        Returns the topic files that changed underneath it (pulls, plain-git commits), so a
        write can regenerate their layer indexes too.
        """
        return self.catch_up_catalog_from(self.git.head_oid(), self.git.changed_between)

    def all_topic_files(self) -> list[str]:
        """Every topic file on disk (walks the scope folders)."""
        found: list[str] = []
        for scope in self.scope_keys():
            for layer in L.TOPIC_LAYERS:
                folder = self.path(L.topic_dir(scope, layer))
                if folder.is_dir():
                    found.extend(
                        f"{L.topic_dir(scope, layer)}/{item.name}"
                        for item in os.scandir(folder)
                        if item.name.endswith(".md") and item.is_file()
                    )
        return sorted(found)

    def all_memory_files(self) -> list[str]:
        """Every topic file and single-file layer (state, working, junk) on disk."""
        files = self.all_topic_files()
        for scope in self.scope_keys():
            for layer, spec in L.LAYERS.items():
                relpath = L.single_file_path(scope, layer)
                if spec.shape == "single" and self.path(relpath).is_file():
                    files.append(relpath)
        return sorted(files)

    def scope_keys(self) -> list[str]:
        keys = [L.GLOBAL]
        folder = self.root / "workspaces"
        if folder.is_dir():
            keys.extend(sorted(item.name for item in os.scandir(folder) if item.is_dir()))
        return keys

    def regenerate_layer_indexes(self, relpaths: list[str]) -> list[str]:
        """Rewrite the layer index of every layer these topic files belong to; returns changed paths."""
        changed = []
        layers_touched = {
            (role.scope, role.layer)
            for role in map(L.classify_path, relpaths)
            if role.kind == "topic"
        }
        for scope, layer in sorted(layers_touched):
            relpath = L.layer_index_path(scope, layer)
            text = L.render_layer_index(scope, layer, self.catalog.topics(scope, layer))
            target = self.path(relpath)
            if not target.exists() or read_text(target) != text:
                write_text_atomic(target, text)
                changed.append(relpath)
        return changed

    def update_search_index(self, relpaths: list[str]) -> None:
        """Keep an existing search index current for these files (no index: nothing to do)."""
        if not (self.root / "index").is_dir():
            return
        self.search_index().update_paths(relpaths)

    def search_index(self) -> SearchIndex:
        """The store's search index, kept open so later searches reuse its reader and manifest."""
        if self._search_index is None:
            from .index import SearchIndex

            self._search_index = SearchIndex(self.root)
        return self._search_index

    # -- init --------------------------------------------------------------------------------
    def init(self, *, branch: str = "main") -> bool:
        """Create the store (or adopt an existing repo); returns False when it already existed."""
        from .git import GitRepo

        existed = self.exists()
        self.root.mkdir(parents=True, exist_ok=True)
        repo = GitRepo.init(self.root, branch=branch)
        self._git = GitRepo(self.root, token_file=self.root / "state" / "git-token")
        with self.locked():
            txn = WriteTxn("init", message="init: gitmem store")
            self._ensure_text(txn, ".gitignore", GITIGNORE)
            self._ensure_text(txn, ".gitattributes", GITATTRIBUTES)
            if not (self.root / "memory.json").exists():
                registry = load_registry(self.root)
                registry.git["branch"] = repo.branch() or branch
                save_registry(self.root, registry)
                txn.note("memory.json")
            self.ensure_scope(txn, L.GLOBAL)
            from .system_doc import render_system_doc, system_doc_stale

            self.catch_up_catalog()
            # A store cloned from another machine keeps its SYSTEM.md unless it is outdated.
            if system_doc_stale(self):
                self.write_file(txn, "SYSTEM.md", render_system_doc(self))
            self.finish(txn)
        return not existed

    def _ensure_text(self, txn: WriteTxn, relpath: str, text: str) -> None:
        """Create a file, or add our missing lines to one the user already has."""
        target = self.path(relpath)
        if not target.exists():
            self.write_file(txn, relpath, text)
            return
        current = read_text(target)
        missing = [line for line in text.splitlines() if line and line not in current.splitlines()]
        if missing:
            sep = "" if current.endswith("\n") or not current else "\n"
            self.write_file(txn, relpath, current + sep + "\n".join(missing) + "\n")

    def ensure_scope(self, txn: WriteTxn, scope: str) -> None:
        """Create a scope's INDEX.md from its template once; never overwrite it."""
        relpath = f"{L.scope_dir(scope)}/INDEX.md"
        if self.path(relpath).exists():
            return
        template = read_resource("templates/INDEX.md")
        title = "Global memory" if scope == L.GLOBAL else f"Workspace {scope}"
        self.write_file(txn, relpath, template.replace("{{title}}", title))
        if scope != L.GLOBAL:
            meta = {"key": scope, "created": self.today().isoformat()}
            self.write_file(txn, f"{L.scope_dir(scope)}/meta.json", json.dumps(meta, indent=2) + "\n")

    # -- workspace resolution ----------------------------------------------------------------
    def resolve_workspace(self, explicit: str | None = None, cwd: Path | None = None) -> str:
        from .workspaces import resolve_workspace_key

        return resolve_workspace_key(self, explicit or self.workspace_flag, cwd or self.cwd)

    def scope_for(self, scope: str, workspace: str | None = None) -> str:
        """'global' or the resolved workspace key."""
        if scope == "global" and not workspace:
            return L.GLOBAL
        if scope not in ("global", "workspace"):
            raise InvalidInputError(f"unknown scope {scope!r} (use global or workspace)")
        return self.resolve_workspace(workspace)

    # -- lookups -----------------------------------------------------------------------------
    def locate(self, entry_id: str) -> Located:
        """Find an entry by id (catalog first, then the file)."""
        parsed = L.parse_id(entry_id)
        if parsed is None:
            raise InvalidInputError(f"malformed id {entry_id!r} (expected <scope>-<abbr>-<NNNN>)")
        with self.locked():
            self.catch_up_catalog()
        for relpath in self.catalog.locate(entry_id):
            topic = self.read_file(relpath)
            if topic is None:
                continue
            index = topic.find(entry_id)
            if index is not None:
                role = L.classify_path(relpath)
                return Located(topic.entries[index], relpath, role.scope, role.layer,
                               str(topic.meta.get("topic") or role.slug))
        raise NotFoundError(f"no entry with id {entry_id}")

    def save_registry(self, txn: WriteTxn, registry: Registry) -> None:
        before = self.path("memory.json")
        old = read_text(before) if before.exists() else ""
        self._journal(txn, "memory.json")
        save_registry(self.root, registry)
        if read_text(before) != old:
            txn.note("memory.json")
        self._registry = registry

    def settings(self) -> dict[str, Any]:
        return dict(self.registry.data.get("settings") or {})

    # -- for code running inside git hooks (they speak to the git binary, never pygit2) ------
    def catch_up_catalog_from(
        self, head: str | None, changed_between: Callable[[str | None, str], list[str]]
    ) -> list[str]:
        """catch_up_catalog for a caller that knows HEAD and diffs commits itself.

        `changed_between(old, new)` lists the paths that differ (old None: every file of new)
        and raises when `old` is unknown, e.g. after history was rewritten.
        """
        seen = self.catalog.get_meta("head")
        changed: list[str] = []
        if self.catalog.is_empty() or (head is None and seen is not None):
            changed = self.all_topic_files()
            self.catalog.rebuild(changed, self._read_lenient)
        elif head is not None and seen != head:
            try:
                changed = changed_between(seen, head)
            except Exception:  # noqa: BLE001 - an unknown old head: history was rewritten
                changed = self.all_topic_files()
                self.catalog.rebuild(changed, self._read_lenient)
            else:
                self.catalog.refresh(changed, self._read_lenient)
        self.catalog.set_meta("head", head)
        return [p for p in changed if L.classify_path(p).kind == "topic"]

    def normalize_texts(self, texts: dict[str, str], *, fix: bool) -> list[Outcome]:
        """Normalize given texts (working-tree or staged copies), ids allocated consistently.

        The caller brings the catalog up to date first (see catch_up_catalog_from).
        """
        allocated: dict[tuple[str, str], int] = {}
        for text in texts.values():  # ids written by hand in these texts are taken too
            for match in _ID_FIELD_RE.finditer(text):
                parsed = L.parse_id(match.group(1))
                if parsed is not None:
                    key = (parsed.scope, parsed.layer)
                    allocated[key] = max(allocated.get(key, 0), parsed.number)

        def allocate(scope: str, layer: str) -> int:
            key = (scope, layer)
            allocated[key] = max(allocated.get(key, 0), self.catalog.max_number(scope, layer)) + 1
            return allocated[key]

        def locate(entry_id: str, path: str) -> list[str]:
            # The given files are compared among themselves by _cross_file_duplicates.
            return [p for p in self.catalog.locate(entry_id) if p != path and p not in texts]

        today = self.today().isoformat()
        outcomes = []
        seen_ids: dict[str, str] = {}
        for relpath in sorted(texts):
            if not L.is_memory_file(relpath):
                continue
            outcome = normalize_text(relpath, texts[relpath], today=today,
                                     allocate=allocate, locate=locate, fix=fix)
            self._cross_file_duplicates(outcome, seen_ids)
            outcomes.append(outcome)
        return outcomes


def open_store(root: str | os.PathLike[str] | None = None, **kwargs: Any) -> Store:
    """Open an existing store, raising StoreStateError when there is none."""
    store = Store(root, **kwargs)
    store.require()
    return store
