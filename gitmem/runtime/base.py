"""What a hand edit of USER.md / MEMORY.md started from, told by memories.json alone (pure).

A projection that differs from the rendering of its records either fell behind them (gitmem
rendered it from older records: a pull, a hand edit of memories.json) or was edited by a person.
The question is answered from what memories.json said, never from anything kept on one machine,
so a fresh clone answers it exactly as the machine that wrote the file:

- the base of an edit is the projection text as gitmem last rendered it: the newest committed
  projection that is the rendering of the memories.json committed with it;
- when the projection at HEAD is such a rendering (of its own records, or of the records of a
  commit further back: a projection left behind), that text is the base;
- when it is not (a hand edit committed as it was, by plain git or by a write that committed
  pending files first), the base is the newest rendering before it, looked for among the commits
  that changed either file (the commit that made a hand-edited projection a rendering again may
  have changed memories.json alone);
- when history holds no rendering at all, there is no base: every line the records do not
  explain is an addition, and no record is taken away (nothing is lost on a guess).

Lines of the file that are not in the base are additions (or replaces of a base line they
resemble), base lines missing from the file are removals (edits.py turns them into changes).
"""

from __future__ import annotations

from collections.abc import Iterable

from gitmem.errors import InvalidInputError
from gitmem.runtime.edits import Change, diff_lines
from gitmem.runtime.model import (
    load_records,
    normalize_content,
    parse_projection,
    render_projection,
)

HISTORY_DEPTH = 32  # commits of a projection's history looked at for its last rendering

# (memories.json text, projection text) at one commit; None where the file was absent.
Pair = tuple[str | None, str | None]


def rendering_of(records_text: str | None, target: str) -> str | None:
    """The projection `records_text` renders for `target`; None when it cannot be read."""
    try:
        records = load_records(records_text or "")
    except InvalidInputError:
        return None
    return render_projection([item.content for item in records.of(target)])


def is_rendering(pair: Pair, target: str) -> bool:
    """True when the projection of `pair` is exactly the rendering of its records (an absent
    projection renders records without items of `target`)."""
    records_text, projection = pair
    rendered = rendering_of(records_text, target)
    return rendered is not None and (projection or "") == rendered


def edit_base(head: Pair, history: Iterable[Pair], target: str) -> str | None:
    """The rendering a projection's edit started from (see the module text). `head` is the
    commit the working copy (or the index) starts from; `history` the commits that changed the
    projection, newest first, read lazily and only while needed."""
    if is_rendering(head, target):
        return head[1] or ""
    # The history holds every commit that changed the records or the projection, so its newest
    # rendering is the last text gitmem wrote: the projection at HEAD equals it when it was left
    # behind, and differs when a hand edit was committed as it was after it. (An older rendering
    # that happens to equal HEAD's text says nothing: a person emptying the file is not a
    # projection from before the first item.)
    for pair in history:
        if is_rendering(pair, target):
            return pair[1] or ""
    return None


def projection_changes(base: str | None, rendered: str, edited: str,
                       item_limit: int) -> tuple[list[Change], list[tuple[int, str]]]:
    """(changes the edited projection makes, (line, reason) of lines that break the rules).
    Without a base, only lines the rendering does not hold count: they are additions."""
    new, problems = parse_projection(edited, item_limit)
    # A line gitmem wrote itself (an item longer than a limit lowered since) is no hand edit.
    written = {normalize_content(line) for line in f"{base or ''}\n{rendered}".splitlines()}
    typed = edited.lstrip("\ufeff").splitlines()
    problems = [(line, reason) for line, reason in problems
                if normalize_content(typed[line - 1]) not in written]
    lines = [(p.line, p.content) for p in new]
    if base is not None:
        old, _ = parse_projection(base, item_limit)
        return diff_lines([line.content for line in old], lines), problems
    known, _ = parse_projection(rendered, item_limit)
    changes = diff_lines([line.content for line in known], lines)
    return [Change("add", "", c.new, c.line) for c in changes if c.kind != "remove"], problems
