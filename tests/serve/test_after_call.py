"""A write through the warm server answers before its search-index update, which the server runs
right after; nothing a later call reads is ever behind (gitmem/store/aftercall.py)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from gitmem.serve.control import stop_server
from gitmem.store import aftercall
from gitmem.store.store import Store
from support import run_gitmem

ANSWERED = "answered by the gitmem server"


def test_a_search_right_after_each_write_through_the_server_finds_it(served: Path) -> None:
    for n in range(6):
        wrote = run_gitmem("-v", "--root", str(served), "remember", f"Replica lag alarm number {n} fires at 30s",
                           "--layer", "semantic", "--topic", "alarms")
        assert wrote.returncode == 0 and ANSWERED in wrote.stderr, wrote.stderr
        entry_id = wrote.stdout.strip()
        found = run_gitmem("-v", "--root", str(served), "search", f"alarm number {n}", "--json")
        assert found.returncode == 0 and ANSWERED in found.stderr, found.stderr
        assert entry_id in [hit["id"] for hit in json.loads(found.stdout)], found.stdout
    stop_server(served)
    # The server brought the index up to date itself: a fresh process finds nothing left to index.
    store = Store(served, cwd=served.parent)
    try:
        assert store.search_index().refresh() == []
    finally:
        store.close()
    log = (served / "logs" / "memory.log").read_text(encoding="utf-8")
    assert "after-call-failed" not in log and "index-update-failed" not in log


def test_outside_a_call_the_step_runs_at_once(tmp_path: Path) -> None:
    assert aftercall.later(tmp_path, lambda: None) is False


def test_left_over_steps_run_after_the_call_then_the_parts_come_back(tmp_path: Path) -> None:
    done: list[str] = []
    with aftercall.gathering() as steps:
        assert aftercall.later(tmp_path, lambda: done.append("index"))
        assert aftercall.later(tmp_path, lambda: done.append("more"))
    assert done == []  # nothing ran while the call was under way
    given_back = threading.Event()
    aftercall.finish_later(steps, lambda: (done.append("settled"), given_back.set()))
    assert given_back.wait(10)
    assert done == ["index", "more", "settled"]


def test_a_failing_step_is_logged_and_the_parts_still_come_back(tmp_path: Path) -> None:
    def broken() -> None:
        raise OSError("disk went away")

    ran: list[str] = []
    with aftercall.gathering() as steps:
        aftercall.later(tmp_path, broken)
        aftercall.later(tmp_path, lambda: ran.append("next step"))
    given_back = threading.Event()
    aftercall.finish_later(steps, given_back.set)
    assert given_back.wait(10)
    assert ran == ["next step"]
    log = (tmp_path / "logs" / "memory.log").read_text(encoding="utf-8")
    assert "after-call-failed" in log and "disk went away" in log


def test_a_call_finding_no_spare_parts_waits_for_the_ones_coming_back(tmp_path: Path) -> None:
    spare: list[str] = []
    release = threading.Event()

    def step() -> None:
        release.wait(10)

    def give_back() -> None:
        spare.append("parts")
        aftercall.notify()

    with aftercall.gathering() as steps:
        aftercall.later(tmp_path, step)
    aftercall.finish_later(steps, give_back)
    waited: list[bool] = []
    waiter = threading.Thread(target=lambda: (aftercall.wait_for_parts(tmp_path, lambda: bool(spare), 10),
                                              waited.append(bool(spare))))
    waiter.start()
    time.sleep(0.2)
    assert waiter.is_alive()  # still waiting: the parts are out
    release.set()
    waiter.join(10)
    assert waited == [True]


def test_waiting_for_parts_ends_at_its_timeout(tmp_path: Path) -> None:
    release = threading.Event()
    with aftercall.gathering() as steps:
        aftercall.later(tmp_path, lambda: release.wait(10))
    aftercall.finish_later(steps, lambda: None)
    try:
        aftercall.wait_for_parts(tmp_path, lambda: False, timeout=0.2)
        assert not release.is_set()  # it came back by its timeout, with the step still out
    finally:
        release.set()


def test_the_steps_of_a_call_start_once_its_answer_is_sent(tmp_path: Path) -> None:
    """In the server the left-over steps wait for the answer (until_answered), also when
    sending it fails; elsewhere they start at once."""
    ran = threading.Event()
    # An earlier test's step may still be finishing in its own thread: only new threads count.
    earlier = set(threading.enumerate())
    with aftercall.gathering() as steps:
        aftercall.later(tmp_path, ran.set)
    try:
        with aftercall.until_answered():
            aftercall.finish_later(steps, lambda: None)
            # Not started while the answer is not sent: no thread runs the step, none can yet.
            assert len(aftercall._replying.starts) == 1
            assert not any(t.name == "gitmem-after-call" for t in set(threading.enumerate()) - earlier)
            assert not ran.is_set()
            raise ConnectionError("the caller went away")
    except ConnectionError:
        pass
    assert ran.wait(10)
    again = threading.Event()
    with aftercall.gathering() as steps:
        aftercall.later(tmp_path, again.set)
    aftercall.finish_later(steps, lambda: None)
    assert again.wait(10)
