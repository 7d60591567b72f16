"""Helpers the tests share: the real git binary, the CLI in-process and in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from gitmem.cli import cli

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}



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
