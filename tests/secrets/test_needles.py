"""Needles: the strings a secret pattern cannot match without. A line without any of a pattern's
needles is not searched with it, so the needles must hold for every match, case-insensitive
ones included."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.secrets import gate
from gitmem.secrets.needles import fold, needles
from gitmem.secrets.scan import _SKIPPED, find_secrets


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """These tests are about the pattern cache: each starts with none."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize(("source", "expected"), [
    ("AKIA[0-9A-Z]{16}", ["akia"]),
    (r"(api_?key|secret)\s*=", ["api_key", "apikey", "secret"]),
    (r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", ["gho_", "ghp_", "ghr_", "ghs_", "ghu_"]),
    (r"x?y", ["xy", "y"]),
    (r"BEGIN (RSA|EC) PRIVATE KEY", ["begin ec private key", "begin rsa private key"]),
    (r"(?:\s|=)AP[0-9]{8,}", ["ap"]),
    (r"(contraseña|password)=", ["contrase", "password="]),  # the ASCII part of a non-ASCII needle
])
def test_needles_of_typical_patterns(source: str, expected: list[str]) -> None:
    assert needles(source) == expected


@pytest.mark.parametrize("source", [r"\w+", r"(ab|)d?", r"[a-z]{3}\d", r"(?=key)\w+", r"(a|\d)b?",
                                    "ñ+", "(unbalanced"])
def test_a_pattern_with_no_sure_needle_has_none(source: str) -> None:
    assert needles(source) is None


def test_every_character_a_case_insensitive_pattern_matches_folds_to_the_needle() -> None:
    """Python's re.IGNORECASE matches some non-ASCII characters to ASCII letters (the Kelvin
    sign to k, the long s to s, the dotless i to i); folding a line must keep those matches."""
    printable = re.compile(r"[!-~]", re.IGNORECASE)
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        if printable.fullmatch(char):
            letters = [a for a in map(chr, range(0x21, 0x7F))
                       if re.fullmatch(re.escape(a), char, re.IGNORECASE)]
            assert all(a.casefold() in fold(char) for a in letters), (hex(code), letters)


def _cached_gate() -> list[tuple[re.Pattern[str], list[str] | None]]:
    find_secrets("an ordinary note")  # writes the cache under this test's HOME
    data = json.loads(gate.cache_file().read_text())
    assert data["format"] == gate.CACHE_FORMAT and len(data["needles"]) == len(data["patterns"])
    return [(re.compile(source, flags), found)
            for (source, flags), found in zip(data["patterns"], data["needles"], strict=True)]


def test_every_match_of_every_detector_pattern_holds_one_of_its_needles() -> None:
    """Strings made to match each of the detector's own patterns (and case-changed copies of
    them) always contain a needle, so the gate never skips a line a pattern would flag."""
    pinned = [(pattern, found) for pattern, found in _cached_gate() if found is not None]
    assert len(pinned) >= 40  # nearly every pattern has needles; the test must see them
    makers = [st.tuples(st.just(pattern), st.just(found), st.from_regex(pattern))
              for pattern, found in pinned]

    @settings(deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=st.one_of(makers), upper=st.booleans())
    def holds(case: tuple[re.Pattern[str], list[str], str], upper: bool) -> None:
        pattern, found, text = case
        line = text.upper() if upper else text
        if "\n" in line or pattern.search(line) is None:
            return  # lines never hold a newline; an upper-cased copy may no longer match
        assert any(needle in fold(line) for needle in found), (pattern.pattern, line)

    holds()


WORDS = ["api_key", "API-KEY", "secret", "password", "pass", "token", "=", ":", "'", '"', " ",
         "ghp_", "AKIA", "xoxb-", "sk_live_", "BEGIN", "PRIVATE KEY", "cloudant", "ibm", "ſecret",
         "apı_key", "0123456789abcdef", "QWERTYUIOPASDFGH", "eyJ", ".", "-", "_", "//"]


@settings(deadline=None, database=None)
@given(st.lists(st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=14)
                .map("".join), min_size=1, max_size=8))
def test_the_gate_picks_exactly_the_lines_a_pattern_matches(lines: list[str]) -> None:
    numbered = [(n, line) for n, line in enumerate(lines, 1) if "\n" not in line and "\r" not in line]
    loaded = gate.load_gate(_SKIPPED)
    if loaded is None:
        find_secrets("an ordinary note")
        loaded = gate.load_gate(_SKIPPED)
    assert loaded is not None
    naive = [(n, line) for n, line in numbered if any(p.search(line) for p, _ in loaded.patterns)]
    assert loaded.suspects(numbered) == naive


def test_a_cache_without_needles_is_not_used() -> None:
    find_secrets("an ordinary note")
    data = json.loads(gate.cache_file().read_text())
    del data["needles"], data["format"]
    gate.cache_file().write_text(json.dumps(data))
    gate._LOADED.clear()
    assert gate.load_gate(_SKIPPED) is None
    find_secrets("another ordinary note")  # the detector runs and writes the cache anew
    assert gate.load_gate(_SKIPPED) is not None
