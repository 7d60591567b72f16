"""What the store's warm server leaves in state/: its state file (state/serve.json), and whether
the process it names is really that server, for `gitmem status`.

Below the verbs on purpose: `status` reads it, and the server (gitmem/serve/, an adapter above
the verbs like the CLI) writes it. A recorded pid alone proves nothing (a killed server's pid is
reused by another process), so "up" means: a process listens on state/serve.sock and the kernel
says the listener is that pid (SO_PEERCRED on Linux, LOCAL_PEERPID on macOS).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from pathlib import Path
from typing import Any

from gitmem.caller import by_short_name
from gitmem.fsio import pid_alive

STATE_FILE = "state/serve.json"
SOCKET_FILE = "state/serve.sock"
PROBE_SECONDS = 1.0
_SOL_LOCAL = 0  # macOS: <sys/un.h>
_LOCAL_PEERCRED = 0x001
_LOCAL_PEERPID = 0x002


def read(root: Path) -> dict[str, Any] | None:
    """state/serve.json as a dict; None when it is missing or unreadable."""
    try:
        data = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def peer_credentials(sock: socket.socket) -> tuple[int | None, int | None]:
    """(pid, uid) of the process at the other end of a connected unix socket, as the kernel
    reports it; (None, None) where the platform says nothing."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _gid = struct.unpack("3i", raw)
        return pid, uid
    if sys.platform == "darwin":  # struct xucred {u_int version; uid_t uid; ...}; pid_t
        cred = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, struct.calcsize("IIh16I"))
        pid = struct.unpack("i", sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERPID, 4))[0]
        return pid, struct.unpack_from("I", cred, 4)[0]
    return None, None


def probe(root: Path) -> tuple[bool, int | None]:
    """(whether a process listens on the store's socket, its pid where the kernel names it).
    The probe connects and closes without a word: the server drops such a connection."""
    path = str(root / SOCKET_FILE)
    if not os.path.exists(path):
        return False, None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(PROBE_SECONDS)
    try:
        by_short_name(path, sock.connect)  # a path too long for an address: through its folder
        return True, peer_credentials(sock)[0]
    except OSError:
        return False, None
    finally:
        sock.close()


def describe(root: Path) -> dict[str, Any]:
    """Whether a server is up for this store, and its schedule (for `gitmem status`)."""
    data = read(root) or {}
    pid = data.get("pid")
    up = isinstance(pid, int) and pid_alive(pid) and _is_listener(root, pid)
    jobs = data.get("jobs") if isinstance(data.get("jobs"), dict) else {}
    return {"up": up, "pid": pid if up else None, "started": data.get("started") if up else None,
            "autoStarted": bool(data.get("autoStarted")) if up else None,
            "idleMinutes": data.get("idleMinutes") if up else None,
            "web": data.get("web") if up else None,  # the page's address, never its token
            "jobs": jobs if up else {}, "lastStopped": data.get("stopped")}


def _is_listener(root: Path, pid: int) -> bool:
    """Whether `pid` is the process listening on the socket (where the platform cannot name
    the listener, a connection that succeeds is the best evidence there is)."""
    listening, listener = probe(root)
    return listening and (listener is None or listener == pid)
