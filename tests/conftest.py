"""Shared fixtures: temporary stores, a CLI runner bound to one, bare remotes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gitmem.cli import cli
from gitmem.store import Store

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's store, token or subagent flag."""
    for name in ("GITMEM_ROOT", "GITMEM_SUBAGENT", "GITMEM_GIT_TOKEN", "GITMEM_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


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


@dataclass
class Cli:
    """Runs `gitmem --root <store> ...` in-process through click's CliRunner."""

    root: Path
    runner: CliRunner

    def __call__(self, *args: str, workspace: str | None = None, env: dict[str, str] | None = None) -> Result:
        argv = ["--root", str(self.root)]
        if workspace:
            argv += ["--workspace", workspace]
        return self.runner.invoke(cli, [*argv, *args], env=env, catch_exceptions=False)

    def json(self, *args: str, workspace: str | None = None) -> object:
        result = self(*args, "--json", workspace=workspace)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


@pytest.fixture
def gm(store: Store) -> Cli:
    return Cli(store.root, CliRunner())


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run the real git binary and return its stdout."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def run_gitmem(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
               input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess (python -m gitmem)."""
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, input=input_text)


@pytest.fixture
def bare_remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(path))
    return path


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())
