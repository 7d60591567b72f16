"""Finding the item a replace/remove means, and turning a hand-edited projection into changes.

Matching (replace, remove): within one target, an item whose id is the given text; else the
item whose whole normalized content equals it; else the one item containing it. Zero matches,
two equal items, or a substring found in several items are refused with the candidates listed.

Hand edits: the lines of an edited USER.md / MEMORY.md are compared with the projection gitmem
last wrote (its base). Lines that appeared are adds, lines that went away are removes, and a
changed line is a replace of the record it was when the two lines read alike (at least half their
characters shared), else a removal and an addition; a typed duplicate of an item is reported, not
added. The changes are then applied to the current
records, so a record another machine added meanwhile is not taken for a removal; applying them is
idempotent (an add of existing text, a remove of an absent one do nothing).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, replace

from gitmem.errors import ConflictError, InvalidInputError
from gitmem.runtime.model import Item, RuntimeFile, content_stamp, derived_id, normalize_content

CANDIDATES_SHOWN = 8
SIMILAR = 0.5  # a changed line is a replace of the line it resembles this much (else add + remove)
PREVIEW_CHARS = 60


def _preview(item: Item) -> str:
    """An item as a refusal names it: masked first, then cut (a cut could split a secret)."""
    from gitmem.secrets.mask import hide_secrets

    content = hide_secrets(item.content)
    text = content if len(content) <= PREVIEW_CHARS else content[:PREVIEW_CHARS] + "…"
    return f"[{item.id}] \"{text}\""


def _refuse(reason: str, candidates: list[Item]) -> InvalidInputError:
    shown = "; ".join(_preview(item) for item in candidates[:CANDIDATES_SHOWN])
    more = len(candidates) - CANDIDATES_SHOWN
    listing = f"candidates: {shown}" + (f"; and {more} more" if more > 0 else "") if candidates \
        else "there are no items"
    return InvalidInputError(f"{reason}; {listing}; nothing changed (pass an item's id to choose)")


def find_one(items: list[Item], needle: str, target: str, seen: str | None = None) -> Item:
    """The one item `needle` designates among `items` (all of one target); when the caller
    passes the `content_stamp` of the text it showed (a page shown a while ago), the item must
    still hold that text."""
    item = _designated(items, needle, target)
    if seen is not None and content_stamp(item.content) != seen:
        raise ConflictError(f"{item.id} was changed since it was shown; nothing changed: look "
                            "again and retry")
    return item


def _designated(items: list[Item], needle: str, target: str) -> Item:
    wanted = normalize_content(needle)
    if not wanted:
        raise InvalidInputError("the text to match must not be empty")
    for item in items:
        if item.id == wanted:
            return item
    exact = [item for item in items if normalize_content(item.content) == wanted]
    if len(exact) == 1:
        return exact[0]
    if exact:
        raise _refuse(f"{len(exact)} {target} items are exactly \"{wanted}\"", exact)
    found = [item for item in items if wanted in normalize_content(item.content)]
    if len(found) == 1:
        return found[0]
    if found:
        raise _refuse(f"\"{wanted}\" is in {len(found)} {target} items", found)
    raise _refuse(f"no {target} item matches \"{wanted}\"", items)


# -- hand edits -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """One hand edit of a projection: add `new`, remove `old`, or replace `old` by `new`."""

    kind: str  # add | remove | replace
    old: str = ""
    new: str = ""
    line: int = 0  # where `new` stands in the edited file (0 for a removal)

    def describe(self) -> str:
        if self.kind == "add":
            return f"added \"{self.new}\""
        if self.kind == "remove":
            return f"removed \"{self.old}\""
        return f"changed \"{self.old}\" to \"{self.new}\""


def diff_lines(base: list[str], edited: list[tuple[int, str]]) -> list[Change]:
    """Changes turning the `base` items into the `edited` (line, content) items; a line that only
    moved is not a change."""
    new = [content for _line, content in edited]
    before, after = Counter(base), Counter(new)
    changes: list[Change] = []
    matcher = difflib.SequenceMatcher(None, base, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # A line whose text stands elsewhere in the other version as often only moved (two
        # similar lines swapped): neither removed, added, nor an edit of its neighbour. A text
        # typed once more than it was is an addition (reported as a duplicate when applied).
        olds = [old for old in base[i1:i2] if before[old] > after[old]]
        news = [(line, content) for line, content in edited[j1:j2] if after[content] > before[content]]
        pairs = _pair_similar(olds, [content for _line, content in news]) if olds and news else {}
        for index, (line, content) in enumerate(news):
            if index in pairs:
                changes.append(Change("replace", olds[pairs[index]], content, line))
            else:
                changes.append(Change("add", "", content, line))
        changes += [Change("remove", old) for index, old in enumerate(olds) if index not in pairs.values()]
    removed = {c.old for c in changes if c.kind == "remove"}
    added = {c.new for c in changes if c.kind == "add"}
    moved = removed & added
    return [c for c in changes if not (c.kind in ("add", "remove") and (c.old or c.new) in moved)]


def _pair_similar(olds: list[str], news: list[str]) -> dict[int, int]:
    """new index -> old index for lines that read as edits of each other (most similar first;
    a pair must share at least half its characters)."""
    scored = sorted(((difflib.SequenceMatcher(None, old, new, autojunk=False).ratio(), n, o)
                     for o, old in enumerate(olds) for n, new in enumerate(news)), reverse=True)
    pairs: dict[int, int] = {}
    for ratio, n, o in scored:
        if ratio < SIMILAR:
            break  # an unrelated line is a removal and an addition, not a change
        if n not in pairs and o not in pairs.values():
            pairs[n] = o
    return pairs


def apply_changes(records: RuntimeFile, target: str, changes: list[Change],
                  when: str) -> tuple[RuntimeFile, list[str]]:
    """The records with `changes` applied to `target` items (idempotently), and what happened."""
    items = list(records.items)
    done: list[str] = []

    def index_of(content: str) -> int | None:
        wanted = normalize_content(content)
        for index, item in enumerate(items):
            if item.target == target and normalize_content(item.content) == wanted:
                return index
        return None

    def add(content: str, line: int = 0, *, typed: bool = False) -> None:
        found = index_of(content)
        if found is not None:
            if not typed:
                return  # a replace whose text is there already: nothing to report
            where = f"line {line} " if line else ""
            done.append(f"not added: {where}\"{content}\" is already {items[found].id}; the duplicate "
                        "line was dropped")
            return
        taken = {item.id for item in items}  # from the text: a refused write reads it the same
        item = Item(derived_id(f"{target}{chr(0)}{content}", taken), content, target, "normal", when, when)
        items.append(item)
        done.append(f"added {item.id}: \"{content}\"")

    for change in changes:
        if change.kind == "add":
            add(change.new, change.line, typed=True)
            continue
        found = index_of(change.old)
        if change.kind == "remove":
            if found is not None:
                done.append(f"removed {items[found].id}: \"{items[found].content}\"")
                del items[found]
            continue
        if found is None or index_of(change.new) is not None:
            add(change.new)  # its old text is gone already: the new text is still wanted
            if found is not None:
                done.append(f"removed {items[found].id}: \"{items[found].content}\" (now a duplicate)")
                del items[found]
            continue
        old = items[found]
        extra = {k: v for k, v in old.extra.items() if k != "conflict"}  # a hand edit settles it
        items[found] = replace(old, content=change.new, updated_at=when, extra=extra)
        done.append(f"changed {old.id}: \"{old.content}\" -> \"{change.new}\"")
    return RuntimeFile(items, records.extra), done
