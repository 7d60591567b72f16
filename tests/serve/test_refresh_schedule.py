"""The freshness pass on the warm server's schedule: the setting serve.refreshMinutes (daily by
default, validated by `gitmem config`), `--refresh-every` over it, skipped without a model."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from fakemodels import fake_model
from gitmem.models import config
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from servers import start_server, stop
from support import commit_count, run_gitmem


def _jobs(root: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((root / "state" / "serve.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data.get("jobs") or {}


def _wait_for_result(root: Path, job: str, timeout: float = 40.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = _jobs(root).get(job, {}).get("result")
        if result:
            return str(result)
        time.sleep(0.1)
    raise AssertionError(f"the {job} job did not run")


def _stale_entries(root: Path) -> list[str]:
    """Three volatile entries verified 40 days ago (stale: the volatile window is 3 days)."""
    past = Store(root, clock=lambda: datetime(2026, 10, 20, 12, 0))
    ids = [remember(past, text, "semantic", topic="staging", volatility="volatile").id or ""
           for text in ("Staging RabbitMQ listens on port 5673", "The staging VM has 4 GB of RAM",
                        "Deploys freeze on Fridays this month")]
    past.close()
    return ids


def test_the_setting_is_daily_by_default_and_validated_like_the_others(store: Store) -> None:
    root = str(store.root)
    shown = json.loads(run_gitmem("--root", root, "config", "get", "serve.refreshMinutes", "--json").stdout)
    assert shown["value"] == 1440 and shown["default"] == 1440 and shown["explicit"] is False
    for bad in ("-1", "often", "true"):
        refused = run_gitmem("--root", root, "config", "set", "serve.refreshMinutes", bad)
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        assert refused.stderr.startswith("gitmem: error: serve.refreshMinutes cannot be")
        assert "minutes >= 0" in refused.stderr
    assert "refreshMinutes" not in (store.root / "memory.json").read_text(encoding="utf-8")
    assert run_gitmem("--root", root, "config", "set", "serve.refreshMinutes", "0").returncode == 0
    assert json.loads((store.root / "memory.json").read_text())["settings"]["serve"]["refreshMinutes"] == 0


def test_the_server_refreshes_stale_entries_on_the_setting_s_cadence(store: Store, tmp_path: Path) -> None:
    ids = _stale_entries(store.root)
    config.add_rung(store.root, "good", fake_model(tmp_path, "good"))
    root = str(store.root)
    assert run_gitmem("--root", root, "config", "set", "serve.refreshMinutes", "0.02").returncode == 0
    before = commit_count(store.root)
    proc = start_server(store.root, "--sync-every", "0", "--history-every", "0", "--consolidate-every", "0")
    try:
        result = _wait_for_result(store.root, "refresh")
        assert result == "refreshed: kept 1, updated 1, forgot 1 of 3 stale entries", result
        assert _jobs(store.root)["refresh"]["every"] == 0.02 * 60
        # The fake model keeps the first, updates the second and forgets the third.
        shown = json.loads(run_gitmem("--root", root, "show", ids[0], "--json").stdout)
        assert shown["freshness"] == "fresh" and shown["fields"]["Verified"] == store.today().isoformat()
        forgotten = json.loads(run_gitmem("--root", root, "show", ids[2], "--json").stdout)
        assert forgotten["status"] == "forgotten"
        assert commit_count(store.root) >= before + 1
        deadline = time.monotonic() + 30
        while _jobs(store.root)["refresh"]["result"] != "nothing stale" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _jobs(store.root)["refresh"]["result"] == "nothing stale"  # the next run: all settled
        log = (store.root / "logs" / "memory.log").read_text(encoding="utf-8")
        assert '"event": "serve-job", "job": "refresh", "ok": true' in log
        status = run_gitmem("--root", root, "status").stdout
        assert "refresh: next" in status
    finally:
        stop(proc)


def test_refresh_every_overrides_the_setting_and_without_a_model_it_skips(store: Store) -> None:
    _stale_entries(store.root)
    before = commit_count(store.root)
    proc = start_server(store.root, "--sync-every", "0", "--history-every", "0", "--consolidate-every", "0",
                        "--refresh-every", "0.02")
    try:
        assert _wait_for_result(store.root, "refresh").startswith("skipped: no model configured")
        assert commit_count(store.root) == before  # nobody to show the list to: nothing written
    finally:
        stop(proc)
    proc = start_server(store.root, "--sync-every", "0", "--history-every", "0", "--consolidate-every", "0",
                        "--refresh-every", "0")
    try:
        assert _jobs(store.root)["refresh"]["next"] is None  # 0: never
    finally:
        stop(proc)
