"""Store root resolution, workspace keys, topic slugs and path-safety checks (pure)."""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from pathlib import Path

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.format import layers as L

DERIVED_DIRS: tuple[str, ...] = ("index", "state", "digests", "logs")


def resolve_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """`--root`, else $GITMEM_ROOT, else the store the current folder lies in (found by walking
    up to a folder holding memory.json and .git, as git finds its repository), else ~/.gitmem.
    A root that cannot be a folder (a file, a path under a file) is refused."""
    return locate_root(explicit, cwd)[0]


def locate_root(explicit: str | os.PathLike[str] | None = None,
                cwd: Path | None = None) -> tuple[Path, str]:
    """(root, how it was found: "--root", "GITMEM_ROOT", "current folder" or "default")."""
    if explicit:
        return usable_root(Path(caller.absolute(caller.expanduser(os.fspath(explicit)))), "--root"), "--root"
    env = caller.env("GITMEM_ROOT")
    if env:
        return usable_root(Path(caller.absolute(caller.expanduser(env))), "GITMEM_ROOT"), "GITMEM_ROOT"
    here = Path(caller.absolute(str(cwd or caller.cwd())))
    for folder in (here, *here.parents):
        if (folder / "memory.json").is_file() and (folder / ".git").exists():
            return folder, "current folder"
    return Path(caller.home()) / ".gitmem", "default"


def usable_root(root: Path, source: str) -> Path:
    """The root, or a one-line InvalidInputError naming why it cannot hold a store."""
    for folder in (root, *root.parents):
        try:
            if not folder.exists():
                continue
        except OSError as exc:
            raise InvalidInputError(f"{source} {root}: cannot be read ({exc.strerror})") from None
        if not folder.is_dir():
            where = "is a file, not a folder" if folder == root else f"lies under a file ({folder})"
            raise InvalidInputError(f"{source} {root} {where}")
        if folder == root and not os.access(root, os.R_OK | os.X_OK):
            raise InvalidInputError(f"{source} {root}: cannot be read (permission denied)")
        break
    return root


def missing_store_message(root: Path, source: str = "default", cwd: Path | None = None) -> str:
    """What to say when there is no store at `root`: where gitmem looked and how to go on."""
    if source == "--root":
        return (f"no gitmem store at {root} (given by --root): create one there with `gitmem init` "
                f"(`gitmem --root {root} init`)")
    if source == "GITMEM_ROOT":
        return f"no gitmem store at {root} (from GITMEM_ROOT): create one with `gitmem init`"
    here = Path(caller.absolute(str(cwd or caller.cwd())))
    return (f"no gitmem store found: looked in {here} and the folders above it, then {root}; "
            "create one with `gitmem init` (or name one with --root or GITMEM_ROOT)")


def validate_workspace_key(key: str) -> str:
    """Accept only an already-clean key; `../../x`, `global`, `con` and friends are refused, not
    rewritten, so a typo cannot silently create a different workspace."""
    if not key:
        raise InvalidInputError("workspace key must not be empty")
    problem = L.workspace_key_problem(key)
    if problem is not None:
        raise InvalidInputError(f"invalid workspace key {key!r}: {problem}")
    return key


def sanitize_workspace_key(raw: str) -> str:
    """Derive a key from a repo name or URL tail: lower-case, [a-z0-9-], at most 64 chars; a
    reserved name (`global`, `con`, ...) gets a `ws-` prefix."""
    text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:64].strip("-")
    if not text:
        raise InvalidInputError(f"cannot derive a workspace key from {raw!r}")
    return text if L.is_workspace_key(text) else f"ws-{text}"[:64].strip("-")


def key_from_remote_url(url: str) -> str:
    """`git@github.com:Owner/Repo.git` and `https://github.com/owner/repo` -> `owner-repo`."""
    text = url.strip().rstrip("/")
    if text.endswith(".git"):
        text = text[:-4]
    text = re.sub(r"^[a-z+]+://", "", text)
    text = text.split("@", 1)[-1]
    text = text.replace(":", "/")
    parts = [p for p in text.split("/") if p]
    tail = parts[-2:] if len(parts) >= 3 else parts[-1:]
    return sanitize_workspace_key("-".join(tail))


# Editors' swap, backup and lock files are never memory: committed, they would be pushed to every
# machine; scanned, one holding an unsaved secret would stop every write; a lock (Emacs' `.#name`
# is a dangling link) would stop them as a link (vim, Emacs, Kate, JetBrains, macOS Finder).
EDITOR_FILES = (".*.sw[a-p]", "*~", "4913", "#*#", ".#*", ".*.kate-swp", "*___jb_tmp___",
                "*___jb_old___", ".DS_Store")


def is_editor_file(relpath: str) -> bool:
    """Whether a file's name is an editor's swap, backup or lock file (EDITOR_FILES)."""
    name = relpath.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in EDITOR_FILES)


def topic_slug(topic: str) -> str:
    """File name (without .md) for a topic; refuses topics that would leave the layer folder."""
    text = topic.strip()
    if not text:
        raise InvalidInputError("topic must not be empty")
    if any(ord(ch) < 32 for ch in text):
        raise InvalidInputError(f"topic {topic!r} contains control characters")
    parts = re.split(r"[\\/]+", text)
    if text.startswith(("/", "\\", "~")) or ".." in parts or re.match(r"^[A-Za-z]:", text):
        raise InvalidInputError(f"topic {topic!r} would escape the layer folder")
    # A topic names a file: a secret in it would be committed in the path, past the text gate.
    from gitmem.secrets.scan import refuse_secrets

    refuse_secrets(text, "topic", overridable=False)
    slug = L.canonical_slug(text)
    if not slug:
        raise InvalidInputError(f"topic {topic!r} has no usable characters")
    problem = L.topic_name_problem(slug)
    if problem is not None:
        raise InvalidInputError(f"topic {topic!r} cannot be a file name: {problem}; choose another")
    return slug


def safe_join(root: Path, relpath: str) -> Path:
    """root/relpath, refusing anything that resolves outside root."""
    candidate = (root / relpath).resolve()
    base = root.resolve()
    if candidate != base and base not in candidate.parents:
        raise InvalidInputError(f"path {relpath!r} is outside the store")
    return root / relpath
