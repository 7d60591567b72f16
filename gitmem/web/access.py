"""Who may use the page: the loopback Host, the start token, the session cookie, same-origin
writes with a CSRF token, and the security headers every answer carries.

The page serves one person on one machine. A random token is printed once at start; the first
request that carries it (`/?token=...`) gets an HttpOnly, SameSite=Strict cookie and is sent to
the clean URL, so the token leaves the address bar and the history. The Host check stops DNS
rebinding (a foreign name resolving to 127.0.0.1); the Origin check and the CSRF token stop
another site's form from posting here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

COOKIE = "gitmem_web"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
       " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" makes a form post send `Origin: null`
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]

Scope = dict[str, Any]


@dataclass
class Access:
    """The secrets of one start of the page and the checks made with them."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def _derive(self, purpose: str) -> str:
        return hmac.new(self.token.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    @property
    def session(self) -> str:
        return self._derive("session")

    @property
    def csrf(self) -> str:
        return self._derive("csrf")

    def hosts(self) -> set[str]:
        return {f"{name}:{self.port}" for name in LOOPBACK_NAMES}

    def origins(self) -> set[str]:
        return {f"http://{host}" for host in self.hosts()}

    def host_ok(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts()

    def cookie_ok(self, cookie_header: str | None) -> bool:
        if not cookie_header:
            return False
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie_header)
        except Exception:  # a malformed Cookie header is no session
            return False
        morsel = jar.get(COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value, self.session)

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given, self.token)

    def write_ok(self, origin: str | None, csrf: str | None) -> bool:
        """A write must come from this page's own origin and carry its CSRF token."""
        return (origin is not None and origin.lower() in self.origins()
                and csrf is not None and hmac.compare_digest(csrf, self.csrf))

    def start_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _plain(send: Any, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *HEADERS, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: refuses what `Access` does not allow before the app sees it."""

    def __init__(self, app: Any, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.access.host_ok(_header(scope, b"host")):
            await _plain(send, 421, "refused: this page answers only on its loopback address")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await self._admit(scope, send, query)
            return
        if not self.access.cookie_ok(_header(scope, b"cookie")):
            await _plain(send, 401, "not signed in: open the address `gitmem web` printed")
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _admit(self, scope: Scope, send: Any, query: dict[str, str]) -> None:
        """The start link: set the session cookie and go to the same address without the token."""
        if not self.access.token_ok(query.pop("token")):
            await _plain(send, 403, "refused: that token is not this page's")
            return
        rest = urlencode(query)
        target = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = f"{COOKIE}={self.access.session}; HttpOnly; SameSite=Strict; Path=/"
        await _plain(send, 303, "signed in", [(b"location", target.encode()),
                                               (b"set-cookie", cookie.encode())])
