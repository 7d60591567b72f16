"""Mask, wherever stored or model-made text is printed or written out, what the write gate would
refuse: the same rules (rules.py), the same detector patterns (gate.py, read from the cache, so
detect-secrets itself is not imported), plus the URL rule of gitmem.redaction (userinfo,
credential query parameters, the store's own tokens). Each secret becomes ***.

The detector's patterns are used without its filters, so the mask hides a little more than the
gate refuses (a templated value, say), never less. Private key blocks are hidden whole, from the
BEGIN line to the END line. With no cache yet, the first mask reads the patterns from
detect-secrets once and caches them, as the first scan does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from gitmem.redaction import redact, secrets_in_force
from gitmem.secrets.gate import candidate_lines, present_needles
from gitmem.secrets.needles import fold
from gitmem.secrets.rules import RULES, rule_needles
from gitmem.secrets.scan import all_needles, detector_gate, unescaped

MASK = "***"
# A block to its END line; one without (cut short, or only the header quoted) to the end of its
# key material: the header's line and the base64 and `Name: value` lines after it, not the rest
# of the output (a list, a card) that follows.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"|[^\n]*(?:\n(?:[A-Za-z0-9+/=]{16,}[ \t]*|[A-Za-z][A-Za-z-]*: [^\n]*|[ \t]*(?=\n)))*)", re.DOTALL)
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: \S+|\Z)", re.DOTALL)
SEEN_LIMIT = 20_000  # texts whose masked form is kept (snippets, titles, card lines)...
SEEN_CHARS = 8_000_000  # ...and their characters: whole outputs are kept too (hide_output)
_SEEN: dict[tuple[str, tuple[frozenset[str], int]], str] = {}
_seen_chars = 0


def hide_secrets(text: str, tokens: Iterable[str] = (), *, undo: bool = True) -> str:
    """The text with every likely secret shown as ***. (`undo`: also look at lines as they read
    with escapes undone; the look itself passes False.)"""
    if not text:
        return text
    out = _PUTTY.sub(MASK, _PRIVATE_KEY.sub(MASK, text))  # whole blocks, before a rule splits one
    out = redact(out, tokens)
    lines = out.split("\n")
    folded = [fold(line) for line in lines]
    whole = "\n".join(folded)
    spans: dict[int, list[tuple[int, int]]] = {}
    gate = detector_gate()
    present = present_needles(whole, all_needles(gate))
    for rule, pins in zip(RULES, rule_needles(), strict=True):
        if pins is not None and present.isdisjoint(pins):
            continue  # none of its needles in the text: it cannot match
        for i in candidate_lines(folded, whole, pins, present):
            found = rule.values(lines[i])
            if found:
                spans.setdefault(i, []).extend(found)
    if gate is not None:
        for i, found in gate.spans(lines, folded, whole, present).items():
            spans.setdefault(i, []).extend(found)
    for i, found in spans.items():
        lines[i] = _masked(lines[i], found)
    # A token escapes or colour codes hide: the whole line goes. The lines are read at once, by
    # these same rules (no detector loaded for a read).
    hiding = [(i, " ".join(unescaped(line).split("\n"))) for i, line in enumerate(lines)
              if undo and i not in spans and _HIDING.search(line)]
    hiding = [(i, shown) for i, shown in hiding if shown != lines[i]]
    if hiding:
        undone = "\n".join(shown for _i, shown in hiding)
        for (i, shown), masked in zip(hiding, hide_secrets(undone, tokens, undo=False).split("\n"),
                                      strict=True):
            if masked != shown:
                lines[i] = MASK
    return "\n".join(lines)


# What can hide a token from the rules in printed text (scan.unescaped undoes it): a terminal's
# colour codes, percent-escapes, character references, backslash escapes, invisible characters,
# full-width letters.
_HIDING = re.compile(r"[\x1b%\\\u00ad\u200b-\u200f\u2060-\u2064\ufeff\uff01-\uff5e]|&#")


def hide_all(texts: Sequence[str], tokens: Iterable[str] = ()) -> list[str]:
    """Each text as hide_secrets shows it, in one pass over those not masked lately.

    Texts come back often (the hits of a search typed a letter at a time, a card built again),
    so what a text became is kept (_SEEN) under the literal secrets in force and the detector
    patterns in use: a token registered later makes a new key. Every rule reads a line at a
    time, and the joined texts are the same lines, so a text that would change alone changes
    the whole; a private key block may reach past its text there, which only sends the texts
    through one by one."""
    tokens = tuple(tokens)
    key = (secrets_in_force(tokens), id(detector_gate()))
    shown = [_SEEN.get((text, key)) for text in texts]
    todo = [i for i, text in enumerate(shown) if text is None]
    if not todo:
        return [text for text in shown if text is not None]
    fresh = [texts[i] for i in todo]
    whole = "\n".join(fresh)
    masked = hide_secrets(whole, tokens)
    if masked != whole:  # one text alone (a whole output): what it became is known already
        fresh = [masked] if len(fresh) == 1 else [hide_secrets(text, tokens) for text in fresh]
    global _seen_chars
    adding = sum(len(texts[i]) for i in todo) * 2
    if 2 * len(todo) > SEEN_LIMIT // 4 or adding > SEEN_CHARS // 4:
        # One call this big (a long export) is not kept: it would push out everything else.
        for i, text in zip(todo, fresh, strict=True):
            shown[i] = text
        return [text for text in shown if text is not None]
    if len(_SEEN) + 2 * len(todo) > SEEN_LIMIT or _seen_chars + adding > SEEN_CHARS:
        _SEEN.clear()
        _seen_chars = 0
    _seen_chars += adding
    for i, text in zip(todo, fresh, strict=True):
        _SEEN[(texts[i], key)] = shown[i] = text
        # Masking what is masked changes nothing (a *** is left alone; tests/secrets checks the
        # corpus): an adapter masking a verb's output once more finds it kept.
        _SEEN[(text, key)] = text
    return [text for text in shown if text is not None]


def clip(text: str, limit: int) -> str:
    """The text as printed, shortened to `limit` characters: masked first, so a cut never
    leaves part of a secret, or a secret without the word that marks it, to be seen."""
    return hide_secrets(text)[:limit]


# What may follow a matched secret within the same token: base64 and base64url letters, the dots
# of a JWT or of a dotted suffix (GitLab's `glpat-….01.…`), padding. Some detector patterns end
# lazily (the JWT one stops before the signature); a mask runs to the token's end instead.
_TOKEN_REST = re.compile(r"[A-Za-z0-9_\-.+/=]*")


def _token_end(line: str, end: int) -> int:
    found = _TOKEN_REST.match(line, end)
    return found.end() if found else end


def _masked(line: str, spans: list[tuple[int, int]]) -> str:
    """The line with each (merged) span, carried to the end of the token it ends in, replaced by
    ***; a *** already there is left alone."""
    merged: list[list[int]] = []
    whole = [(start, _token_end(line, end)) for start, end in spans]
    for start, end in sorted(s for s in whole if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, last = [], 0
    for start, end in merged:
        if line[start:end].strip("*"):
            out += [line[last:start], MASK]
            last = end
    return "".join(out) + line[last:]


KEPT_CHARS = 65_536  # a whole output up to this size is kept masked (hide_output)


def hide_output(text: str) -> str:
    """A whole output (what an adapter prints) as hide_secrets shows it. One that was printed
    lately is not masked again: a warm server answers the same card or list call after call,
    and this last mask of everything printed cost as much as building the card."""
    if len(text) > KEPT_CHARS:
        return hide_secrets(text)
    return hide_all([text])[0]


def masked_data(data: Any) -> Any:
    """JSON-like data as an adapter prints it (dates and paths as JSON spells them): every
    string, keys included, masked in one pass over those not masked lately (hide_all). A verb's
    texts come masked already and are found kept; so are the ids, paths and names of the last
    answers."""
    plain = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    strings: list[str] = []
    _strings(plain, strings)
    changed = {text: shown for text, shown in zip(strings, hide_all(strings), strict=True)
               if shown != text}
    return _replaced(plain, changed) if changed else plain


def _strings(value: Any, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            into.append(key)
            _strings(item, into)
    elif isinstance(value, list):
        for item in value:
            _strings(item, into)


def _replaced(value: Any, changed: dict[str, str]) -> Any:
    if isinstance(value, str):
        return changed.get(value, value)
    if isinstance(value, dict):
        return {changed.get(k, k): _replaced(v, changed) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, changed) for v in value]
    return value
