"""Which machine made a commit: every commit gitmem makes ends with a `Gitmem-Machine:` trailer.

Conflict labels name the machine each version came from. This machine's name is known here; the
other machine's is read from the commit its version was taken from, which is why gitmem writes
the name into its commits (a plain `git commit` has none: the label then names the ref instead).
The name is the host name, or GITMEM_MACHINE when set (containers with random host names, two
stores on one computer).
"""

from __future__ import annotations

import re
import socket

from gitmem import caller

MACHINE_ENV = "GITMEM_MACHINE"
TRAILER = "Gitmem-Machine"
_TRAILER_RE = re.compile(rf"(?:\r?\n)+{TRAILER}: *(\S+)[ \t]*\r?\n?\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")


def machine_name() -> str:
    """This machine's name as labels show it: one word, no marker-breaking characters."""
    raw = (caller.env(MACHINE_ENV) or "").strip() or socket.gethostname().split(".")[0]
    return _UNSAFE.sub("-", raw).strip("-")[:64] or "localhost"


_TRAILER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: \S")


def with_machine(message: str) -> str:
    """`message` with this machine's trailer (once; an existing one is replaced), in the
    message's trailer block when it ends with one (git reads only the last paragraph's)."""
    body = _TRAILER_RE.sub("", message).rstrip("\n")
    paragraphs = body.split("\n\n")
    joined = len(paragraphs) > 1 and all(_TRAILER_LINE.match(line) for line in paragraphs[-1].splitlines())
    return f"{body}{chr(10) if joined else chr(10) * 2}{TRAILER}: {machine_name()}\n"


def split_machine(message: str) -> tuple[str, str | None]:
    """(the message without the trailer, the machine it names or None)."""
    match = _TRAILER_RE.search(message)
    if match is None:
        return message, None
    return message[: match.start()], match.group(1)
