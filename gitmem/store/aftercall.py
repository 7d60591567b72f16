"""Work a call may leave until its answer is on its way (the warm server only).

A write's last steps are derived data: writing git's index file for the paths it committed
(git/indexlater.py: any other reader in the process writes it first) and bringing the search
index up to date (any later search brings a stale index up to date itself: its files' stamps
differ from the index's manifest). The commit has landed before either. In the warm server the
caller need not wait for them: the runner gathers such steps while the call runs (`gathering`),
answers, and runs them on a thread of their own (`finish_later`, started once the answer is
sent: `until_answered`) before the call's open parts are given back. A read that arrives
meanwhile and finds no spare parts waits for those (`wait_for_parts`), which costs less than
opening a second set, and a search would wait for the index's lock anyway.

Outside a gathering (the CLI in its own process, the MCP server, tests) `later` refuses and the
step runs at once, as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from pathlib import Path

from gitmem.eventlog import log_event

Action = Callable[[], None]
_gathered: ContextVar[list[tuple[Path, Action]] | None] = ContextVar("gitmem_after_call", default=None)
_busy: dict[Path, int] = {}  # store root -> calls whose left-over steps are running
_changed = threading.Condition()
_replying = threading.local()  # starts: the steps held until the answer is sent (until_answered)


@contextmanager
def gathering() -> Iterator[list[tuple[Path, Action]]]:
    """Collect the steps the call leaves for later (see `later`) into the list yielded."""
    steps: list[tuple[Path, Action]] = []
    token = _gathered.set(steps)
    try:
        yield steps
    finally:
        _gathered.reset(token)


def later(root: Path, action: Action) -> bool:
    """Leave `action` until the call has answered; False (run it now) outside a gathering."""
    steps = _gathered.get()
    if steps is None:
        return False
    steps.append((root, action))
    return True


def finish_later(steps: list[tuple[Path, Action]], then: Callable[[], None]) -> None:
    """Run the gathered steps, then `then` (giving the parts back), on a thread of their own,
    in the calling context (its caller and the stores it opened)."""
    roots = {root for root, _ in steps}
    with _changed:
        for root in roots:
            _busy[root] = _busy.get(root, 0) + 1
    context = copy_context()

    def work() -> None:
        try:
            for root, action in steps:
                _run(root, action)
            then()
        finally:
            with _changed:
                for root in roots:
                    _busy[root] -= 1
                    if not _busy[root]:
                        del _busy[root]
                _changed.notify_all()

    # Not a daemon: a server asked to stop lets the step end (it is short) rather than cut it.
    thread = threading.Thread(target=context.run, args=(work,), name="gitmem-after-call")
    held = getattr(_replying, "starts", None)
    if held is None:
        thread.start()
    else:
        held.append(thread.start)


@contextmanager
def until_answered() -> Iterator[None]:
    """The steps `finish_later` is given on this thread meanwhile start when this closes, once
    the server has sent its answer: a step started earlier would hold the interpreter (and a
    core) while the answer is still on its way."""
    starts: list[Callable[[], None]] = []
    _replying.starts = starts
    try:
        yield
    finally:
        _replying.starts = None
        for start in starts:
            start()


def _run(root: Path, action: Action) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - derived data: the next search repairs it; say so
        log_event(root, {"event": "after-call-failed", "error": f"{type(exc).__name__}: {exc}"})


def wait_for_parts(root: Path, has_spare: Callable[[], bool], timeout: float = 2.0) -> None:
    """Wait (at most `timeout`) while a call's left-over steps hold this store's parts and none
    is spare: they come back within moments, and opening a second set costs far more."""
    deadline = time.monotonic() + timeout
    with _changed:
        while _busy.get(root) and not has_spare():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            _changed.wait(remaining)


def notify() -> None:
    """Parts were given back: wake the calls waiting for them."""
    with _changed:
        _changed.notify_all()
