"""Store root resolution, workspace keys, topic slugs and path-safety checks (pure)."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from gitmem.errors import InvalidInputError

DERIVED_DIRS: tuple[str, ...] = ("index", "state", "digests", "logs")
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_SLUG_DROP = re.compile(r"[^\w]+", re.UNICODE)


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--root`, else $GITMEM_ROOT, else ~/.gitmem."""
    if explicit:
        return Path(explicit).expanduser().absolute()
    env = os.environ.get("GITMEM_ROOT")
    if env:
        return Path(env).expanduser().absolute()
    return (Path.home() / ".gitmem").absolute()


def validate_workspace_key(key: str) -> str:
    """Accept only an already-clean key; `../../x` and friends are refused, not rewritten."""
    if not _KEY_RE.match(key) or key == "global":
        raise InvalidInputError(
            f"invalid workspace key {key!r}: use 1-64 of a-z, 0-9 and '-', starting with a letter or digit"
        )
    return key


def sanitize_workspace_key(raw: str) -> str:
    """Derive a key from a repo name or URL tail: lower-case, [a-z0-9-], at most 64 chars."""
    text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:64].strip("-")
    if not text:
        raise InvalidInputError(f"cannot derive a workspace key from {raw!r}")
    return "ws-global" if text == "global" else text


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
    slug = _SLUG_DROP.sub("-", text.lower()).strip("-_")[:80].strip("-_")
    if not slug:
        raise InvalidInputError(f"topic {topic!r} has no usable characters")
    return slug


def safe_join(root: Path, relpath: str) -> Path:
    """root/relpath, refusing anything that resolves outside root."""
    candidate = (root / relpath).resolve()
    base = root.resolve()
    if candidate != base and base not in candidate.parents:
        raise InvalidInputError(f"path {relpath!r} is outside the store")
    return root / relpath
