"""Diffs as the page shows them: lines between two versions of an entry, words between the two
sides of a conflict (difflib). Secrets are masked in the whole texts before the diff, so no
secret can be split across two pieces and escape the mask."""

from __future__ import annotations

import difflib
import re
from html import escape

from gitmem.secrets.mask import hide_secrets

_WORDS = re.compile(r"\s+|[^\s]+")


def line_diff(old: str | None, new: str | None) -> str:
    """A unified diff of two versions ('' for none), each line marked added, removed or kept."""
    before, after = hide_secrets(old or "").splitlines(), hide_secrets(new or "").splitlines()
    rows = []
    for line in difflib.unified_diff(before, after, "before", "after", lineterm="", n=2):
        if line.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        rows.append(f'<span class="{kind}">{escape(line)}</span>')
    if not rows:
        return '<p class="nodiff">no change to the text</p>'
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


def word_diff(ours: str, theirs: str) -> str:
    """Both sides word by word: what only one side has is marked removed (ours) or added (theirs)."""
    left, right = _WORDS.findall(hide_secrets(ours)), _WORDS.findall(hide_secrets(theirs))
    out = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(escape("".join(left[i1:i2])))
            continue
        if i2 > i1:
            out.append(f'<del>{escape("".join(left[i1:i2]))}</del>')
        if j2 > j1:
            out.append(f'<ins>{escape("".join(right[j1:j2]))}</ins>')
    return '<pre class="worddiff">' + "".join(out) + "</pre>"
