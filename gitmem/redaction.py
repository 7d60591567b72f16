"""Secrets never leave the process: redaction of tokens and credential-carrying URLs (pure).

Kept apart from the git layer so that logs, hooks and error messages can redact without loading
pygit2.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

TOKEN_ENV = "GITMEM_GIT_TOKEN"

# Userinfo of any scheme://user:secret@host URL; greedy so an unescaped "@" in a password is covered.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s]+)@")
# Tokens read from files during this process, so they are hidden in every later message too.
_SECRETS: set[str] = set()


def register_secret(secret: str | None) -> None:
    """Remember a secret so redact() hides it from now on."""
    if secret and secret.strip():
        _SECRETS.add(secret.strip())


def redact(text: str, tokens: Iterable[str] = ()) -> str:
    """Hide URL userinfo and every known token (env, registered, given) behind ***."""
    out = _URL_USERINFO.sub(lambda m: m["scheme"] + "***@", text)
    secrets = {t for t in (*tokens, os.environ.get(TOKEN_ENV, ""), *_SECRETS) if t}
    # Longest first, so a token that contains another is hidden whole.
    for secret in sorted(secrets, key=len, reverse=True):
        out = out.replace(secret, "***")
    return out


def strip_credentials(url: str) -> tuple[str, str | None]:
    """Return (url without a password or token in its userinfo, the removed secret or None)."""
    if "://" not in url:
        return url, None
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    user, secret = parts.username, parts.password
    if secret is None and user is not None and user in known_tokens():
        user, secret = None, user  # the token was given as the user name
    netloc = f"{user}@{host}" if user else host
    return urlunsplit(parts._replace(netloc=netloc)), secret


def known_tokens() -> set[str]:
    """Tokens this process knows about: the environment's and the registered ones."""
    env = os.environ.get(TOKEN_ENV, "").strip()
    return {*_SECRETS, env} - {""}
