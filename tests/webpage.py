"""The web page's tests share this: a real `gitmem web` process and an HTTP client that can set
any header (Host, Origin, Cookie)."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from support import GIT_ENV, git


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str


@dataclass
class WebPage:
    """One running `gitmem web --no-open`: its address, its token, and a signed-in client."""

    process: subprocess.Popen[str]
    start_url: str
    root: Path
    cookie: str = ""
    csrf: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return int(urlsplit(self.start_url).port or 0)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, *, body: dict[str, str] | None = None,
                headers: dict[str, str] | None = None, cookie: bool = True) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if cookie and self.cookie:
            sent["Cookie"] = self.cookie
        data = None
        if body is not None:
            data = urlencode(body).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        answer = Answer(reply.status, {k.lower(): v for k, v in reply.getheaders()},
                        reply.read().decode("utf-8", "replace"))
        conn.close()
        return answer

    def get(self, path: str, **kwargs: object) -> Answer:
        return self.request("GET", path, **kwargs)  # type: ignore[arg-type]

    def post(self, path: str, form: dict[str, str], *, origin: str | None = "",
             csrf: str | None = "") -> Answer:
        """A form post as the page sends it (its Origin and CSRF token unless given)."""
        headers = {} if origin is None else {"Origin": origin or self.origin}
        fields = dict(form)
        if csrf is not None:
            fields["csrf"] = csrf or self.csrf
        return self.request("POST", path, body=fields, headers=headers)

    def sign_in(self) -> None:
        path = self.start_url[len(self.origin):]
        answer = self.get(path, cookie=False)
        assert answer.status == 303, answer
        self.cookie = answer.headers["set-cookie"].split(";", 1)[0]
        marker = '<meta name="csrf" content="'
        self.csrf = self.get("/").text.split(marker, 1)[1].split('"', 1)[0]


def start_web(root: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> WebPage:
    process = subprocess.Popen(
        [sys.executable, "-m", "gitmem", "--root", str(root), "web", "--no-open"],
        cwd=cwd or root.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **GIT_ENV, "GITMEM_SERVE": "off", **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        process.kill()
        raise AssertionError(f"gitmem web printed {line!r}: {process.stderr.read() if process.stderr else ''}")
    return WebPage(process, line, root)


def stop_web(page: WebPage) -> None:
    page.process.terminate()
    try:
        page.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        page.process.kill()
        page.process.wait()


def commits(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()
