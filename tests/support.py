"""Helpers the tests share: the real git binary, the CLI in-process and in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from gitmem.cli import cli

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


# What a test must not take from the shell that started pytest (tests/conftest.py clears them for
# every test; a template built once per worker is built without them too). git's own config comes
# from the test's HOME only: no file named elsewhere that two tests or two workers would share.
OUTSIDE_ENV = ("GITMEM_ROOT", "GITMEM_SUBAGENT", "GITMEM_GIT_TOKEN", "GITMEM_WORKSPACE",
               "GITMEM_MACHINE", "GITMEM_ALLOW_SECRET", "XDG_CACHE_HOME",
               "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT",
               "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")


def isolated_env(home: Path) -> dict[str, str]:
    """os.environ as a test sees it: its own HOME, no system git config, no warm server."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in OUTSIDE_ENV}
    return {**env, **GIT_ENV, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GITMEM_SERVE": "off"}


def copy_store(template: Path, target: Path) -> Path:
    """A store built once (a session fixture), copied for one test: each test changes its own copy.
    The merge driver in .git/config names its store's root: the copy's names the copy."""
    shutil.copytree(template, target, symlinks=True)
    config = target / ".git" / "config"
    config.write_text(config.read_text().replace(f"--root {template} ", f"--root {target} "))
    return target


@dataclass
class Cli:
    """Runs `gitmem --root <store> ...` in-process through click's CliRunner; `machine` names the
    machine its commits come from (GITMEM_MACHINE), as two real computers' commits differ."""

    root: Path
    runner: CliRunner
    machine: str = ""

    def __call__(self, *args: str, workspace: str | None = None, env: dict[str, str] | None = None) -> Result:
        argv = ["--root", str(self.root)]
        if workspace:
            argv += ["--workspace", workspace]
        if self.machine:
            env = {"GITMEM_MACHINE": self.machine, **(env or {})}
        return self.runner.invoke(cli, [*argv, *args], env=env, catch_exceptions=False)

    def json(self, *args: str, workspace: str | None = None) -> object:
        result = self(*args, "--json", workspace=workspace)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


def capture(gm: Cli, path: Path, *args: str) -> dict[str, Any]:
    """`gitmem capture PATH --json` with no model and every turn kept: its report."""
    report = gm.json("capture", str(path), "--no-model", "--min-signal", "0", *args)
    assert isinstance(report, dict)
    return report


def digest_text(gm: Cli, report: dict[str, Any]) -> str:
    """The digest a capture report names, as written."""
    return (gm.root / "digests" / f"{report['digest']}.md").read_text(encoding="utf-8")


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


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())
