"""Finding an entry by id across the store and its active spaces.

Ids are unique within one store only: the team space and the store itself may both hold a
`global-sem-0001`. A reference is either `ID` or `SPACE/ID`. A bare id means the store's own entry
when it has one; else the one active space holding it; several holders are refused with the
qualified references to choose from, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.format.layers import parse_id
from gitmem.spaces.mounts import (
    home_name,
    is_home,
    load_mounts,
    open_for_read,
    open_mount,
    reading_targets,
)

if TYPE_CHECKING:
    from gitmem.store.store import Located, Store


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Ref:
    """Where an id lives: the space's name, its store, and the id."""

    space: str
    store: Store
    id: str
    home: bool

    @property
    def qualified(self) -> str:
        return self.id if self.home else f"{self.space}/{self.id}"


def split_ref(ref: str) -> tuple[str | None, str]:
    """(`SPACE` or None, `ID`) of `SPACE/ID` or `ID`."""
    space, _, entry_id = ref.strip().rpartition("/")
    # An Id written by hand in another shape is looked up as given (Store.locate names it).
    if parse_id(entry_id) is None and not _TOKEN.fullmatch(entry_id):
        raise InvalidInputError(f"malformed Id {ref!r} (expected <scope>-<abbr>-<NNNN> or SPACE/ID)")
    return space or None, entry_id


def qualify(space: str, home: bool, entry_id: str | None) -> str | None:
    if entry_id is None:
        return None
    return entry_id if home else f"{space}/{entry_id}"


def resolve_ref(home: Store, ref: str, *, space: str | None = None,
                writing: bool = False) -> tuple[Ref, Located]:
    """The entry a reference names, with where it lives.

    `space` (from --space) qualifies a bare id. Reads refuse inactive spaces; an explicit write
    may target one (see routing).
    """
    named, entry_id = split_ref(ref)
    if named and space and named != space:
        raise InvalidInputError(f"{ref} names space {named!r} but --space says {space!r}")
    named = named or space
    if named is not None:
        store = open_named(home, named, writing)
        ref_ = Ref(home_name(home) if is_home(home, named) else named, store, entry_id,
                   is_home(home, named))
        return ref_, store.locate(entry_id)
    try:
        return Ref(home_name(home), home, entry_id, True), home.locate(entry_id)
    except NotFoundError:
        pass
    found = []
    targets, _problems = reading_targets(home)
    for name, store in (t for t in targets if t[1] is not home):
        try:
            found.append((Ref(name, store, entry_id, False), store.locate(entry_id)))
        except NotFoundError:
            continue
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFoundError(f"no entry with Id {entry_id}")
    choices = ", ".join(r.qualified for r, _ in found)
    raise InvalidInputError(f"{entry_id} exists in several spaces: name one ({choices})")


def open_named(home: Store, name: str, writing: bool) -> Store:
    if not writing or is_home(home, name):
        return open_for_read(home, name)
    mounts = load_mounts(home.root)
    if name not in mounts:
        raise NotFoundError(f"no space named {name!r} is mounted (`gitmem space list`)")
    return open_mount(home, mounts[name])
