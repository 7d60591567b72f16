"""The server process: one per store, on state/serve.sock, answering many calls at once.

Every connection is first checked to come from the server's own user (the kernel's peer
credentials); a call is acknowledged as soon as it is read, and a call that may write starts only
once its client confirms it still waits, so a call whose client gave up or was killed is not run.

Each call runs on a thread of its own, for its caller (its folder, environment, time zone and
streams travel with it: gitmem/caller.py), and the process's own state never changes. So calls
and scheduled jobs run side by side: reads take no lock of the server's and never wait for a
write, a sync or a consolidation; writes take the store's lock as every gitmem process does.
The server only counts what is under way (`under_way`), to stop or leave when idle once all of
it is done. Whoever connects and goes away mid-request costs the server nothing.

On a `web` request the server serves the store's web page from this process as well (a
`PageHost` the CLI hands it: gitmem/web/hosted.py); each page request counts as use.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gitmem.errors import GitmemError
from gitmem.eventlog import log_event
from gitmem.fsio import FileLock
from gitmem.serve import state, wire
from gitmem.serve.schedule import Job, due
from gitmem.store import aftercall
from gitmem.store.serverstate import peer_credentials

Runner = Callable[[dict[str, Any]], dict[str, Any]]  # request -> {"code", "stdout", "stderr"}
JobAction = Callable[[], str]  # runs one scheduled job, returns a one-line result; raises on failure
REQUEST_READ_SECONDS = 30.0
POLL_SECONDS = 0.5  # how often the accept loop looks whether the store is still there
CLAIM_WAIT_SECONDS = 15.0  # a server started by a call waits this long for one it replaces


class PageHost(Protocol):
    """The web page a server hosts on request (gitmem/web/hosted.py, wired in by the CLI)."""

    def host(self, request: dict[str, Any]) -> dict[str, Any]: ...

    def address(self) -> str | None: ...

    def close(self) -> None: ...


class ServerRunningError(GitmemError):
    """Another server already serves this store."""

    exit_code = 3


@dataclass
class Server:
    """The warm server of the store at `root`."""

    root: Path
    runner: Runner
    identity: str
    jobs: list[tuple[Job, JobAction]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    under_way: int = 0  # calls and jobs running now
    done: threading.Condition = field(default_factory=threading.Condition)
    requests: int = 0
    refused: int = 0
    idle_seconds: float = 0.0  # > 0: exit after this long without a call (a server started by a call)
    auto_started: bool = False
    page: PageHost | None = None  # the web page it serves when `gitmem web` asks
    last_call: float = field(default_factory=time.monotonic)
    _lock: FileLock | None = None
    _sock: socket.socket | None = None
    # stop() writes a byte here so the accept loop wakes at once (a signal, a `stop` request)
    # instead of at its next poll.
    _wake: tuple[socket.socket, socket.socket] | None = None
    _waiting: selectors.BaseSelector | None = None  # the socket and the wake-up end (no fd limit)

    @property
    def socket_path(self) -> str:
        return wire.socket_path(str(self.root))

    # -- start and stop ----------------------------------------------------------------------
    def claim(self, wait: float = 0.0) -> None:
        """Become this store's one server, or raise ServerRunningError naming the other (after
        waiting up to `wait` seconds for it to go: a server replacing one of another version)."""
        self._lock = FileLock(self.root / state.LOCK_FILE)
        deadline = time.monotonic() + wait
        got = self._lock.try_acquire()
        while not got and time.monotonic() < deadline:
            time.sleep(0.1)
            got = self._lock.try_acquire()
        if not got:
            os.close(self._lock.fd)
            self._lock = None
            other = state.read(self.root) or {}
            raise ServerRunningError(
                f"a gitmem server already serves {self.root} (pid {other.get('pid', '?')}); "
                "`gitmem serve --stop` stops it")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # left by a server that was killed: nobody listens there
        self._sock = wire.bind(self.socket_path)
        self._sock.settimeout(POLL_SECONDS)  # a client gone between select and accept
        self._wake = socket.socketpair()
        for end in self._wake:
            end.setblocking(False)
        self._waiting = selectors.DefaultSelector()
        self._waiting.register(self._sock, selectors.EVENT_READ)
        self._waiting.register(self._wake[0], selectors.EVENT_READ)
        with contextlib.suppress(OSError):
            os.chmod(self.root / wire.STATE_DIR, 0o700)  # the store's local state: the owner's only

    def serve_forever(self) -> None:
        """Accept requests and run the schedule until stopped or the store goes away."""
        assert self._sock is not None, "claim() first"
        started = time.time()
        for job, _action in self.jobs:
            if job.enabled:
                job.start(started)
        self._write_state(started)
        log_event(self.root, {"event": "serve-start", "pid": os.getpid()})
        scheduler = threading.Thread(target=self._schedule_loop, name="gitmem-schedule", daemon=True)
        scheduler.start()
        reason = "stopped"
        try:
            while not self.stopping.is_set():
                if not self._store_present():
                    reason = "store-gone"
                    break
                if self._idle():
                    reason = "idle"
                    break
                if not self._calling():
                    continue
                try:
                    conn, _ = self._sock.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self.stopping.is_set():
                        break
                    raise
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        finally:
            self.stopping.set()
            # Calls and jobs under way finish before the socket goes (bounded: a hung job
            # does not keep a stopped server alive).
            with self.done:
                self.done.wait_for(lambda: self.under_way == 0, timeout=60.0)
            self._close(reason, started)

    def stop(self) -> None:
        self.stopping.set()
        if self._wake is not None:
            with contextlib.suppress(OSError):  # full or closed: a wake-up is already due
                self._wake[1].send(b"x")

    def _calling(self) -> bool:
        """Wait up to POLL_SECONDS for a caller; False when none came (or stop() woke it)."""
        assert self._waiting is not None
        ready = [key.fileobj for key, _ in self._waiting.select(POLL_SECONDS)]
        return self._sock in ready and not self.stopping.is_set()

    def stop_on_signals(self) -> None:
        """SIGTERM (systemctl stop, launchctl) and SIGINT stop the server cleanly."""
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: self.stop())

    def _idle(self) -> bool:
        """A server started by a call, with no call for idle_seconds and nothing under way."""
        if self.idle_seconds <= 0 or time.monotonic() - self.last_call < self.idle_seconds:
            return False
        with self.done:
            return self.under_way == 0

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """One request of the hosted page: use, like a call, for the idle timer."""
        self.last_call = time.monotonic()
        try:
            with self._counted():
                yield
        finally:
            self.last_call = time.monotonic()

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        """One call or job under way for the time of the block."""
        with self.done:
            self.under_way += 1
        try:
            yield
        finally:
            with self.done:
                self.under_way -= 1
                self.done.notify_all()

    def _store_present(self) -> bool:
        return (self.root / "memory.json").is_file() and (self.root / ".git").exists()

    def _close(self, reason: str, started: float) -> None:
        if self.page is not None:
            self.page.close()
        if self._waiting is not None:
            self._waiting.close()
        if self._sock is not None:
            self._sock.close()
        for end in self._wake or ():
            end.close()
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)
        if self._store_present():
            with contextlib.suppress(OSError):
                state.write(self.root, {**self._state(started), "pid": None,
                                        "stopped": state.now_iso(), "reason": reason})
            log_event(self.root, {"event": "serve-stop", "pid": os.getpid(), "reason": reason,
                                  "requests": self.requests})
        if self._lock is not None:
            with contextlib.suppress(OSError):
                self._lock.release()

    # -- requests ----------------------------------------------------------------------------
    def _handle(self, conn: socket.socket) -> None:
        """One connection: check who it is, read the request, answer it; a client gone away is
        not an error. Another user is refused before a byte of the request is read."""
        with conn, contextlib.suppress(OSError, ConnectionError):
            if not self._same_user(conn):
                return
            conn.settimeout(REQUEST_READ_SECONDS)
            request = wire.receive(conn)
            self.last_call = time.monotonic()
            refusal = self.refusal(request)
            if refusal is not None:
                try:
                    wire.send(conn, refusal)  # before stopping: the process may end right after
                finally:
                    if request.get("op") == "stop":
                        self.stop()
                return
            if request.get("op") == "web":
                wire.send(conn, self.host_page(request))
                return
            write = _is_write(request)
            wire.send(conn, {"ack": True, "confirm": write, "pid": os.getpid()})
            if write and wire.receive(conn).get("op") != "go":
                return  # the caller went away (or gave up) before its write started: not run
            conn.settimeout(None)
            with aftercall.until_answered():
                reply = self.run(request)
                self.last_call = time.monotonic()
                wire.send(conn, reply)

    def _same_user(self, conn: socket.socket) -> bool:
        _pid, uid = peer_credentials(conn)
        if uid is None or uid == os.getuid():
            return True
        self.refused += 1
        log_event(self.root, {"event": "serve-refused", "uid": uid})
        wire.send(conn, {"ran": False, "reason": "refused: this server answers its owner only"})
        # Read what the caller already sent before closing: a socket closed with unread bytes
        # resets the connection, and the caller would lose the refusal it was sent.
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(1.0)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass
        return False

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request, without the acknowledgement (tests and one-shot callers)."""
        refusal = self.refusal(request)
        if request.get("op") == "stop":
            self.stop()
        if refusal is not None:
            return refusal
        return self.host_page(request) if request.get("op") == "web" else self.run(request)

    def refusal(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to anything but a call this server runs (ping, stop, another version)."""
        op = request.get("op")
        if op == "stop":  # the caller stops the server once the reply is on its way
            return {"ran": False, "reason": "stopping", "pid": os.getpid()}
        if op == "ping":
            return {"ran": False, "reason": "ping", "pid": os.getpid(), "identity": self.identity}
        if op not in ("run", "web"):
            return {"ran": False, "reason": f"unknown request {op!r}"}
        if request.get("protocol") != wire.PROTOCOL or request.get("identity") != self.identity:
            return {"ran": False, "reason": f"the server runs gitmem {self.identity} "
                                            f"(protocol {wire.PROTOCOL})"}
        return None

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one call now, on the caller's thread, beside whatever else runs."""
        start = time.perf_counter()
        with self._counted():
            with self.done:
                self.requests += 1
            reply = self.runner(request)
        ms = round((time.perf_counter() - start) * 1000, 1)
        return {"ran": True, "pid": os.getpid(), "ms": ms, **reply}

    def host_page(self, request: dict[str, Any]) -> dict[str, Any]:
        """Serve the web page from this process (or hand back the one served): its start URL."""
        if self.page is None:
            return {"ran": False, "reason": "this server hosts no page"}
        with self._counted():
            reply = self.page.host(request)
        if reply.get("url") and not reply.get("reused"):
            log_event(self.root, {"event": "serve-web", "pid": os.getpid(), "address": reply.get("address")})
            with contextlib.suppress(OSError):
                self._write_state(None)
        return {"ran": True, "pid": os.getpid(), **reply}

    # -- the schedule ------------------------------------------------------------------------
    def _schedule_loop(self) -> None:
        while not self.stopping.is_set():
            nxt = due([job for job, _ in self.jobs])
            wait = POLL_SECONDS * 4 if nxt is None else max(0.0, nxt.next_at - time.time())
            if self.stopping.wait(min(wait, 60.0)) or nxt is None or time.time() < nxt.next_at:
                continue
            action = next(a for job, a in self.jobs if job is nxt)
            if self.stopping.is_set() or not self._store_present():
                return
            with self._counted():
                self.run_job(nxt, action)

    def run_job(self, job: Job, action: JobAction) -> None:
        """Run one job now (beside any calls), log it and plan its next run."""
        start = time.time()
        try:
            result, ok = action(), True
        except Exception as exc:  # noqa: BLE001 - a failed run is logged and retried later
            result, ok = f"failed: {type(exc).__name__}: {exc}", False
        seconds = time.time() - start
        job.finished(time.time(), result, ok, seconds)
        log_event(self.root, {"event": "serve-job", "job": job.name, "ok": ok, "result": result,
                              "seconds": round(seconds, 3), "failures": job.failures,
                              "next": job.as_json()["next"]})
        with contextlib.suppress(OSError):
            self._write_state(None)

    # -- state/serve.json --------------------------------------------------------------------
    _started: float = 0.0

    def _state(self, started: float | None) -> dict[str, Any]:
        if started is not None:
            self._started = started
        return {"pid": os.getpid(), "identity": self.identity, "protocol": wire.PROTOCOL,
                "socket": self.socket_path, "started": state.iso(self._started),
                "autoStarted": self.auto_started,
                "idleMinutes": round(self.idle_seconds / 60, 3) if self.idle_seconds else None,
                "web": self.page.address() if self.page is not None else None,
                "jobs": {job.name: job.as_json() for job, _ in self.jobs}}

    def _write_state(self, started: float | None) -> None:
        state.write(self.root, self._state(started))


def _is_write(request: dict[str, Any]) -> bool:
    """Whether the call may write: any verb but the read verbs (the first word that is not an
    option or an option's value, as the client parses it)."""
    argv = [str(a) for a in request.get("argv") or []]
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--root", "--workspace", "-w"):
            index += 2
            continue
        if not arg.startswith("-"):
            return arg not in wire.READ_VERBS
        index += 1
    return True
