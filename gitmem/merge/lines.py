"""Line-based three-way merge (diff3 style) for files without a structure of their own
(INDEX.md, .gitignore ...) and as the fallback of the structured merges (pure).

Edits that overlap or touch get git-style markers; lines are compared without their endings, so a
CRLF conversion on one side is not an edit, and text taken from theirs is written with ours' line
ending.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from gitmem.format.markdown import detect_newline, split_lines
from gitmem.merge.common import (
    PLAIN,
    Labels,
    MergeConflict,
    MergeResult,
    conflict_block,
    fast_path,
    lf,
    to_newline,
)

# ---- line merge ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hunk:
    """Base lines [lo, hi) replaced by side lines [start, end)."""

    lo: int
    hi: int
    start: int
    end: int


def _hunks(base: list[str], side: list[str]) -> list[_Hunk]:
    """Changed regions, comparing lines without their endings."""
    matcher = difflib.SequenceMatcher(
        None, [line.rstrip("\r\n") for line in base], [line.rstrip("\r\n") for line in side], False
    )
    return [
        _Hunk(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


@dataclass
class _Cluster:
    """Hunks of both sides over one stretch of base lines [lo, hi)."""

    lo: int
    hi: int
    ours: list[_Hunk] = field(default_factory=list)
    theirs: list[_Hunk] = field(default_factory=list)


def _clusters(ours: list[_Hunk], theirs: list[_Hunk]) -> list[_Cluster]:
    """Groups of hunks whose base ranges overlap or touch (touching edits collide, as in git)."""
    tagged = sorted(
        [(h.lo, h.hi, 0, h) for h in ours] + [(h.lo, h.hi, 1, h) for h in theirs],
        key=lambda item: item[:3],
    )
    groups: list[_Cluster] = []
    for lo, hi, side, hunk in tagged:
        if groups and lo <= groups[-1].hi:
            groups[-1].hi = max(groups[-1].hi, hi)
        else:
            groups.append(_Cluster(lo, hi))
        (groups[-1].theirs if side else groups[-1].ours).append(hunk)
    return groups


def _side_range(hunks: list[_Hunk], lo: int, hi: int, pos: int, base_pos: int) -> tuple[int, int]:
    """The side's line range matching base [lo, hi); outside its hunks the side equals base."""
    if not hunks:
        start = pos + (lo - base_pos)
        return start, start + (hi - lo)
    return hunks[0].start - (hunks[0].lo - lo), hunks[-1].end + (hi - hunks[-1].hi)


def merge_lines(
    path: str, base: str | None, ours: str, theirs: str, *, labels: Labels = PLAIN,
    union: bool = False,
) -> MergeResult:
    """diff3-style merge: non-overlapping edits combine, overlapping ones get git-style markers
    (with `union`: ours' lines then theirs', as git's union merge; still listed in conflicts)."""
    fast = fast_path(base, ours, theirs)
    if fast is not None:
        return MergeResult(fast)
    newline = detect_newline(ours)
    convert = detect_newline(theirs) != newline
    base_l, ours_l, theirs_l = split_lines(base or ""), split_lines(ours), split_lines(theirs)
    out: list[str] = []
    result = MergeResult("")
    base_pos = ours_pos = theirs_pos = 0
    for group in _clusters(_hunks(base_l, ours_l), _hunks(base_l, theirs_l)):
        lo, hi, ours_h, theirs_h = group.lo, group.hi, group.ours, group.theirs
        out.extend(ours_l[ours_pos : ours_pos + (lo - base_pos)])
        o_start, o_end = _side_range(ours_h, lo, hi, ours_pos, base_pos)
        t_start, t_end = _side_range(theirs_h, lo, hi, theirs_pos, base_pos)
        ours_text = "".join(ours_l[o_start:o_end])
        theirs_text = "".join(theirs_l[t_start:t_end])
        theirs_text = to_newline(theirs_text, newline) if convert else theirs_text
        if not theirs_h or lf(ours_text) == lf(theirs_text):
            out.append(ours_text)
        elif not ours_h:
            out.append(theirs_text)
        else:
            line = sum(chunk.count("\n") for chunk in out) + 1
            out.append(ours_text + theirs_text if union else
                       conflict_block(ours_text, theirs_text, newline, labels))
            result.conflicts.append(
                MergeConflict(path, None, f"line {line}", "lines", ours_text, theirs_text)
            )
        base_pos, ours_pos, theirs_pos = hi, o_end, t_end
    out.extend(ours_l[ours_pos:])
    result.text = "".join(out)
    return result
