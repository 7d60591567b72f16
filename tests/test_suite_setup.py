"""The README's test command runs the suite on every core (pytest-xdist, turned on in
tests/conftest.py), and a run in one process is still one switch away, for a debugger."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from support import Cli, copy_store, git

TOP = Path(__file__).resolve().parents[1]
ONE_TEST = "tests/test_docs.py::test_readme_stays_a_short_read_that_links_every_docs_page"
WORKERS_STARTED = "bringing up nodes"  # what xdist prints as it starts its workers


def _pytest(basetemp: Path, *args: str) -> str:
    """One test through a pytest of its own. Its temporary folders go under `basetemp`: a pytest
    with the default one would first delete the oldest runs' folders (gigabytes after a few runs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={basetemp}",
                           *args, ONE_TEST],
                          cwd=TOP, capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    return done.stdout


def test_the_plain_command_runs_on_workers_and_no_xdist_runs_in_one_process(tmp_path: Path) -> None:
    assert WORKERS_STARTED in _pytest(tmp_path / "workers")
    assert WORKERS_STARTED not in _pytest(tmp_path / "one", "-p", "no:xdist")


def test_a_copied_template_store_is_a_store_of_its_own(tmp_path: Path) -> None:
    template = Cli(tmp_path / "template", CliRunner())
    for args in (("init",), ("remember", "The staging database moved to db2", "-l", "semantic", "-t", "infra")):
        assert template(*args).exit_code == 0
    assert f"--root {template.root} merge-driver" in (template.root / ".git" / "config").read_text()
    before = git(template.root, "rev-parse", "HEAD")
    copy = Cli(copy_store(template.root, tmp_path / "copy"), CliRunner())
    written = copy("remember", "Written in the copy only", "-l", "semantic", "-t", "infra")
    assert written.exit_code == 0, written.output
    config = (copy.root / ".git" / "config").read_text()
    assert f"--root {copy.root} merge-driver" in config and str(template.root) not in config
    assert git(template.root, "rev-parse", "HEAD") == before
    assert "Written in the copy only" not in (template.root / "global/semantic/infra.md").read_text()
    assert written.stdout.strip() in git(copy.root, "show", "HEAD:global/semantic/infra.md")
