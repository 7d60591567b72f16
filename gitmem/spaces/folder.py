"""A read-only Markdown folder mounted as a space: a `Store` over its cache (projection.py).

Reads go through the store's own machinery — catalog, summaries, search index, `locate` — on the
cache under the home store's `state/providers/<space>/`; before each read the cache is brought in
step with the folder. Every write is refused with the capability that is missing; the folder is
never written, nor is anything committed (the cache is no repository).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from gitmem.errors import InvalidInputError, NotFoundError, StoreStateError
from gitmem.store.registry import Registry, default_registry
from gitmem.store.store import Store
from gitmem.store.txn import Located

if TYPE_CHECKING:
    from gitmem.search.index import SearchIndex
    from gitmem.store.txn import WriteTxn

CACHE_DIR = "state/providers"


def read_only_error(name: str) -> InvalidInputError:
    return InvalidInputError(
        f"space {name!r} is a read-only Markdown folder: gitmem reads it but never writes it"
        " (write with --space home or another store space; edit the notes in their own tool)"
    )


def is_folder_provider(provider: str) -> bool:
    # The note readers (and YAML) load only once a folder space is met: most stores have none,
    # and every search goes through here.
    from gitmem.spaces.projection import FLAVOURS

    return provider in FLAVOURS


def cite(store: Store, record: dict[str, Any], source: str) -> None:
    """A record of a folder's note names the note itself: `note` (its path:line in the folder)
    and `folder` (the record's `path` is the cache's topic file)."""
    if isinstance(store, FolderSpace) and source:
        record.update(note=source, folder=str(store.folder))


class FolderSpace(Store):
    """A Markdown folder as a read-only store: its notes, read through a cache."""

    def __init__(self, home: Store, name: str, folder: str, flavour: str, description: str) -> None:
        super().__init__(home.root / CACHE_DIR / name, workspace=home.workspace_flag,
                         cwd=home.cwd, clock=home.clock)
        self.name = name
        self.folder = Path(folder)
        self.flavour = flavour
        self.description = description
        self.skipped: dict[str, str] = {}  # note -> why it could not be read (left out)
        if self.folder.is_dir():
            (self.root / "state").mkdir(parents=True, exist_ok=True)

    # -- what it is --------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.folder.is_dir()

    def require(self) -> None:
        if not self.exists():
            raise StoreStateError(
                f"space {self.name!r}: no folder at {self.folder} any more"
                f" (`gitmem space remove {self.name}`, or add it again with its new path)"
            )

    def describe(self, description: str) -> None:
        """Take a description set in the mount since this space was opened."""
        if description != self.description:
            self.description, self._registry = description, None

    @property
    def registry(self) -> Registry:
        """What the space says of itself (its name, its description): no memory.json is read."""
        if self._registry is None:
            self._registry = Registry({**default_registry().data,
                                       "spaces": {"name": self.name, "description": self.description}})
        return self._registry

    @property
    def git(self) -> NoReturn:
        # Writes are refused before they reach git (writing()); what asks for git here reads
        # history: why, log, as-of.
        raise InvalidInputError(f"space {self.name!r} is a Markdown folder: it has no git history "
                                "(why, log and as-of read the history of a gitmem store)")

    def locate(self, entry_id: str) -> Located:
        """A note by its id; an id of another shape is no note here (not a malformed Id)."""
        try:
            return super().locate(entry_id)
        except InvalidInputError:
            raise NotFoundError(f"no note with Id {entry_id} in space {self.name}") from None

    # -- reading -----------------------------------------------------------------------------
    def catch_up_catalog(self, *, clean: bool = False) -> list[str]:
        """Bring the cache in step with the folder, then the catalog with the cache."""
        if self._look is not None or self.behind_writer:
            return []
        from gitmem.spaces.projection import sync

        self.require()
        found = sync(self.folder, self.root, self.flavour)
        self.skipped = found.skipped
        if "" in found.changed or self.catalog.is_empty():
            self.catalog.rebuild(self.all_topic_files(), self._read_lenient)
        elif found.changed:
            self.catalog.refresh(found.changed, self._read_lenient)
        return []

    def search_index(self) -> SearchIndex:
        """The cache's search index, after the cache has taken in the folder's edits."""
        with self.reading():
            self.catch_up_catalog()
        return super().search_index()

    # -- writing: refused --------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, verb: str, *, absorb: bool = True,
                allow_secret: bool | None = None) -> Iterator[WriteTxn]:
        raise read_only_error(self.name)
        yield  # pragma: no cover - a generator for the context manager's shape

    @contextlib.contextmanager
    def batch(self, verb: str) -> Iterator[WriteTxn]:
        raise read_only_error(self.name)
        yield  # pragma: no cover

    def init(self, *, branch: str = "main") -> NoReturn:
        raise read_only_error(self.name)

    def info(self) -> dict[str, Any]:
        """What `space list` adds for a folder: its flavour and the notes left out."""
        return {"provider": self.flavour, "skipped": dict(sorted(self.skipped.items()))}
