"""Run one model command: the prompt on stdin, the reply read from stdout, within a time-out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from gitmem import caller
from gitmem.redaction import redact


@dataclass(frozen=True)
class CallResult:
    """What one command did: its outcome (ok | empty | exit-N | timeout | error), raw stdout,
    how long it took and how many bytes went each way, and the end of its stderr."""

    outcome: str
    stdout: str
    duration_ms: float
    bytes_in: int
    bytes_out: int
    stderr_tail: str = ""


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop the command and everything it started (a shell pipeline is a process group)."""
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def run_command(command: str, prompt: str, timeout: float) -> CallResult:
    """Run `command` through the shell with `prompt` on stdin; never raises."""
    data = prompt.encode("utf-8")
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=sys.platform != "win32",
            env=caller.child_env(), cwd=caller.cwd(),
        )
    except OSError as exc:
        return CallResult("error", "", 0.0, len(data), 0, redact(str(exc)))
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, err = proc.communicate()
        elapsed = (time.perf_counter() - start) * 1000
        return CallResult("timeout", "", elapsed, len(data), len(out or b""), _tail(err))
    elapsed = (time.perf_counter() - start) * 1000
    text = out.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        return CallResult(f"exit-{proc.returncode}", text, elapsed, len(data), len(out), _tail(err))
    return CallResult("ok", text, elapsed, len(data), len(out), _tail(err))


def _tail(err: bytes | None) -> str:
    """The last line of stderr, redacted and short: enough to say why a command failed."""
    lines = (err or b"").decode("utf-8", errors="replace").strip().splitlines()
    return redact(lines[-1])[:200] if lines else ""  # redacted, then cut
