"""The capture at a turn's end (Claude Code's Stop hook), throttled per session: at most once
every `capture.turnMinutes` minutes (default 10; 0: every turn). Each capture reads only what the
transcript gained since the last one (its watermark, state/sessions.json), so a turn costs a
stat and a small JSON read when it is throttled, and a detached process when it is not.

The time of each capture a hook starts (at a turn's end, a compaction or the session's end) is
kept per session in state/turn-captures.json. A throttled turn is decided without opening the
store (`throttled`: memory.json and that file read directly), so it costs what the prompt hook's
quick path costs, not a store's start-up."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.integrate import sessionlog

if TYPE_CHECKING:
    from gitmem.integrate.hookio import HookInput

TURNS_FILE = "state/turn-captures.json"


@dataclass(frozen=True)
class TurnDecision:
    """Whether a turn's end starts a capture, and when the session's last one started."""

    due: bool
    last: float | None  # epoch seconds of the last capture started by a hook
    minutes: float

    def skipped_line(self, now: float) -> str:
        ago = (now - (self.last or now)) / 60
        return (f"capture skipped: this session's last capture started {ago:.0f} minute(s) ago "
                f"(capture.turnMinutes is {self.minutes:g})")


def turn_due(root: Path, session: str, minutes: float, now: float | None = None) -> TurnDecision:
    """Whether the session's turn end is due a capture (`minutes` since its last one)."""
    now = time.time() if now is None else now
    last = sessionlog.load(root, TURNS_FILE, session).get("started")
    started = float(last) if isinstance(last, int | float) else None
    due = started is None or minutes <= 0 or now - started >= minutes * 60 or now < started
    return TurnDecision(due, started, minutes)


def mark_started(root: Path, session: str, transcript: str, now: float | None = None) -> None:
    """Record that a hook started a capture of the session now."""
    sessionlog.save(root, TURNS_FILE, session,
                    {"started": time.time() if now is None else now, "transcript": transcript})


def throttled(payload: HookInput, root: str | None, now: float) -> str | None:
    """The line a throttled turn's end prints, decided from memory.json and the record alone;
    None when the capture is due, or when anything is amiss (the long way opens the store and
    says what)."""
    from gitmem.errors import GitmemError
    from gitmem.store.paths import locate_root
    from gitmem.store.registry import load_registry
    from gitmem.store.settings import capture_turn_minutes

    try:
        where = locate_root(root, payload.folder)[0]
        if not (where / "memory.json").is_file():
            return None
        minutes = capture_turn_minutes(load_registry(where))
    except GitmemError:
        return None
    session = sessionlog.session_key(payload.session_id, payload.transcript_path)
    decision = turn_due(where, session, minutes, now)
    return None if decision.due else decision.skipped_line(now)
