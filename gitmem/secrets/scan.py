"""Find likely secrets in text before it is committed, and refuse the write that carries one.

The detector is Yelp's detect-secrets: its plugins that recognise credentials by their shape
(GitHub, GitLab, AWS access keys, OpenAI, Slack, Stripe, Twilio, npm, PyPI, JWTs, private key
headers, passwords inside URLs, `api_key = "..."` assignments, ...), run line by line. Its
high-entropy plugins are left out: in prose they flag commit hashes, UUIDs and plain words. The
public-IP plugin too: a server's address is an ordinary fact in memory. On top of it, gitmem's own
rules (rules.py: formats detect-secrets does not know yet, unquoted `password:` and `*_TOKEN=`
assignments) and the store's own git token (GITMEM_GIT_TOKEN, tokens gitmem took out of URLs),
looked for verbatim.

detect-secrets is imported only when a write scans a line that one of its own patterns matches
(gate.py), never at module import: it costs more than pygit2 to load (it brings `requests`),
which read verbs, `--help` and the ordinary write must not pay.

A finding names the kind and the line, never the secret. A write verb's --allow-secret lets that
one write through; GITMEM_ALLOW_SECRET=1 only lets hand edits through (the ones gitmem commits and
a plain `git commit` through the pre-commit hook), never a write verb's text.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitmemError, InvalidInputError
from gitmem.fsio import read_text
from gitmem.redaction import known_tokens
from gitmem.secrets.gate import (
    Gate,
    build_gate,
    candidate_lines,
    detector_patterns,
    load_gate,
    plugin_classes,
    present_needles,
    save_gate,
)
from gitmem.secrets.needles import fold
from gitmem.secrets.rules import RULES, rule_needles

ALLOW_ENV = "GITMEM_ALLOW_SECRET"
# Left out of detect-secrets' plugin set: see the module docstring.
_SKIPPED = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"})
_MIN_TOKEN = 6  # a known token shorter than this would match ordinary words


@dataclass(frozen=True)
class Finding:
    """One likely secret: what kind, on which line (of `path` when the text came from a file)."""

    kind: str
    line: int
    path: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else f"line {self.line}"
        return f"{where} holds a likely secret ({self.kind})"


def allowed_by_environment() -> bool:
    """GITMEM_ALLOW_SECRET=1: for hand edits only (hooks cannot take flags)."""
    return (caller.env(ALLOW_ENV) or "").strip().lower() in ("1", "true", "yes")


_DETECTING = threading.Lock()


@functools.lru_cache(maxsize=1)
def _plugins() -> tuple[str, ...]:
    """Names of the detect-secrets plugins gitmem runs: every one it ships but _SKIPPED."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    names = [str(getattr(plugin, "__name__", "")) for plugin in
             plugin_classes(get_mapping_from_secret_type_to_class())]
    return tuple(sorted(name for name in names if name and name not in _SKIPPED))


def scan_lines(lines: Iterable[tuple[int, str]], *, path: str = "",
               known: Iterable[str] = ()) -> list[Finding]:
    """Findings in numbered lines, in line order, one per (line, kind)."""
    numbered = [(n, line) for n, line in lines if line.strip()]
    if not numbered:
        return []
    # Escapes hide a token from a pattern (`\u0078oxb-...`, `%2F`, `&#103;hp_`, a terminal's
    # colour codes, a zero-width space inside it): such a line is looked at as written and as it
    # reads once they are undone.
    numbered += [(n, shown) for n, line in numbered if _MAY_HIDE.search(line)
                 for shown in (unescaped(line),) if shown != line]
    tokens = sorted({t for t in (*known, *known_tokens()) if len(t) >= _MIN_TOKEN})
    found: dict[tuple[int, str], Finding] = {}
    for number, line in numbered:
        if any(token in line for token in tokens):
            found.setdefault((number, "token"), Finding("the git token of this store", number, path))
    gate = load_gate(_SKIPPED)
    folded = [fold(line) for _, line in numbered]  # folded, and their needles found, once
    present = present_needles("\n".join(folded), all_needles(gate))
    for number, kind in own_findings(numbered, folded, present):
        found.setdefault((number, kind), Finding(kind, number, path))
    if gate is not None:  # only lines one of the detector's own patterns matches can be findings
        numbered = gate.suspects(numbered, folded, present)
    if numbered:
        for number, kind in _detect(numbered, cache=gate is None):
            found.setdefault((number, kind), Finding(kind, number, path))
    return sorted(found.values(), key=lambda f: (f.line, f.kind))


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([nrtbf])|(.))")


_MAY_HIDE = re.compile(r"[\\%&\x1b]|[^\x00-\x7f]")
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def unescaped(line: str) -> str:
    """A line as it reads with what can hide a token undone: a terminal's colour codes dropped,
    HTML character references and URL percent-escapes decoded, backslash escapes undone
    (`\\u` with four hex digits, `\\x` with two, as their characters; `\\n` and its kin as a space, where a pattern
    stops as at a line's end), look-alike letters folded (full-width to plain, NFKC) and
    invisible characters (zero-width spaces, soft hyphens) dropped."""
    import html
    import unicodedata
    from urllib.parse import unquote

    def undo(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        if code:
            char = chr(int(code, 16))
            return char if char.isprintable() and not 0xD800 <= ord(char) <= 0xDFFF else " "
        return " " if match.group(3) else match.group(4)

    text = _ANSI.sub("", line)
    text = html.unescape(text) if "&" in text else text
    text = unquote(text, errors="replace") if "%" in text else text
    text = _ESCAPE.sub(undo, text) if "\\" in text else text
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return text


def own_findings(numbered: list[tuple[int, str]], folded: list[str],
                 present: set[str]) -> list[tuple[int, str]]:
    """(line, kind) of what gitmem's own rules find in these lines (`folded`: the same lines
    folded; `present`: the needles they hold, present_needles)."""
    whole = "\n".join(folded)
    out = []
    for rule, pins in zip(RULES, rule_needles(), strict=True):
        if pins is not None and present.isdisjoint(pins):
            continue  # none of its needles in the text: it cannot match
        out += [(numbered[i][0], rule.kind) for i in candidate_lines(folded, whole, pins, present)
                if rule.values(numbered[i][1])]
    return out


_NEEDLES: tuple[object, frozenset[str]] | None = None


def all_needles(gate: Gate | None) -> frozenset[str]:
    """Every needle of gitmem's rules and of the detector's patterns (kept per gate)."""
    global _NEEDLES
    kept = _NEEDLES
    if kept is not None and kept[0] is gate:
        return kept[1]
    groups = [*rule_needles(), *(gate.pins if gate is not None else ())]
    found = frozenset(needle for pins in groups if pins is not None for needle in pins)
    _NEEDLES = (gate, found)
    return found


def detector_gate() -> Gate | None:
    """The detector's patterns, from the cache, or read from detect-secrets (and cached) when
    there is none yet; None when its plugins are not made of patterns gitmem can read."""
    gate = load_gate(_SKIPPED)
    if gate is not None:
        return gate
    patterns = detector_patterns(_plugins())
    if patterns is None:
        return None
    save_gate(_SKIPPED, _plugins(), patterns)
    return load_gate(_SKIPPED) or build_gate(patterns)


def _detect(numbered: list[tuple[int, str]], *, cache: bool) -> list[tuple[int, str]]:
    """(line, kind) of what detect-secrets finds in these lines; caches its patterns when asked."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    out = []
    # detect-secrets' settings are the process's: one scan at a time (the warm server runs
    # calls on several threads), or one call's end would put back settings another still uses.
    with _DETECTING, transient_settings({"plugins_used": [{"name": name} for name in _plugins()]}):
        for number, line in numbered:
            out += [(number, secret.type) for secret in scan_line(line)]
    if cache:
        patterns = detector_patterns(_plugins())
        if patterns is not None:
            save_gate(_SKIPPED, _plugins(), patterns)
    return out


def find_secrets(text: str, *, path: str = "", known: Iterable[str] = ()) -> list[Finding]:
    """Findings in a whole text."""
    return scan_lines(enumerate(text.splitlines(), 1), path=path, known=known)


def added_lines(old: str | None, new: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines of `new` that `old` did not have: what a change adds."""
    before = set((old or "").splitlines())
    return [(n, line) for n, line in enumerate(new.splitlines(), 1) if line not in before]


def refuse_secrets(text: str, what: str = "text", *, allow: bool = False,
                   overridable: bool = True) -> None:
    """InvalidInputError (exit 2) when `text` holds a likely secret, naming the kind and the line;
    nothing when the write verb was told --allow-secret (the environment does not count here).
    `overridable=False`: the verb has no --allow-secret, and the message does not offer one."""
    if allow or not text.strip():
        return
    found = find_secrets(text)
    if found:
        raise refusal(found, what, "pass --allow-secret to record it anyway" if overridable else None)


def refuse_added_secrets(changes: dict[str, tuple[str | None, str]], *, way_out: str | None) -> None:
    """The same for files: only the lines each change adds are looked at (a secret already
    committed is not this change's doing)."""
    if allowed_by_environment():
        return
    found = [f for path, (old, new) in sorted(changes.items())
             for f in scan_lines(added_lines(old, new), path=path)]
    if found:
        raise refusal(found, "", way_out)


HAND_EDIT_WAY_OUT = ("commit it knowingly with GITMEM_ALLOW_SECRET=1 set for that one command")


def refuse_hand_edit_secrets(root: Path, paths: list[str],
                             read_head: Callable[[str], bytes | None]) -> None:
    """Files edited by hand, about to be committed by gitmem: refuse what their edits add."""
    if allowed_by_environment() or not paths:
        return
    found = hand_edit_findings(root, paths, read_head)
    if found:
        raise refusal(found, "", HAND_EDIT_WAY_OUT)


STORE_TOKEN_FILE = "state/git-token"  # where `remote set` keeps a token no helper took


def store_tokens(root: Path) -> list[str]:
    """The store's own git token as saved in it (looked for verbatim: a 40-digit hex token
    reads as a commit hash to every rule)."""
    try:
        token = read_text(root / STORE_TOKEN_FILE).strip()
    except (OSError, UnicodeDecodeError):
        return []
    return [token] if token and not any(c.isspace() for c in token) else []


def hand_edit_findings(root: Path, paths: list[str],
                       read_head: Callable[[str], bytes | None]) -> list[Finding]:
    """Likely secrets in the lines hand edits of these files add to what HEAD holds."""
    changes: dict[str, tuple[str | None, str]] = {}
    for path in paths:
        try:
            new = read_text(root / path)
        except (OSError, UnicodeDecodeError):
            continue  # gone, or not text: nothing to read a secret in
        try:
            old = read_head(path)
        except GitmemError:
            old = None  # no committed version to compare with: every line is new
        changes[path] = (None if old is None else old.decode("utf-8", errors="replace"), new)
    # A file's name is committed too (a topic file named by hand after a token).
    named = [Finding(f.kind, 1, path) for path in paths if path in changes and changes[path][0] is None
             for f in scan_lines([(1, path)])]
    known = store_tokens(root)
    return named + [f for path, (old, new) in sorted(changes.items())
                    for f in scan_lines(added_lines(old, new), path=path, known=known)]


def refusal(found: list[Finding], what: str, way_out: str | None) -> InvalidInputError:
    """The one-line refusal: the first finding, how many more, and the way out (None: removing
    it is the only one)."""
    first = found[0]
    where = f"{what} {first}" if what and not first.path else str(first)
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    out = f"Remove it, or {way_out}" if way_out else "Remove it and try again"
    return InvalidInputError(f"refused: {where}{more}; nothing was written. {out}")
