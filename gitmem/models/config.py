"""The ladder's configuration on this machine: state/models.json (never committed: commands and
paths differ between machines), or a one-rung ladder from GITMEM_MODEL."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError, NotFoundError
from gitmem.fsio import file_lock, read_regular_file, write_json_atomic
from gitmem.redaction import redact

LADDER_FILE = "state/models.json"
LOCK_FILE = "state/models.lock"
MAX_RUNGS = 4
DEFAULT_TIMEOUT = 120.0
BENCH_SECONDS = 15 * 60
ENV_MODEL = "GITMEM_MODEL"
ENV_TIMEOUT = "GITMEM_MODEL_TIMEOUT"
OVERRIDE_NAME = "GITMEM_MODEL"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
# NAME=value assignments whose name says secret (OPENAI_API_KEY=..., --token=...).
_SECRET_ASSIGNMENT = re.compile(
    r"(?P<name>\b[\w-]*(?:key|token|secret|password|passwd)[\w-]*)(?P<sep>=|\s+)(?P<value>\S+)",
    re.IGNORECASE,
)


@dataclass
class Rung:
    """One model: a name and the command that runs it."""

    name: str
    command: str
    timeout: float = DEFAULT_TIMEOUT


@dataclass
class Ladder:
    """The rungs in the order they are tried, and which are benched until when."""

    rungs: list[Rung] = field(default_factory=list)
    benched: dict[str, str] = field(default_factory=dict)  # name -> ISO time (UTC)
    last_winner: str | None = None
    override: bool = False  # from GITMEM_MODEL: one rung, nothing saved

    def find(self, name: str) -> Rung | None:
        return next((r for r in self.rungs if r.name == name), None)

    def benched_until(self, name: str, now: datetime) -> datetime | None:
        """When the rung's bench ends, or None when it is not benched (any more)."""
        value = self.benched.get(name)
        if not value:
            return None
        try:
            until = datetime.fromisoformat(value)
        except ValueError:
            return None
        return until if until > now else None


def utc_now() -> datetime:
    return datetime.now(UTC)


def redact_command(command: str) -> str:
    """The command as it may be shown or logged: secret-looking assignments and tokens hidden."""
    hidden = _SECRET_ASSIGNMENT.sub(lambda m: f"{m['name']}{m['sep']}***", command)
    return redact(hidden)


def check_name(name: str) -> str:
    if not _NAME_RE.match(name) or name == OVERRIDE_NAME:
        raise InvalidInputError(
            f"invalid model name {name!r}: use 1-32 of letters, digits, '.', '_' and '-'"
        )
    return name


def _timeout_from_env() -> float | None:
    raw = (caller.env(ENV_TIMEOUT) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInputError(f"{ENV_TIMEOUT}={raw!r} is not a number of seconds") from None
    if not 0 < value < math.inf:  # NaN fails both comparisons
        raise InvalidInputError(f"{ENV_TIMEOUT} must be a positive, finite number of seconds")
    return value


def load_ladder(root: Path) -> Ladder:
    """GITMEM_MODEL as a one-rung ladder when set, else state/models.json (empty when absent)."""
    override = (caller.env(ENV_MODEL) or "").strip()
    if override:
        rung = Rung(OVERRIDE_NAME, override, _timeout_from_env() or DEFAULT_TIMEOUT)
        return Ladder([rung], override=True)
    return load_saved_ladder(root)


def load_saved_ladder(root: Path) -> Ladder:
    """The ladder in state/models.json; a broken file is an error, never silently replaced."""
    path = root / LADDER_FILE
    try:
        data = json.loads(read_regular_file(path))  # a FIFO in its place is refused, not waited on
    except FileNotFoundError:
        return Ladder()
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{LADDER_FILE} is unreadable ({exc}); fix or delete it") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{LADDER_FILE} must hold a JSON object; fix or delete it")
    env_timeout = _timeout_from_env()
    rungs = []
    for item in data.get("rungs") or []:
        if isinstance(item, dict) and item.get("name") and item.get("command"):
            rungs.append(Rung(str(item["name"]), str(item["command"]),
                              env_timeout or _saved_timeout(item.get("timeout"))))
    benched = data.get("benched") if isinstance(data.get("benched"), dict) else {}
    winner = data.get("lastWinner")
    return Ladder(rungs[:MAX_RUNGS], {str(k): str(v) for k, v in (benched or {}).items()},
                  str(winner) if winner else None)


def _saved_timeout(value: object) -> float:
    """A rung's saved time-out; the default when it is not a positive, finite number (a hand
    edit, or NaN an earlier gitmem let through)."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT
    return seconds if 0 < seconds < math.inf else DEFAULT_TIMEOUT


def save_ladder(root: Path, ladder: Ladder) -> None:
    if ladder.override:
        return  # GITMEM_MODEL is this process's choice, not the machine's configuration
    names = {r.name for r in ladder.rungs}
    data: dict[str, Any] = {
        "rungs": [{"name": r.name, "command": r.command, "timeout": r.timeout} for r in ladder.rungs],
        "benched": {k: v for k, v in ladder.benched.items() if k in names},
        "lastWinner": ladder.last_winner if ladder.last_winner in names else None,
    }
    write_json_atomic(root / LADDER_FILE, data, durable=False)


@contextlib.contextmanager
def editing(root: Path) -> Iterator[Ladder]:
    """Read, change and save the saved ladder under its own lock (captures may run in parallel)."""
    with file_lock(root / LOCK_FILE, 30.0, "the model ladder lock"):
        ladder = load_saved_ladder(root)
        yield ladder
        save_ladder(root, ladder)


def add_rung(root: Path, name: str, command: str, timeout: float | None = None) -> Rung:
    """Add a rung at the end of the ladder, or change the command of an existing one."""
    check_name(name)
    if not command.strip():
        raise InvalidInputError("the model command must not be empty")
    if timeout is not None and not 0 < timeout < math.inf:
        raise InvalidInputError("--timeout must be a positive, finite number of seconds")
    with editing(root) as ladder:
        existing = ladder.find(name)
        if existing is not None:
            existing.command = command.strip()
            existing.timeout = timeout or existing.timeout
            ladder.benched.pop(name, None)
            return existing
        if len(ladder.rungs) >= MAX_RUNGS:
            listed = ", ".join(r.name for r in ladder.rungs)
            raise InvalidInputError(
                f"the ladder already has {MAX_RUNGS} models ({listed}); remove one first"
            )
        rung = Rung(name, command.strip(), timeout or DEFAULT_TIMEOUT)
        ladder.rungs.append(rung)
        return rung


def remove_rung(root: Path, name: str) -> None:
    with editing(root) as ladder:
        rung = ladder.find(name)
        if rung is None:
            raise NotFoundError(f"no model named {name!r} (see `gitmem models list`)")
        ladder.rungs.remove(rung)
        ladder.benched.pop(name, None)


def ladder_report(root: Path, now: datetime | None = None) -> dict[str, Any]:
    """The ladder as `models list --json` and `status` show it: order, commands (redacted),
    which rungs are benched and until when, the last winner."""
    now = now or utc_now()
    try:
        ladder = load_ladder(root)
    except InvalidInputError as exc:
        return {"rungs": [], "override": False, "lastWinner": None, "error": str(exc)}
    rungs = []
    for position, rung in enumerate(ladder.rungs, start=1):
        until = ladder.benched_until(rung.name, now)
        rungs.append({
            "position": position, "name": rung.name, "command": redact_command(rung.command),
            "timeout": rung.timeout, "benched": until is not None,
            "benchedUntil": until.isoformat(timespec="seconds") if until else None,
        })
    return {"rungs": rungs, "override": ladder.override, "lastWinner": ladder.last_winner}
