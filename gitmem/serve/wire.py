"""What client and server say to each other: where the socket is, and length-prefixed JSON frames.

Kept to the standard library's cheapest modules: the client imports this on every CLI call.
Byte strings (stdin, stdout, stderr) travel as latin-1 text so every byte comes back unchanged.
"""

from __future__ import annotations

import _socket  # socket.py adds enum and selectors to every call's start-up; the client needs none
import contextlib
import json
import os

TYPE_CHECKING = False  # `typing` is not imported at run time: see gitmem/__init__.py
if TYPE_CHECKING:
    import socket
    from collections.abc import Iterator
    from typing import Any

    Sock = socket.socket | _socket.socket

PROTOCOL = 1
SOCKET_NAME = "serve.sock"
STATE_DIR = "state"
MAX_FRAME = 64 * 1024 * 1024  # a request or reply larger than this is refused
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def socket_path(root: str) -> str:
    return os.path.join(root, STATE_DIR, SOCKET_NAME)


@contextlib.contextmanager
def _in_folder_if_long(path: str) -> Iterator[str]:
    """The name to bind or connect to: a path too long for a socket address is reached from
    its own folder (the working directory is put back at once)."""
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        yield path
        return
    here = os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        yield os.path.basename(path)
    finally:
        os.chdir(here)


def connect(path: str, timeout: float) -> _socket.socket:
    """A connected client socket (close it when done); OSError when nobody listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with _in_folder_if_long(path) as name:
            sock.connect(name)
    except BaseException:
        sock.close()
        raise
    return sock


def bind(path: str) -> socket.socket:
    """A listening socket at `path`, reachable by this user only (mode 0600)."""
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket file is created 0600: no window where others may connect
    try:
        with _in_folder_if_long(path) as name:
            sock.bind(name)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


def send(sock: Sock, message: dict[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8")
    sock.sendall(len(data).to_bytes(4, "big") + data)


def _read_exactly(sock: Sock, count: int) -> bytes:
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
    size = int.from_bytes(_read_exactly(sock, 4), "big")
    if size > MAX_FRAME:
        raise ConnectionError(f"frame of {size} bytes refused")
    try:
        message = json.loads(_read_exactly(sock, size).decode("utf-8"))
    except ValueError as exc:
        raise ConnectionError(f"unreadable frame: {exc}") from None
    if not isinstance(message, dict):
        raise ConnectionError("unreadable frame: not an object")
    return message


def pack(data: bytes) -> str:
    return data.decode("latin-1")


def unpack(text: str) -> bytes:
    return text.encode("latin-1")
