"""Unit files that keep the server running: a systemd user unit on Linux, a launchd agent on macOS.

One per store, named by a hash of the store's path; HOME decides where they go.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from gitmem import caller
from gitmem.fsio import write_text_atomic


@dataclass
class Unit:
    """Where a unit file goes, what it says, and how to start and stop it."""

    path: Path
    text: str
    start: list[str]
    stop: list[str]


def store_hash(root: Path) -> str:
    return hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:12]


def _home() -> Path:
    return Path(caller.home())


def command(root: Path, extra: list[str]) -> list[str]:
    """The command the unit runs: this Python, this gitmem, this store."""
    return [sys.executable, "-m", "gitmem", "--root", str(root.resolve()), "serve", *extra]


def unit_for(root: Path, extra: list[str], platform: str = sys.platform) -> Unit:
    name = f"gitmem-{store_hash(root)}"
    argv = command(root, extra)
    if platform == "darwin":
        label = f"dev.gitmem.{store_hash(root)}"
        path = _home() / "Library" / "LaunchAgents" / f"{label}.plist"
        args = "\n".join(f"        <string>{escape(a)}</string>" for a in argv)
        logs = escape(str(root.resolve() / "logs" / "serve.out"))
        text = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{label}</string>
    <key>ProgramArguments</key>
    <array>
{args}
    </array>
    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <dict>
        <key>SuccessfulExit</key>
        <false/>
    </dict>
    <key>StandardOutPath</key>
    <string>{logs}</string>
    <key>StandardErrorPath</key>
    <string>{logs}</string>
</dict>
</plist>
"""
        return Unit(path, text, ["launchctl", "load", "-w", str(path)],
                    ["launchctl", "unload", "-w", str(path)])
    path = _home() / ".config" / "systemd" / "user" / f"{name}.service"
    text = f"""[Unit]
Description=gitmem warm server and scheduled sync for {_systemd_text(str(root.resolve()))}

[Service]
Type=simple
ExecStart={" ".join(systemd_quote(a) for a in argv)}
Restart=on-failure
RestartSec=30

[Install]
WantedBy=default.target
"""
    return Unit(path, text, ["systemctl", "--user", "daemon-reload", "&&", "systemctl", "--user",
                             "enable", "--now", path.name],
                ["systemctl", "--user", "disable", "--now", path.name])


def systemd_quote(arg: str) -> str:
    """One word of a systemd command line: double-quoted with C escapes, `%` (specifiers) as
    `%%` and `$` (variables) as `$$`, so a path holding any of them reaches the program as is."""
    escaped = "".join(_SYSTEMD_ESCAPES.get(ch, ch) for ch in arg)
    return f'"{escaped}"'


_SYSTEMD_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
                    "%": "%%", "$": "$$"}


def _systemd_text(text: str) -> str:
    """A value of a plain setting (Description=): specifiers escaped, one line."""
    return text.replace("%", "%%").replace("\n", " ").replace("\r", " ")


def install(root: Path, extra: list[str]) -> Unit:
    unit = unit_for(root, extra)
    unit.path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(unit.path, unit.text)
    return unit


def uninstall(root: Path) -> Unit | None:
    """Remove the unit file; None when there was none."""
    unit = unit_for(root, [])
    try:
        unit.path.unlink()
    except FileNotFoundError:
        return None
    return unit
