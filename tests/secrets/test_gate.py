"""The gate in front of detect-secrets: its own patterns, cached per version, clear ordinary lines
without importing it, and never clear a line the detector would flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.secrets import gate
from gitmem.secrets.scan import _SKIPPED, find_secrets

LINES = [
    "CI pushes with ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "backup uses AKIA" + "QWERTYUIOPASDFGH",
    "-----BEGIN OPENSSH " + "PRIVATE KEY-----",
    "calls sk-proj-Xo9fA8k2Lq7Zr4Tn1Wc6" + "T3BlbkFJ" + "Vb3Ym5Pd0Se2Hu8Jg1Kf",
    "bot xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "db postgres://admin:" + "pw@db.internal:5432/app",
    'settings: api_key = "' + 'a8f5f167f44f4964e6c998dee827110c"',
    "stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "The staging database listens on port 5433.",
    "commit 3f2c1d0e9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e and 123e4567-e89b-12d3-a456-426614174000",
    "password is in the vault; rotate the api key",
]


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """These tests are about the pattern cache: each starts with none."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_the_first_scan_caches_the_detectors_patterns_for_its_version() -> None:
    assert gate.load_gate(_SKIPPED) is None  # a fresh home: no cache yet
    find_secrets("an ordinary note")
    data = json.loads(gate.cache_file().read_text())
    assert data["version"] == gate.installed_version() and data["patterns"]
    assert "GitHubTokenDetector" in data["plugins"] and "KeywordDetector" in data["plugins"]
    assert not set(data["plugins"]) & _SKIPPED
    assert gate.load_gate(_SKIPPED) is not None


def test_a_cache_of_another_version_or_plugin_choice_is_not_used() -> None:
    find_secrets("an ordinary note")
    data = json.loads(gate.cache_file().read_text())
    gate.cache_file().write_text(json.dumps({**data, "version": "0.0.1"}))
    assert gate.load_gate(_SKIPPED) is None
    gate.cache_file().write_text(json.dumps({**data, "skipped": []}))
    assert gate.load_gate(_SKIPPED) is None
    gate.cache_file().write_text("{not json")
    assert gate.load_gate(_SKIPPED) is None


def test_the_gate_never_clears_a_line_the_detector_flags() -> None:
    without = [find_secrets(line) for line in LINES]  # no cache yet: the detector sees every line
    assert gate.load_gate(_SKIPPED) is not None
    with_gate = [find_secrets(line) for line in LINES]
    assert with_gate == without
    assert sum(1 for found in without if found) == 8  # the eight credentials, nothing else


def test_ordinary_text_does_not_load_the_detector_once_the_gate_is_cached() -> None:
    find_secrets("an ordinary note")  # writes the cache under this test's HOME
    code = ("import sys\nfrom gitmem.secrets.scan import find_secrets\n"
            "print(find_secrets('Deploys go out at noon; port 5433'), 'detect_secrets' in sys.modules)\n"
            "print(bool(find_secrets('bot xoxb-123456789012-1234567890123-AbCdEfGhIjKl')),"
            " 'detect_secrets' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.splitlines() == ["[] False", "True True"], done.stderr
