"""Secrets never leave the process: redaction of tokens and credential-carrying URLs (pure).

Kept apart from the git layer so that logs, hooks and error messages can redact without loading
pygit2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from gitmem import caller

TOKEN_ENV = "GITMEM_GIT_TOKEN"

# Userinfo of any scheme://user:secret@host URL; greedy so an unescaped "@" in a password is covered.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s]+)@")
# Names of query parameters that carry a credential: ?access_token=, &private_token=, ?key=, ...
_SECRET_PARAM = re.compile(
    r"^[A-Za-z0-9_.\-]*(?:token|key|secret|passw(?:or)?d|pwd|auth|sig(?:nature)?|credential)"
    r"[A-Za-z0-9_.\-]*$", re.IGNORECASE)
# The value of such a parameter wherever it appears in text (a URL in an error message, a log).
_QUERY_SECRET = re.compile(
    r"(?P<lead>[?&;][A-Za-z0-9_.\-]*(?:token|key|secret|passw(?:or)?d|pwd|auth|sig(?:nature)?"
    r"|credential)[A-Za-z0-9_.\-]*=)(?P<value>[^&#\s'\"]+)", re.IGNORECASE)
# Tokens read from files during this process, so they are hidden in every later message too.
_SECRETS: set[str] = set()


def register_secret(secret: str | None) -> None:
    """Remember a secret (and its percent-encoded spelling) so redact() hides it from now on."""
    if secret and secret.strip():
        _SECRETS.add(secret.strip())
        _SECRETS.add(quote(secret.strip(), safe=""))


def secrets_in_force(tokens: Iterable[str] = ()) -> frozenset[str]:
    """The literal secrets a redaction hides now: these tokens, the caller's token, the registered."""
    return frozenset(t for t in (*tokens, (caller.env(TOKEN_ENV) or ""), *_SECRETS) if t)


def redact(text: str, tokens: Iterable[str] = ()) -> str:
    """Hide URL userinfo, credential query parameters and every known token behind ***."""
    out = _URL_USERINFO.sub(lambda m: m["scheme"] + "***@", text)
    out = _QUERY_SECRET.sub(lambda m: m["lead"] + "***", out)
    secrets = secrets_in_force(tokens)
    # Longest first, so a token that contains another is hidden whole.
    for secret in sorted(secrets, key=len, reverse=True):
        out = out.replace(secret, "***")
    return out


def strip_credentials(url: str) -> tuple[str, str | None]:
    """(URL without a password, token user name or credential query parameter, the secret or None).

    The secret is percent-decoded, as git itself decodes URL userinfo: `p%40ss` is `p@ss`.
    """
    if "://" not in url:
        return url, None
    parts = urlsplit(url)
    secrets: list[str] = []
    netloc = parts.netloc
    if parts.username is not None or parts.password is not None:
        host = netloc.rpartition("@")[2]
        user = parts.username
        if parts.password is not None:
            secrets.append(unquote(parts.password))
        elif user is not None and unquote(user) in known_tokens():
            secrets.append(unquote(user))  # the token was given as the user name
            user = None
        netloc = f"{user}@{host}" if user else host
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not _SECRET_PARAM.match(k)]
        secrets += [v for k, v in pairs if _SECRET_PARAM.match(k) and v]
        if len(kept) != len(pairs):
            query = urlencode(kept)
    for secret in secrets:
        register_secret(secret)
    clean = urlunsplit(parts._replace(netloc=netloc, query=query))
    return clean, secrets[0] if secrets else None


def known_tokens() -> set[str]:
    """Tokens this process knows about: the environment's and the registered ones."""
    env = (caller.env(TOKEN_ENV) or "").strip()
    return {*_SECRETS, env} - {""}


def internal_error(exc: BaseException) -> str:
    """The one line an unexpected exception becomes (its message redacted, never a traceback)."""
    return (f"gitmem: internal error: {type(exc).__name__}: {redact(str(exc))} "
            "(a bug in gitmem; GITMEM_DEBUG=1 shows where)")
