"""Secrets never leave the process: redaction of tokens and credential-carrying URLs (pure).

Kept apart from the git layer so that logs, hooks and error messages can redact without loading
pygit2.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

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


def redact(text: str, tokens: Iterable[str] = ()) -> str:
    """Hide URL userinfo, credential query parameters and every known token behind ***."""
    out = _URL_USERINFO.sub(lambda m: m["scheme"] + "***@", text)
    out = _QUERY_SECRET.sub(lambda m: m["lead"] + "***", out)
    secrets = {t for t in (*tokens, os.environ.get(TOKEN_ENV, ""), *_SECRETS) if t}
    # Longest first, so a token that contains another is hidden whole.
    for secret in sorted(secrets, key=len, reverse=True):
        out = out.replace(secret, "***")
    return out


# Credentials recognisable by their shape, hidden wherever stored text is printed (search hits, the
# context card). Writes refuse such text with a real detector (gitmem.secrets: detect-secrets);
# this is the cheap net for what reached the store before, by hand or with --allow-secret, on read
# verbs that must not load the detector. Each pattern is a documented token format.
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9_]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    r"|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"  # AWS access key id
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|sk-(?:proj-|ant-|svcacct-|admin-)?(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_-]{50,}"  # npm, PyPI
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"  # JWT
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/-]{20,}=*"  # an Authorization header's token
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.DOTALL)
# `password = hunter2`, `api_key: abc...`: the value after a credential-sounding name.
_NAMED_SECRET = re.compile(
    r"(?P<name>\b[\w.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)"
    r"[\w.-]*[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"'`,;]{6,})", re.IGNORECASE)


def hide_secrets(text: str) -> str:
    """`redact` plus stored credentials recognised by their shape, each shown as ***."""
    out = redact(text)
    out = _PRIVATE_KEY.sub("***", out)
    out = _TOKEN_SHAPES.sub("***", out)
    return _NAMED_SECRET.sub(lambda m: m["name"] + "***" if _looks_made_up(m["value"]) else m[0], out)


def _looks_made_up(value: str) -> bool:
    """A value with a digit or a symbol among letters: a password, not a word of prose."""
    return value != "***" and any(c.isdigit() or not c.isalnum() for c in value)


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
    env = os.environ.get(TOKEN_ENV, "").strip()
    return {*_SECRETS, env} - {""}


def internal_error(exc: BaseException) -> str:
    """The one line an unexpected exception becomes (its message redacted, never a traceback)."""
    return (f"gitmem: internal error: {type(exc).__name__}: {redact(str(exc))} "
            "(a bug in gitmem; GITMEM_DEBUG=1 shows where)")
