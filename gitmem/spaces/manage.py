"""`gitmem space add|list|activate|deactivate|remove`: the mounted list of this machine."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.errors import GitmemError, InvalidInputError
from gitmem.spaces.folder import CACHE_DIR, FolderSpace
from gitmem.spaces.mounts import (
    CLONES_DIR,
    GITMEM,
    HOME,
    Mount,
    check_name,
    get_mount,
    home_name,
    home_reads,
    identity,
    load_mounts,
    open_mount,
    save_mounts,
    set_home_reads,
)
from gitmem.spaces.projection import FLAVOURS, detect_flavour
from gitmem.spaces.routing import stored_rules
from gitmem.store.txn import refuse_subagent

if TYPE_CHECKING:
    from gitmem.store.store import Store

_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")


def looks_like_url(location: str) -> bool:
    return "://" in location or bool(_SCP_RE.match(location))


def _is_bare_repo(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()


def can_create(location: str) -> bool:
    """Whether a store could be created at `location`: a path that is missing or an empty folder."""
    if looks_like_url(location):
        return False
    folder = Path(caller.absolute(caller.expanduser(location)))
    return not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))


def _place(home: Store, name: str, location: str, branch: str,
           create: bool) -> tuple[Path, str | None]:
    """(folder of the store, the clean URL it was cloned from or None)."""
    from gitmem.store.store import Store
    from gitmem.sync.remote import init_store, split_url_secret

    folder = Path(caller.absolute(caller.expanduser(location)))
    if not looks_like_url(location) and (folder / "memory.json").is_file():
        return folder.resolve(), None
    if create and can_create(location):
        init_store(Store(folder, cwd=home.cwd), remote=None, branch=branch)
        return folder.resolve(), None
    if not (looks_like_url(location) or _is_bare_repo(folder)):
        if can_create(location):
            raise InvalidInputError(
                f"{location} holds no gitmem store: add --create to make a new one there"
            )
        if folder.is_dir():
            raise InvalidInputError(
                f"{location} is not a gitmem store: create one with `gitmem --root {location} init`"
            )
        raise InvalidInputError(f"{location} is neither a gitmem store folder nor a git URL")
    clean, _secret = split_url_secret(location)
    target = home.root / CLONES_DIR / name
    if target.exists() and any(target.iterdir()):
        raise InvalidInputError(f"{target} already exists: remove it or choose another name")
    init_store(Store(target, cwd=home.cwd), remote=location, branch=branch)
    return target.resolve(), clean


PROVIDERS = (GITMEM, *FLAVOURS)


def choose_provider(location: str, wanted: str | None, create: bool) -> str:
    """The provider of a new space: a gitmem store (a store, a URL, a folder to create), else the
    flavour of a folder of Markdown notes (`--provider markdown` refines it to the one detected)."""
    if wanted is not None and wanted not in PROVIDERS:
        raise InvalidInputError(f"unknown provider {wanted!r}: use one of {', '.join(PROVIDERS)}")
    if wanted == GITMEM or looks_like_url(location):
        if wanted not in (None, GITMEM):
            raise InvalidInputError(f"a URL is mounted as a gitmem store, not with --provider {wanted}")
        return GITMEM
    folder = Path(caller.absolute(caller.expanduser(location)))
    if (folder / "memory.json").is_file():
        if wanted is not None:
            raise InvalidInputError(f"{location} is a gitmem store: mount it without --provider {wanted}")
        return GITMEM
    if wanted is None and (create or not folder.is_dir()):
        return GITMEM
    if not folder.is_dir():
        raise InvalidInputError(f"{location} is not a folder of Markdown notes")
    detected = detect_flavour(folder)
    if wanted in (None, "markdown"):
        return detected or ("markdown" if wanted else GITMEM)
    return wanted


def refuse_secret_words(description: str | None, keywords: list[str]) -> None:
    """A space's description and keywords go into the mount and its memory.json: a likely secret
    in them is refused before a space is mounted or a folder's mount changed (memory.json itself
    refuses one at every save)."""
    from gitmem.secrets.scan import refuse_secrets

    refuse_secrets("\n".join([description or "", *keywords]), "space description or keyword",
                   overridable=False)


def add_space(home: Store, name: str, location: str, *, description: str | None = None,
              keywords: list[str] | None = None, inactive: bool = False,
              branch: str = "main", create: bool = False,
              provider: str | None = None) -> dict[str, Any]:
    """Mount a store by path, or clone it from a URL into state/spaces/NAME, and mount it;
    `create`: a missing or empty folder becomes a new store first. A folder of Markdown notes
    (no memory.json) is mounted read-only with its provider (`provider`, else detected)."""
    refuse_subagent("space add")
    home.require()
    check_name(name)
    refuse_secret_words(description, keywords or [])
    if name in (HOME, home_name(home)):
        raise InvalidInputError(f"{name!r} names this store itself; choose another name")
    mounts = load_mounts(home.root)
    if name in mounts:
        raise InvalidInputError(f"space {name!r} is already mounted at {mounts[name].path}")
    kind = choose_provider(location, provider, create)
    if kind != GITMEM and keywords:
        raise InvalidInputError(f"space {name!r} would be a read-only Markdown folder: routing keywords"
                                " send writes to a space, and it takes none")
    if kind == GITMEM:
        folder, url = _place(home, name, location, branch, create)
    else:
        folder, url = Path(caller.absolute(caller.expanduser(location))).resolve(), None
    if folder == home.root.resolve():
        raise InvalidInputError("a store cannot mount itself as a space")
    for other in mounts.values():
        if Path(other.path).resolve() == folder:
            raise InvalidInputError(f"{folder} is already mounted as space {other.name!r}")
    if kind != GITMEM and folder.is_relative_to(home.root.resolve()):
        raise InvalidInputError("a folder inside this store cannot be mounted as a space")
    mount = Mount(name, str(folder), not inactive, url, home.today().isoformat(), kind,
                  " ".join((description or "").split()) if kind != GITMEM else "")
    with home.locked():
        mounts = load_mounts(home.root)
        mounts[name] = mount
        save_mounts(home.root, mounts)
    if kind == GITMEM and (description is not None or keywords):
        describe_space(open_mount(home, mount), name, description, keywords or [])
    return space_info(home, mount)


def describe_space(space: Store, name: str, description: str | None, keywords: list[str], *,
                   rename: bool = False) -> bool:
    """Set a store's own space description and keywords (and, with rename, its name) in its
    memory.json; one commit there when anything changed (save_registry refuses a secret)."""
    with space.writing("space describe") as txn:
        registry = space.registry
        record = registry.data.get("spaces")
        if not isinstance(record, dict):
            record = registry.data["spaces"] = {}
        if rename or not record.get("name"):
            record["name"] = name
        if description is not None:
            record["description"] = " ".join(description.split())
        if keywords:
            known = [str(k) for k in record.get("keywords") or []]
            record["keywords"] = sorted(set(known) | {k.strip() for k in keywords if k.strip()})
        space.save_registry(txn, registry)
        txn.message = f"space describe: {record['name']}"
        return bool(txn.touched)


def describe_folder(home: Store, name: str, description: str | None, keywords: list[str]) -> bool:
    """Set a Markdown folder's description, kept in its mount (the folder is never written);
    it takes no keywords: they route writes, and it takes none."""
    if keywords:
        raise InvalidInputError(f"space {name!r} is a read-only Markdown folder: routing keywords"
                                " send writes to a space, and it takes none")
    refuse_secret_words(description, [])
    with home.locked():
        mounts = load_mounts(home.root)
        mount = get_mount(home, name)
        wanted = " ".join((description or "").split()) if description is not None else mount.description
        if wanted == mount.description:
            return False
        mount.description = wanted
        mounts[name] = mount
        save_mounts(home.root, mounts)
    return True


def set_active(home: Store, name: str, active: bool) -> dict[str, Any]:
    """Switch a space on or off for reads; `home` (or the store's own name): the store itself."""
    refuse_subagent("space activate" if active else "space deactivate")
    if name in (HOME, home_name(home)):
        with home.locked():
            set_home_reads(home.root, active)
        return list_spaces(home)[0]
    with home.locked():
        mounts = load_mounts(home.root)
        mount = get_mount(home, name)
        mount.active = active
        mounts[name] = mount
        save_mounts(home.root, mounts)
    return space_info(home, mount)


def remove_space(home: Store, name: str) -> dict[str, Any]:
    """Unmount a space; its folder (a clone too) is left as it is: nothing is deleted but a
    Markdown folder's cache (state/providers/NAME: derived from the folder alone)."""
    refuse_subagent("space remove")
    with home.locked():
        mounts = load_mounts(home.root)
        mount = get_mount(home, name)
        del mounts[name]
        save_mounts(home.root, mounts)
        if not mount.writable:
            shutil.rmtree(home.root / CACHE_DIR / name, ignore_errors=True)
    return {"name": name, "path": mount.path, "removed": True}


def space_info(home: Store, mount: Mount) -> dict[str, Any]:
    """A mounted space as `space list` shows it, with what its memory.json says of itself."""
    info: dict[str, Any] = {**mount.as_json(), "home": False, "status": "ok"}
    try:
        space = open_mount(home, mount)
        own = identity(space)
        info.update(own_name=own.name, description=own.description, keywords=list(own.keywords))
        if isinstance(space, FolderSpace):
            with space.reading():
                space.catch_up_catalog()
            info.update(space.info())
    except GitmemError as exc:
        info.update(status="unavailable", problem=str(exc), own_name=None, description="",
                    keywords=[])
    info["routes"] = [r.as_json() for r in stored_rules(home) if r.space == mount.name]
    return info


def list_spaces(home: Store) -> list[dict[str, Any]]:
    """The store itself first, then every mounted space (active or not)."""
    home.require()
    own = identity(home)
    rows: list[dict[str, Any]] = [{
        "name": own.name, "path": str(home.root), "active": home_reads(home.root), "url": None, "added": "",
        "provider": GITMEM,
        "home": True, "status": "ok", "own_name": own.name, "description": own.description,
        "keywords": list(own.keywords), "routes": [],
    }]
    rows += [space_info(home, m) for _name, m in sorted(load_mounts(home.root).items())]
    return rows
