"""Mounted spaces: other gitmem stores this store reads (and may write) alongside its own.

Which stores are mounted, where they live and whether they are active is this machine's business
(paths differ between machines): `state/spaces.json`, never committed. What a space *is* — its
name, its description (what belongs in it), its routing keywords — lives in that space's own
memory.json under "spaces", so every machine that mounts it sees the same description.
The store itself is always readable and writable under its own name (default "home").
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, NotFoundError, StoreStateError
from gitmem.fsio import read_regular_file, write_json_atomic

if TYPE_CHECKING:
    from gitmem.store.store import Store

MOUNTS_FILE = "state/spaces.json"
CLONES_DIR = "state/spaces"
HOME = "home"  # always names the store itself, whatever its own name is
GITMEM = "gitmem"  # the provider of a space that is a gitmem store
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass
class Mount:
    """One mounted space on this machine."""

    name: str
    path: str
    active: bool = True
    url: str | None = None  # set when gitmem cloned it
    added: str = ""
    provider: str = "gitmem"  # or a Markdown folder's flavour: markdown, obsidian, basic-memory
    description: str = ""  # a folder's (a store keeps its own in its memory.json)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def writable(self) -> bool:
        """A gitmem store takes writes; a Markdown folder is only read."""
        return self.provider == GITMEM


@dataclass(frozen=True)
class Identity:
    """What a store says about itself in memory.json: its space name, description, keywords."""

    name: str
    description: str = ""
    keywords: tuple[str, ...] = field(default_factory=tuple)


def check_name(name: str) -> str:
    if not _NAME_RE.match(name):
        raise InvalidInputError(
            f"invalid space name {name!r}: use 1-64 of a-z, 0-9 and '-', starting with a letter or digit"
        )
    return name


def identity(store: Store) -> Identity:
    """The store's own space record (name defaults to "home")."""
    record = store.registry.data.get("spaces")
    record = record if isinstance(record, dict) else {}
    keywords = record.get("keywords") or []
    return Identity(
        name=str(record.get("name") or HOME),
        description=str(record.get("description") or ""),
        keywords=tuple(str(k) for k in keywords if str(k).strip()) if isinstance(keywords, list) else (),
    )


def home_name(store: Store) -> str:
    return identity(store).name


def is_home(store: Store, name: str | None) -> bool:
    return name is not None and name in (HOME, home_name(store))


# -- the machine-local list ------------------------------------------------------------------
def _load(root: Path) -> dict[str, Any]:
    path = root / MOUNTS_FILE
    try:
        data = json.loads(read_regular_file(path).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        raise StoreStateError(f"{path} is not valid JSON: fix it by hand or remove it and add the spaces again") from None
    return data if isinstance(data, dict) else {}


def home_reads(root: Path) -> bool:
    """Whether the store itself is read by searches, lists and the card (`space deactivate home`
    switches that off on this machine; writes and reads naming an entry go on)."""
    record = _load(root).get("home")
    return not (isinstance(record, dict) and record.get("active") is False)


def set_home_reads(root: Path, active: bool) -> None:
    data = _load(root)
    write_json_atomic(root / MOUNTS_FILE, {**data, "version": 1, "home": {"active": active},
                                           "spaces": data.get("spaces") or {}})


def load_mounts(root: Path) -> dict[str, Mount]:
    data = _load(root)
    spaces = data.get("spaces")
    if not isinstance(spaces, dict):
        return {}
    out = {}
    for name, record in spaces.items():
        if isinstance(record, dict) and isinstance(record.get("path"), str):
            out[str(name)] = Mount(str(name), record["path"], bool(record.get("active", True)),
                                   record.get("url"), str(record.get("added") or ""),
                                   str(record.get("provider") or GITMEM),
                                   str(record.get("description") or ""))
    return out


def save_mounts(root: Path, mounts: dict[str, Mount]) -> None:
    data: dict[str, Any] = {"version": 1, "spaces": {
        name: {k: v for k, v in m.as_json().items()
               if k != "name" and not (k == "provider" and v == GITMEM) and not (k == "description" and not v)}
        for name, m in sorted(mounts.items())}}
    if not home_reads(root):
        data["home"] = {"active": False}
    write_json_atomic(root / MOUNTS_FILE, data)


def get_mount(store: Store, name: str) -> Mount:
    mounts = load_mounts(store.root)
    if name not in mounts:
        known = ", ".join(sorted(mounts)) or "none"
        raise NotFoundError(f"no space named {name!r} is mounted (mounted: {known}; `gitmem space list`)")
    return mounts[name]


# Spaces opened for a store object stay open with it, as its own search index does: a long-lived
# caller (a server, a benchmark) then reuses each space's index reader instead of reopening it.
_OPENED: weakref.WeakKeyDictionary[Store, dict[str, Store]] = weakref.WeakKeyDictionary()


def open_mount(home: Store, mount: Mount) -> Store:
    """The mounted store, sharing the home store's workspace, folder and clock (a Markdown
    folder: a read-only store over its cache, gitmem/spaces/folder.py)."""
    from gitmem.spaces.folder import FolderSpace
    from gitmem.store.store import Store

    opened = _OPENED.setdefault(home, {})
    space = opened.get(mount.path)
    if isinstance(space, FolderSpace):
        space.describe(mount.description)  # described since it was opened: `space list` says so
    if space is None and not mount.writable:
        space = FolderSpace(home, mount.name, mount.path, mount.provider, mount.description)
    elif space is None:
        space = Store(mount.path, workspace=home.workspace_flag, cwd=home.cwd, clock=home.clock)
    if space.exists():
        opened[mount.path] = space
    else:
        opened.pop(mount.path, None)
        what = "gitmem store" if mount.writable else "folder"
        raise StoreStateError(
            f"space {mount.name!r}: no {what} at {mount.path} any more"
            f" (`gitmem space remove {mount.name}`, or add it again with its new path)"
        )
    return space


def inactive_error(name: str) -> InvalidInputError:
    return InvalidInputError(
        f"space {name!r} is inactive: `gitmem space activate {name}` to read it"
        " (inactive spaces stay out of every read)"
    )


def open_for_read(home: Store, name: str) -> Store:
    """A space named for a read; inactive ones are refused with the way out."""
    if is_home(home, name):
        if not home_reads(home.root):
            raise inactive_error(HOME)
        return home
    mount = get_mount(home, name)
    if not mount.active:
        raise inactive_error(name)
    return open_mount(home, mount)


def reading_targets(home: Store, space: str | None = None, *, every: bool = False,
                    ) -> tuple[list[tuple[str, Store]], list[tuple[str, str]]]:
    """The stores a read covers: the named one, or the store itself (unless its reads are
    switched off; `every`: always) and every active space.

    Returns (targets, problems): a mounted space that cannot be opened is reported as
    (name, reason), not fatal.
    """
    if space is not None:
        return [(home_name(home) if is_home(home, space) else space, open_for_read(home, space))], []
    targets: list[tuple[str, Store]] = [(home_name(home), home)] if every or home_reads(home.root) else []
    problems: list[tuple[str, str]] = []
    for mount in load_mounts(home.root).values():
        if not mount.active:
            continue
        try:
            targets.append((mount.name, open_mount(home, mount)))
        except StoreStateError as exc:
            problems.append((mount.name, str(exc)))
    return targets, problems
