"""What client and server say to each other: where the socket is, and length-prefixed frames.

Kept to modules built into the interpreter: the client imports this on every CLI call. A frame is
a dict of plain values (str, int, float, bool, None, lists and dicts of them) in `marshal`'s
format, not JSON: `json` imports `re` (with enum and the regex compiler), ~10 ms of every
forwarded call's start-up, a third of a hook answered by the server. marshal is not meant for
untrusted data; the socket is mode 0600 in a 0700 folder and the server checks the peer's user id
on every connection, so only the store's owner can send a frame, and a frame
that does not load is dropped like any garbage. Byte strings (stdin, stdout, stderr) travel as
latin-1 text so every byte comes back unchanged.
"""

from __future__ import annotations

import _socket  # socket.py adds enum and selectors to every call's start-up; the client needs none
import marshal
import os

TYPE_CHECKING = False  # `typing` is not imported at run time: see gitmem/__init__.py
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from typing import Any, TypeAlias, TypeVar

    Sock: TypeAlias = socket.socket | _socket.socket
    T = TypeVar("T")

PROTOCOL = 3  # 1: JSON frames; 2: no acknowledgement before the answer
MARSHAL_VERSION = 4  # the format of every Python since 3.4: client and server may differ
SOCKET_NAME = "serve.sock"
STATE_DIR = "state"
MAX_FRAME = 64 * 1024 * 1024  # a request or reply larger than this is refused
# Verbs the server answers that only read. The others it answers (remember, forget...) write:
# the server starts one only once the client has confirmed it still waits for the answer.
# why, log and as-of read the store's history: answered warm, they skip loading pygit2.
READ_VERBS = frozenset({"search", "show", "list", "context", "status", "why", "log", "as-of"})
WRITE_VERBS = frozenset({"remember", "forget", "verify", "decision", "state", "working"})


def socket_path(root: str) -> str:
    return os.path.join(root, STATE_DIR, SOCKET_NAME)


def _at(path: str, action: Callable[[str], T]) -> T:
    """action(name to bind or connect to): a path too long for a socket address is reached
    through its folder (gitmem/caller.py), the working folder left alone."""
    from gitmem.caller import by_short_name

    return by_short_name(path, action)


def connect(path: str, timeout: float) -> _socket.socket:
    """A connected client socket (close it when done); OSError when nobody listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        _at(path, sock.connect)
    except BaseException:
        sock.close()
        raise
    return sock


def bind(path: str) -> socket.socket:
    """A listening socket at `path`, reachable by this user only: the socket 0600 in a folder
    0700 (the store's local state folder, which holds nothing another user may read)."""
    import socket

    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket file is created 0600: no window where others may connect
    try:
        _at(path, sock.bind)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


def send(sock: Sock, message: dict[str, Any]) -> None:
    """One frame; ValueError when the message holds something other than plain values."""
    data = marshal.dumps(message, MARSHAL_VERSION)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def read_exactly(sock: Sock, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: Sock) -> dict[str, Any]:
    """One frame; ConnectionError when the other side went away or sent garbage."""
    size = int.from_bytes(read_exactly(sock, 4), "big")
    if size > MAX_FRAME:
        raise ConnectionError(f"frame of {size} bytes refused")
    data = read_exactly(sock, size)
    try:
        message = marshal.loads(data)
    except (ValueError, EOFError, TypeError) as exc:
        raise ConnectionError(f"unreadable frame: {exc}") from None
    if not isinstance(message, dict):
        raise ConnectionError("unreadable frame: not an object")
    return message


def pack(data: bytes) -> str:
    return data.decode("latin-1")


def unpack(text: str) -> bytes:
    return text.encode("latin-1")
