"""Shared fixtures: temporary stores, a CLI runner bound to one, bare remotes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from gitmem import redaction
from gitmem.store.store import Store
from support import GIT_ENV, OUTSIDE_ENV, Cli, git

# Property tests: a few examples on every run, many on demand (HYPOTHESIS_PROFILE=deep). Tests set
# no example counts of their own; no deadline, and no health check about speed: the machines are
# shared and noisy, and a slow example is not a wrong one.
settings.register_profile("ci", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The suite runs on every core by default (pytest-xdist): a plain `python -m pytest` is the README's
# and CI's command. Not an addopts `-n`: that would make `-p no:xdist` (or an install without
# xdist) refuse to start. `-n 0` or `-p no:xdist` run everything in one process (for a debugger);
# an explicit `-n N` or `--dist` wins. worksteal: a worker that runs out of tests takes some from
# the other, so the slow tests at the end of one worker's share do not leave a core idle.
WORKERS = "auto"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    option = config.option
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or option.collectonly or option.usepdb):
        return
    if option.numprocesses is None and not option.tx and option.dist == "no":
        option.numprocesses = WORKERS
        option.dist = "worksteal"


def pytest_sessionstart(session: pytest.Session) -> None:
    """gitmem's bytecode is compiled once, as an install does: with PYTHONDONTWRITEBYTECODE=1 set,
    every CLI process the suite starts would otherwise compile the modules it imports (~0.4 s of
    CPU each, over a thousand processes)."""
    if not hasattr(session.config, "workerinput"):
        import compileall

        compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "gitmem"), quiet=1)


@pytest.fixture(scope="session")
def _shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole run (per worker): what gitmem caches there depends only
    on the installed versions (the secret detector's patterns, ~0.45 s of CPU to derive in a
    new process). The tests of that cache itself give themselves an empty one."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, _shared_cache: Path) -> None:
    """No test reads the developer's store, token, subagent flag or caches."""
    for name in OUTSIDE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(_shared_cache))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # A CLI call that finds no warm server starts one; a test's calls must not leave servers
    # behind. The server tests (tests/serve/) turn it back on and stop what they started.
    monkeypatch.setenv("GITMEM_SERVE", "off")
    # Secrets a test registers for redaction are forgotten after it: one test's token must not
    # hide text in another test's output.
    monkeypatch.setattr(redaction, "_SECRETS", set())


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(store_root: Path) -> Iterator[Store]:
    """An initialised store at tmp_path/store."""
    s = Store(store_root, cwd=store_root.parent)
    s.init()
    yield s
    s.close()


@pytest.fixture
def gm(store: Store) -> Cli:
    return Cli(store.root, CliRunner())


@pytest.fixture
def bare_remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(path))
    return path
