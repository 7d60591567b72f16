"""Scheduled sync, history and consolidation: periods, jitter, back-off, logs, status; unit files."""

from __future__ import annotations

import json
import plistlib
import random
import time
from pathlib import Path

from gitmem.serve.schedule import FIRST_RUN_SECONDS, MAX_BACKOFF_SECONDS, Job, due
from gitmem.serve.units import unit_for
from gitmem.store.store import Store
from servers import start_server, stop
from support import git, run_gitmem


def test_waits_vary_by_a_tenth_and_double_after_each_failure() -> None:
    job = Job("sync", 600.0, rng=random.Random(3))
    job.start(1000.0)
    assert 1000 + FIRST_RUN_SECONDS * 0.9 <= job.next_at <= 1000 + FIRST_RUN_SECONDS * 1.1
    waits = []
    for ok in (False, False, False, True):
        job.finished(2000.0, "result", ok, 0.1)
        waits.append(job.next_at - 2000.0)
    assert [round(w / 600) for w in waits[:3]] == [2, 4, 8]
    assert 540 <= waits[3] <= 660 and job.failures == 0
    for _ in range(40):
        job.finished(0.0, "failed", False, 0.1)
    assert job.next_at <= MAX_BACKOFF_SECONDS * 1.1
    assert due([Job("off", 0.0), job]) is job and due([Job("off", 0.0)]) is None


def _state(root: Path) -> dict[str, object]:
    try:
        return json.loads((root / "state" / "serve.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_the_server_syncs_on_schedule_and_backs_off_on_failure(store: Store, bare_remote: Path,
                                                                 tmp_path: Path) -> None:
    assert run_gitmem("--root", str(store.root), "remote", "set", str(bare_remote)).returncode == 0
    proc = start_server(store.root, "--sync-every", "0.02", "--history-every", "0",
                        "--consolidate-every", "0")
    try:
        done = run_gitmem("--root", str(store.root), "remember", "Pushed by the schedule", "--layer", "semantic")
        assert done.returncode == 0
        _wait_for(lambda: "Pushed by the schedule" in git(bare_remote, "log", "-p", "main", check=False))
        status = json.loads(run_gitmem("--root", str(store.root), "status", "--json").stdout)
        assert status["server"]["up"] and status["server"]["jobs"]["sync"]["failures"] == 0
        assert status["server"]["jobs"]["history"]["next"] is None
        text = run_gitmem("--root", str(store.root), "status").stdout
        assert "server: up" in text and "sync: next" in text and "history: off" in text
        log = (store.root / "logs" / "memory.log").read_text(encoding="utf-8")
        assert '"event": "serve-job", "job": "sync", "ok": true' in log
        git(store.root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
        _wait_for(lambda: _state(store.root).get("jobs", {}).get("sync", {}).get("failures", 0) >= 2)  # type: ignore[union-attr]
        sync = _state(store.root)["jobs"]["sync"]  # type: ignore[index]
        assert sync["result"].startswith("failed")
    finally:
        stop(proc)


def test_history_is_ingested_on_schedule(store: Store, tmp_path: Path) -> None:
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "Add the first file")
    assert run_gitmem("--root", str(store.root), "associate", "code", "--path", str(repo)).returncode == 0
    proc = start_server(store.root, "--sync-every", "0", "--history-every", "0.02",
                        "--consolidate-every", "0.02")
    try:
        _wait_for(lambda: (_state(store.root).get("jobs", {}).get("history", {}).get("result") or "")  # type: ignore[union-attr]
                  .startswith("1 commit"))
        found = run_gitmem("--root", str(store.root), "search", "first file", "--json")
        assert "Add the first file" in found.stdout
        _wait_for(lambda: _state(store.root).get("jobs", {}).get("consolidate", {}).get("result"))  # type: ignore[union-attr]
        assert _state(store.root)["jobs"]["consolidate"]["result"].startswith("skipped: no model")  # type: ignore[index]
    finally:
        stop(proc)


def test_install_writes_a_user_unit_and_uninstall_removes_it(store: Store, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run_gitmem("--root", str(store.root), "serve", "--install", "--sync-every", "15",
                      env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    units = list((home / ".config" / "systemd" / "user").glob("gitmem-*.service"))
    assert len(units) == 1
    text = units[0].read_text(encoding="utf-8")
    assert f'"--root" "{store.root.resolve()}" "serve" "--sync-every=15"' in text
    assert f"systemctl --user enable --now {units[0].name}" in done.stdout
    removed = run_gitmem("--root", str(store.root), "serve", "--uninstall", env={"HOME": str(home)})
    assert removed.returncode == 0 and not units[0].exists()
    again = run_gitmem("--root", str(store.root), "serve", "--uninstall", env={"HOME": str(home)})
    assert "no unit file" in again.stdout


def test_the_launchd_agent_is_a_valid_plist(store: Store) -> None:
    unit = unit_for(store.root, ["--sync-every=60"], platform="darwin")
    assert unit.path.parent.name == "LaunchAgents"
    plist = plistlib.loads(unit.text.encode("utf-8"))
    assert plist["ProgramArguments"][-3:] == [str(store.root.resolve()), "serve", "--sync-every=60"]
    assert plist["RunAtLoad"] is True


def _systemd_words(line: str) -> list[str]:
    """ExecStart= split as systemd does (systemd.syntax(7), systemd.service(5)): double-quoted
    words with C escapes, `%%` a literal `%`, `$$` a literal `$`."""
    words, word, quoted, index = [], "", False, 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}
    while index < len(line):
        ch = line[index]
        if ch == "\\":
            word += escapes[line[index + 1]]
            index += 2
            continue
        if ch in "%$":
            assert line[index + 1] == ch, f"unescaped {ch} in {line!r}"
            word += ch
            index += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch == " " and not quoted:
            words.append(word)
            word = ""
        else:
            word += ch
        index += 1
    return [*words, word]


def test_a_store_path_with_percent_dollar_and_quotes_survives_the_unit_files(tmp_path: Path) -> None:
    import shutil
    import subprocess

    root = tmp_path / 'odd %h $HOME ${X} "q" \\ & <x>' / "store"
    root.mkdir(parents=True)
    extra = ["--sync-every=60"]
    unit = unit_for(root, extra, platform="linux")
    exec_line = next(line for line in unit.text.splitlines() if line.startswith("ExecStart="))
    argv = _systemd_words(exec_line.removeprefix("ExecStart="))
    assert argv[-4:] == ["--root", str(root.resolve()), "serve", "--sync-every=60"]
    description = next(line for line in unit.text.splitlines() if line.startswith("Description="))
    assert "%%h" in description and "%h" not in description.replace("%%h", "")
    if shutil.which("systemd-analyze"):  # systemd's own parser, where it is installed
        unit.path.parent.mkdir(parents=True, exist_ok=True)
        unit.path.write_text(unit.text, encoding="utf-8")
        checked = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit.path)],
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr
    plist = plistlib.loads(unit_for(root, extra, platform="darwin").text.encode("utf-8"))
    assert plist["ProgramArguments"][-4:] == ["--root", str(root.resolve()), "serve", "--sync-every=60"]
    assert plist["StandardOutPath"] == str(root.resolve() / "logs" / "serve.out")
