"""Locate the files that ship with gitmem: templates, hook scripts, SYSTEM.template.md."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """Path of a shipped file: inside an installed wheel, else the source checkout's top level."""
    for base in (_PACKAGE_DIR / "_data", _PACKAGE_DIR.parent):
        candidate = base / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"gitmem data file {name!r} is missing from this installation")


def read_text(name: str) -> str:
    return data_path(name).read_text(encoding="utf-8")
