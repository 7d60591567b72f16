"""A loopback smart-HTTP git server for tests: `git http-backend` behind a threaded http.server."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO

# Every request and backend run is bounded so a wedged client cannot hang the test session.
_TIMEOUT = 30.0
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Request:
    """One request the server answered: what was asked, and with which Basic credentials."""

    method: str
    path: str
    user: str | None  # the Basic user name sent (None: no Authorization header)
    authorized: bool


@dataclass
class Gate:
    """Holds every request until `release` is set (`arrived` is set when one waits there), then
    answers each after `delay` seconds: a remote that is slow, or that answers when a test says."""

    arrived: threading.Event
    release: threading.Event
    delay: float = 0.0

    @classmethod
    def closed(cls) -> Gate:
        return cls(threading.Event(), threading.Event())

    @classmethod
    def slow(cls, delay: float) -> Gate:
        gate = cls(threading.Event(), threading.Event(), delay)
        gate.release.set()
        return gate

    def pass_through(self) -> None:
        self.arrived.set()
        self.release.wait(_TIMEOUT)
        if self.delay:
            time.sleep(self.delay)


class _GitHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the project root, the required password, and a request log."""

    daemon_threads = True

    def __init__(self, project_root: Path, token: str | None, log: list[Request],
                 gate: Gate | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.gate = gate
        self.project_root = project_root
        self.token = token
        self.git = shutil.which("git") or "git"
        self.log = log


class _Handler(BaseHTTPRequestHandler):
    """Translate one HTTP request into one `git http-backend` CGI run."""

    server: _GitHTTPServer
    timeout = _TIMEOUT

    def do_GET(self) -> None:
        """Serve info/refs and other GET endpoints."""
        self._run_backend()

    def do_POST(self) -> None:
        """Serve git-upload-pack / git-receive-pack."""
        self._run_backend()

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: pytest output is not the place for access logs."""

    def _authorized_user(self) -> str | None:
        """Return the user name when auth is off or the Basic password matches, else None."""
        sent_user, password = self._basic()
        ok = self.server.token is None or password == self.server.token
        self.server.log.append(Request(self.command, self.path, sent_user, ok))
        if self.server.token is None:
            return sent_user or "anonymous"
        return (sent_user or "user") if ok else None

    def _basic(self) -> tuple[str | None, str | None]:
        """(user, password) of the Basic Authorization header, or (None, None)."""
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None, None
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None, None
        return user, password

    def _deny(self) -> None:
        """Answer 401 with a Basic challenge."""
        body = b"authentication required\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="gitmem-test"')
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def _cgi_env(self, user: str) -> dict[str, str]:
        """Build the CGI environment git http-backend expects."""
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/"),
            "GIT_PROJECT_ROOT": str(self.server.project_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            # Push is allowed for whoever got past the auth check (everyone when no token).
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.receivepack",
            "GIT_CONFIG_VALUE_0": "true",
            "REMOTE_USER": user,
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
        }
        length = self.headers.get("Content-Length")
        if length is not None:
            env["CONTENT_LENGTH"] = length
        for header, var in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(header):
                env[var] = self.headers[header]
        return env

    def _copy_body(self, sink: IO[bytes]) -> None:
        """Stream the request body (Content-Length or chunked) into the backend's stdin."""
        try:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        break
                    if not self._copy_bytes(sink, size):
                        return
                    self.rfile.readline()  # CRLF after each chunk
            else:
                self._copy_bytes(sink, int(self.headers.get("Content-Length") or 0))
        except (OSError, ValueError):
            pass  # a broken client shows up as a backend error; nothing to add here
        finally:
            with suppress(OSError):
                sink.close()

    def _copy_bytes(self, sink: IO[bytes], remaining: int) -> bool:
        """Copy exactly `remaining` bytes of the request; False when the client hung up early."""
        while remaining:
            data = self.rfile.read(min(remaining, _CHUNK))
            if not data:
                return False
            sink.write(data)
            remaining -= len(data)
        return True

    def _run_backend(self) -> None:
        """Run git http-backend for this request and relay its CGI response."""
        user = self._authorized_user()
        if user is None:
            self._deny()
            return
        if self.server.gate is not None:
            self.server.gate.pass_through()
        with tempfile.TemporaryFile() as errors:
            proc = subprocess.Popen(
                [self.server.git, "http-backend"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=self._cgi_env(user),
            )
            assert proc.stdin is not None and proc.stdout is not None
            # Feed stdin from a helper thread so a large response cannot deadlock the pipes.
            feeder = threading.Thread(target=self._copy_body, args=(proc.stdin,), daemon=True)
            feeder.start()
            output = proc.stdout.read()
            proc.stdout.close()
            try:
                proc.wait(timeout=_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            feeder.join(timeout=_TIMEOUT)
        self._relay(output)

    def _relay(self, output: bytes) -> None:
        """Parse the CGI header block (with Status:) and send headers plus body."""
        head, body = _split_cgi(output)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.strip().lower() == "status":
                status = int(value.strip().split()[0])
            elif name.strip():
                headers.append((name.strip(), value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True


def _split_cgi(output: bytes) -> tuple[bytes, bytes]:
    """Split CGI output at the first blank line into (header block, body)."""
    found = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := output.find(sep)) >= 0]
    if not found:
        return output, b""
    at, width = min(found)
    return output[:at], output[at + width :]


class GitHTTP(str):
    """The base URL of a running server (a str), with the requests it answered so far."""

    requests: list[Request]


@contextmanager
def serve_git_http(project_root: Path, *, token: str | None = None,
                   gate: Gate | None = None) -> Iterator[GitHTTP]:
    """Serve the repositories under `project_root` over smart HTTP on 127.0.0.1; yield the base URL.

    With `token`, every request needs HTTP Basic auth whose password is the token (any user name).
    The yielded URL's `requests` lists every request with the user name it carried. With
    `gate`, every request passes through it first (held until released, then delayed).
    """
    if shutil.which("git") is None:
        raise RuntimeError("the git command-line tool is required for the HTTP test server")
    log: list[Request] = []
    server = _GitHTTPServer(Path(project_root).resolve(), token, log, gate)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        base = GitHTTP(f"http://{host!s}:{port}/")
        base.requests = log
        yield base
    finally:
        if gate is not None:
            gate.release.set()  # nothing waits past the end
        server.shutdown()
        server.server_close()
        thread.join(timeout=_TIMEOUT)


@contextmanager
def serve_silence() -> Iterator[str]:
    """A loopback HTTP address that accepts connections and never answers; yields its base URL.

    For time-out tests: a client that waits for it forever is a client that hangs.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with suppress(OSError):
                conn, _ = listener.accept()
                held.append(conn)  # keep it open, say nothing

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(timeout=_TIMEOUT)
        for conn in held:
            conn.close()
        listener.close()
