"""The thin client: hand a CLI call to the store's warm server when one is up.

`forward(argv)` runs before the command line is even loaded. It costs a few stat calls when no
server is up; when one is, the server runs the very same command with this process's arguments,
folder, environment and standard input, and this process prints what it printed and exits with
its code. Any doubt (no socket, nobody listening, another version, an unreadable reply before
the command ran) means None: the caller runs the command itself, as without a server.
"""

from __future__ import annotations

import _socket
import os
import sys

from gitmem.serve import wire

# Verbs the server answers. Others (sync, init, new with its editor, hooks...) always run here.
ROUTED = frozenset({"search", "show", "list", "context", "status", "remember", "forget",
                    "verify", "decision", "state", "working"})
_VALUE_OPTIONS = ("--root", "--workspace", "-w")
CONNECT_TIMEOUT = 2.0
ANSWER_TIMEOUT = 900.0  # the server bounds its own waits; this only guards against a hung one
# An agent's hook (`--hook`) waits on the server no longer than this, then answers itself: the
# agent waits on the hook (before every prompt, for the prompt hook; Claude Code gives it 10 s),
# and a server busy with a scheduled sync makes the call wait for its turn.
HOOK_ANSWER_TIMEOUT = 3.0


def identity() -> str:
    """What must match between client and server: the version and the installed code's place."""
    import gitmem

    return f"{gitmem.__version__} {os.path.dirname(os.path.abspath(gitmem.__file__))}"


def _parse(argv: list[str]) -> tuple[str | None, str | None, bool] | None:
    """(--root value, verb, verbose) from the global options; None when they are not plain."""
    root: str | None = None
    verbose = bool(os.environ.get("GITMEM_VERBOSE"))
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
    chosen = explicit or os.environ.get("GITMEM_ROOT")
    if chosen:
        return os.path.join(cwd, os.path.expanduser(chosen))
    folder = cwd
    while True:
        if os.path.isfile(os.path.join(folder, "memory.json")) and \
                os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.join(os.path.expanduser("~"), ".gitmem")
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


def forward(argv: list[str]) -> int | None:
    """The exit code of the call as the server ran it, or None: run it in this process."""
    if os.environ.get("GITMEM_SERVE", "").lower() in ("0", "off", "no", "false"):
        return None
    parsed = _parse(argv)
    if parsed is None or parsed[1] not in ROUTED:
        return None
    explicit, _verb, verbose = parsed
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    path = wire.socket_path(store_root(explicit, cwd))
    if not os.path.exists(path):
        _note(verbose, f"no server for this store ({path} is absent); running in this process")
        return None
    try:
        sock = wire.connect(path, CONNECT_TIMEOUT)
    except OSError as exc:
        _note(verbose, f"no server answers at {path} ({exc.strerror or exc}); running in this process")
        return None
    try:
        return _exchange(sock, argv, cwd, verbose)
    finally:
        sock.close()


def _exchange(sock: _socket.socket, argv: list[str], cwd: str, verbose: bool) -> int | None:
    try:
        stdin = sys.stdin.buffer.read() if _reads_stdin(argv) else b""
    except (OSError, ValueError) as exc:
        _note(verbose, f"standard input could not be read ({exc}); running in this process")
        return None
    request = {
        "op": "run", "protocol": wire.PROTOCOL, "identity": identity(), "argv": argv,
        "cwd": cwd, "env": dict(os.environ), "stdin": wire.pack(stdin),
        "tty": [_isatty(sys.stdin), _isatty(sys.stdout), _isatty(sys.stderr)],
    }
    try:
        wire.send(sock, request)
        sock.settimeout(HOOK_ANSWER_TIMEOUT if "--hook" in argv else ANSWER_TIMEOUT)
        reply = wire.receive(sock)
    except (OSError, ConnectionError, ValueError) as exc:
        # ValueError: a request marshal cannot write (it holds only strings, lists and flags).
        _fall_back(verbose, f"the server did not answer ({exc})", stdin)
        return None
    if not reply.get("ran"):
        _fall_back(verbose, f"the server did not run the command: {reply.get('reason')}", stdin)
        return None
    _note(verbose, f"answered by the gitmem server (pid {reply.get('pid')}, {reply.get('ms')} ms)")
    sys.stdout.buffer.write(wire.unpack(reply.get("stdout", "")))
    sys.stdout.flush()
    sys.stderr.buffer.write(wire.unpack(reply.get("stderr", "")))
    sys.stderr.flush()
    return int(reply.get("code", 0))


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
