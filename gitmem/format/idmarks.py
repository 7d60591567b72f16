"""ids.json: the highest Id number each scope and layer has ever handed out, committed with the store.

An Id is never given to a second entry, not even after the first one is deleted: an old link, an
old commit or another machine's copy would otherwise name a different fact. The numbers in the
topic files say what is taken today; this file remembers the numbers whose entries are gone.
gitmem writes a number here when the highest entry of a layer leaves the files, every machine
reads it before it numbers a new entry, and merges keep the larger number of each side.

The file maps an Id prefix (`<scope>-<abbr>`, e.g. `global-sem`) to a number.
"""

from __future__ import annotations

import json
import re

from gitmem.format.layers import ABBR_TO_LAYER, layer_spec

MARKS_PATH = "ids.json"
_KEY_RE = re.compile(r"^(?P<scope>[a-z0-9][a-z0-9-]*)-(?P<abbr>[a-z]{3})$")

Marks = dict[tuple[str, str], int]  # (scope, layer) -> highest number handed out


def parse_marks(text: str | None) -> Marks:
    """The marks a text holds; what cannot be read (a hand edit gone wrong) is left out."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    marks: Marks = {}
    for key, value in (data.items() if isinstance(data, dict) else []):
        match = _KEY_RE.match(str(key))
        if match and match["abbr"] in ABBR_TO_LAYER and isinstance(value, int) and value > 0:
            marks[(match["scope"], ABBR_TO_LAYER[match["abbr"]])] = value
    return marks


def render_marks(marks: Marks) -> str:
    data = {f"{scope}-{layer_spec(layer).abbr}": number for (scope, layer), number in marks.items()}
    return json.dumps(dict(sorted(data.items())), indent=2) + "\n"


def merge_marks(*texts: str | None) -> str:
    """The larger number of each key over every text (a merge of ids.json never conflicts)."""
    merged: Marks = {}
    for text in texts:
        for key, number in parse_marks(text).items():
            merged[key] = max(merged.get(key, 0), number)
    return render_marks(merged)
