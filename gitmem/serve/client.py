"""The thin client: hand a CLI call to the store's warm server, and start one when none runs.

`forward(argv)` runs before the command line is even loaded. It costs a few stat calls when no
server is up; when one is, the server runs the very same command with this process's arguments,
folder, environment and standard input, and this process prints what it printed and exits with
its code. Any doubt (no socket, nobody listening, a server that does not acknowledge the call
within ACK_TIMEOUT, an unreadable reply before the command ran) means None: the caller runs the
command itself, as without a server. When nobody listens for an existing store, or the server
is of another gitmem, the call also starts a server in the background (gitmem/serve/autostart.py)
for the calls after it.
"""

from __future__ import annotations

import _socket
import os
import sys

from gitmem import caller
from gitmem.serve import wire

# Verbs the server answers. Others (sync, init, new with its editor, hooks...) always run here.
ROUTED = wire.READ_VERBS | wire.WRITE_VERBS
_VALUE_OPTIONS = ("--root", "--workspace", "-w")
CONNECT_TIMEOUT = 2.0
# A server acknowledges a call as soon as it has read it; one that does not within this time
# (stopped with SIGSTOP, hung, swamped) is not waited for: the call runs here.
ACK_TIMEOUT = 3.0
ANSWER_TIMEOUT = 900.0  # once acknowledged: the server bounds its own waits
# An agent's hook (`--hook`) waits on the server no longer than this, then answers itself: the
# agent waits on the hook (before every prompt, for the prompt hook; Claude Code gives it 10 s),
# and a server on a swamped machine may be slow to answer.
HOOK_ANSWER_TIMEOUT = 3.0


def identity() -> str:
    """What must match between client and server: the version and the installed code's place."""
    import gitmem

    return f"{gitmem.__version__} {os.path.dirname(os.path.abspath(gitmem.__file__))}"


def _parse(argv: list[str]) -> tuple[str | None, str | None, bool] | None:
    """(--root value, verb, verbose) from the global options; None when they are not plain."""
    root: str | None = None
    verbose = bool(caller.env("GITMEM_VERBOSE"))
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("-v", "--verbose"):
            verbose = True
        elif arg in _VALUE_OPTIONS:
            if index + 1 >= len(argv):
                return None
            if arg == "--root":
                root = argv[index + 1]
            index += 1
        elif arg.startswith(("--root=", "--workspace=")):
            root = arg.partition("=")[2] if arg.startswith("--root=") else root
        elif arg.startswith("-"):
            return None  # --help, --version, something unknown: the command line says what
        else:
            return root, arg, verbose
        index += 1
    return None


def store_root(explicit: str | None, cwd: str) -> str:
    """The store a call would use, found as gitmem.store.paths.locate_root finds it."""
    chosen = explicit or caller.env("GITMEM_ROOT")
    if chosen:
        return os.path.join(cwd, caller.expanduser(chosen))
    folder = cwd
    while True:
        if os.path.isfile(os.path.join(folder, "memory.json")) and \
                os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.join(caller.home(), ".gitmem")
        folder = parent


def _note(verbose: bool, message: str) -> None:
    if verbose:
        sys.stderr.write(f"gitmem: note: {message}\n")
        sys.stderr.flush()


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def serve_mode() -> str:
    """GITMEM_SERVE: "off" (never ask a server), "manual" (use a running one, never start one),
    anything else: use one and start one when none runs."""
    value = (caller.env("GITMEM_SERVE") or "").lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    return "manual" if value == "manual" else "auto"


def forward(argv: list[str]) -> int | None:
    """The exit code of the call as the server ran it, or None: run it in this process."""
    mode = serve_mode()
    if mode == "off":
        return None
    parsed = _parse(argv)
    if parsed is None or parsed[1] not in ROUTED:
        return None
    explicit, _verb, verbose = parsed
    try:
        cwd = caller.cwd()
    except OSError:
        return None
    root = store_root(explicit, cwd)
    path = wire.socket_path(root)
    if not os.path.exists(path):
        _note(verbose, f"no server for this store ({path} is absent); running in this process")
        _start(mode, root, verbose)
        return None
    try:
        sock = wire.connect(path, CONNECT_TIMEOUT)
    except OSError as exc:
        _note(verbose, f"no server answers at {path} ({exc.strerror or exc}); running in this process")
        if not isinstance(exc, TimeoutError):  # nobody listens: a killed server's socket
            _start(mode, root, verbose)
        return None
    try:
        code = _exchange(sock, argv, cwd, verbose)
    finally:
        sock.close()
    if code == _OTHER_VERSION:
        _replace(mode, root, verbose)
        return None
    return code


_OTHER_VERSION = -1  # _exchange: the server runs another gitmem


def start_if_absent(explicit: str | None) -> str | None:
    """For a long-lived caller whose own calls never go through a server (`gitmem mcp` answers
    in its own process): start the store's server in the background when none of this gitmem
    runs, so the agent's other calls (its shell, its hooks) are served. What happened, or None
    when nothing was to do (a server of this gitmem answers, or starting is turned off)."""
    if serve_mode() != "auto":
        return None
    try:
        root = store_root(explicit, caller.cwd())
    except OSError:
        return None
    from pathlib import Path

    from gitmem.serve.control import ping

    answer = ping(Path(root))
    if answer is None:
        from gitmem.serve.autostart import start_in_background

        return start_in_background(root)
    if answer.get("identity") != identity():
        from gitmem.serve.autostart import replace

        return replace(root)
    return None


def _start(mode: str, root: str, verbose: bool) -> None:
    if mode == "auto":
        from gitmem.serve.autostart import start_in_background

        _note(verbose, start_in_background(root))


def _replace(mode: str, root: str, verbose: bool) -> None:
    """A server of another gitmem is asked to stop, and one of this gitmem started."""
    if mode == "auto":
        from gitmem.serve.autostart import replace

        _note(verbose, replace(root))


def _exchange(sock: _socket.socket, argv: list[str], cwd: str, verbose: bool) -> int | None:
    try:
        stdin = sys.stdin.buffer.read() if _reads_stdin(argv) else b""
    except (OSError, ValueError) as exc:
        _note(verbose, f"standard input could not be read ({exc}); running in this process")
        return None
    request = {
        "op": "run", "protocol": wire.PROTOCOL, "identity": identity(), "argv": argv,
        "cwd": cwd, "env": caller.environ(), "stdin": wire.pack(stdin),
        "tty": [_isatty(sys.stdin), _isatty(sys.stdout), _isatty(sys.stderr)],
    }
    hook, confirmed = "--hook" in argv, False
    try:
        wire.send(sock, request)
        sock.settimeout(ACK_TIMEOUT)
        reply = wire.receive(sock)
        if reply.get("ack"):
            if reply.get("confirm"):  # a write: it starts only once we say we still wait
                wire.send(sock, {"op": "go"})
                confirmed = True
            sock.settimeout(HOOK_ANSWER_TIMEOUT if hook else ANSWER_TIMEOUT)
            reply = wire.receive(sock)
    except (OSError, ConnectionError, ValueError) as exc:
        # ValueError: a request marshal cannot write (it holds only strings, lists and flags).
        if confirmed:
            return _lost(exc)
        _fall_back(verbose, f"the server did not answer ({exc})", stdin)
        return None
    if not reply.get("ran"):
        _fall_back(verbose, f"the server did not run the command: {reply.get('reason')}", stdin)
        other = str(reply.get("reason") or "").startswith("the server runs gitmem")
        return _OTHER_VERSION if other else None
    _note(verbose, f"answered by the gitmem server (pid {reply.get('pid')}, {reply.get('ms')} ms)")
    try:
        sys.stdout.buffer.write(wire.unpack(reply.get("stdout", "")))
        sys.stdout.flush()
    except OSError as exc:  # a closed pipe, a full disk: told as the command line tells them
        from gitmem.errors import os_failure  # not before: the client path stays this lean

        told = os_failure(exc)
        if told is None:
            raise
        if told[0] is not None:
            sys.stderr.write(told[0] + "\n")
        return told[1]
    sys.stderr.buffer.write(wire.unpack(reply.get("stderr", "")))
    sys.stderr.flush()
    return int(reply.get("code", 0))


def _lost(exc: BaseException) -> int:
    """A write the server had started when it went away (killed): it completed or not as a
    write killed in its own process does, and running it again here could do it twice."""
    sys.stderr.write(f"gitmem: error: the gitmem server went away during the call ({exc}); "
                     "it was done completely or not at all: `gitmem status` and `gitmem list` "
                     "show which\n")
    sys.stderr.flush()
    return 3


def _reads_stdin(argv: list[str]) -> bool:
    """Whether the command reads standard input: a `-` text argument, or a hook's payload
    (which a hook reads only when stdin is not a terminal)."""
    if sys.stdin is None:
        return False
    return "-" in argv or ("--hook" in argv and not _isatty(sys.stdin))


def _fall_back(verbose: bool, why: str, stdin: bytes) -> None:
    """Say why (with -v) and give back the standard input already read, for the run here."""
    _note(verbose, f"{why}; running in this process")
    if stdin:
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding=sys.stdin.encoding,
                                     errors=sys.stdin.errors)
