"""Shared fixtures: temporary stores, a CLI runner bound to one, bare remotes."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
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


# The tests' scratch folders live in RAM where the machine has a RAM file system (Linux's
# /dev/shm): the suite writes ~400 MB of stores, git objects and search indexes and fsyncs each
# durable write, and on a disk those waits were ~40% of the run (decision 0029). TMPDIR set by
# the person, or --basetemp, wins. Every process a test starts inherits the folder.
RAM_FOLDER = Path("/dev/shm")
RAM_NEEDED = 4 << 30  # bytes free there, or the suite stays on the disk


def _ram_scratch(config: pytest.Config) -> None:
    if os.environ.get("TMPDIR") or config.option.basetemp or not _is_tmpfs(RAM_FOLDER):
        return
    free = os.statvfs(RAM_FOLDER)
    if free.f_bavail * free.f_frsize < RAM_NEEDED:
        return
    # A short name: a test's socket path must fit in a socket address as it does under /tmp.
    # Others may pass through (0711, as /tmp lets them) to the few tests' folders made for that;
    # pytest's own folders inside are the user's only.
    folder = RAM_FOLDER / f"gm-{os.getuid()}"
    try:
        folder.mkdir(mode=0o711, exist_ok=True)
        found = folder.lstat()
    except OSError:
        return  # a file of that name, say: the suite stays on the disk
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o066:
        return  # a link, someone else's folder, or one others may read or write: not for our stores
    folder.chmod(0o711)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again


def _is_tmpfs(folder: Path) -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(fields[1] == str(folder) and fields[2] == "tmpfs"
               for fields in (line.split() for line in mounts) if len(fields) > 2)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    option = config.option
    if hasattr(config, "workerinput"):
        return  # a worker inherits the controller's TMPDIR and gets its basetemp from it
    _ram_scratch(config)
    if not config.pluginmanager.hasplugin("xdist") or option.collectonly or option.usepdb:
        return
    if option.numprocesses is None and not option.tx and option.dist == "no":
        option.numprocesses = WORKERS
        option.dist = "worksteal"


# pytest keeps each test module's rewritten bytecode in __pycache__ unless bytecode writing is off:
# with PYTHONDONTWRITEBYTECODE=1 every worker rewrote every module's asserts on every run (~12 s
# of CPU each, before a test ran); git ignores __pycache__.
sys.dont_write_bytecode = False


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
