"""The command table of gitmem/cli/main.py names each command's module, and a call loads only the
module of the command it runs (the path without a warm server starts sooner)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import gitmem.cli
from gitmem.cli.main import COMMAND_MODULES, every_command


def test_the_table_names_every_command_of_every_module_and_nothing_else() -> None:
    defined: dict[str, str] = {}
    for module in pkgutil.iter_modules(gitmem.cli.__path__):
        commands = getattr(import_module(f"gitmem.cli.{module.name}"), "COMMANDS", None)
        for command in commands or []:
            assert command.name not in defined, f"{command.name} is defined twice"
            defined[str(command.name)] = module.name
    assert defined == COMMAND_MODULES


def test_a_call_loads_the_module_of_its_command_alone(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from gitmem.cli import run_in_process\n"
        "try:\n"
        "    run_in_process()\n"
        "finally:\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith('gitmem.cli.'))\n"
        "    print(' '.join(loaded), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, "--root", str(tmp_path / "store"), "init"],
                          capture_output=True, text=True, env={"GITMEM_SERVE": "off", "HOME": str(tmp_path),
                                                                "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.split())
    assert "gitmem.cli.store" in loaded  # `init` lives there
    assert not loaded & {"gitmem.cli.web", "gitmem.cli.sync", "gitmem.cli.imports", "gitmem.cli.review"}
    help_text = subprocess.run([sys.executable, "-m", "gitmem", "--help"], capture_output=True, text=True,
                               env={"GITMEM_SERVE": "off", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert help_text.returncode == 0
    shown = [name for name, command in every_command().items() if not command.hidden]
    assert len(shown) > 40
    for name in shown:  # the help still lists every command
        assert f"  {name} " in help_text.stdout or f"  {name}\n" in help_text.stdout, name
