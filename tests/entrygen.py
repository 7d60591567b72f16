"""Random Markdown bodies and random hand edits of topic files, for the entry-integrity properties.

Shared by the in-process format properties (tests/format) and the store round trips (tests/store).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

from fixtures.commonmark import examples
from gitmem.format.blocks import is_known_field
from gitmem.format.entry import Entry
from gitmem.format.markdown import append_entry_text, parse_topic_file, split_lines
from gitmem.verbs.base import check_text, heading_for, safe_body

# Lines that stress the entry rule: headings at every indentation, fences of every shape, field
# lines known and unknown, conflict markers, containers, escapes, odd whitespace and line ends.
FRAGMENTS = [
    "## heading", "##", "## trailing hashes ##", " ## one space", "   ## three spaces",
    "    ## four spaces", "\t## tab", "# h1", "### h3", "##no-space", "\\## escaped",
    "```", "```python", "````", "~~~", "~~~ info", " ```", "   ```", "    ```", "``` `x`",
    "`````", "```sh", "~~~~", "- ```", "> ```",
    "**Id:** global-sem-0001", "**Importance:** high", "**Created:** 2020-01-01",
    "**Verified:**", "**Source:** wiki", "**Related:** global-sem-0002", "**X-Other:** v",
    "**Context:**", "**Rationale:** because",
    "<<<<<<< ours", "=======", ">>>>>>> theirs", "---", "***", "...",
    "- item", "  - nested", "1. step", "> quote", "<!-- comment", "-->", "<div>", "</div>",
    "| a | b |", "text with \\ backslash", "trailing spaces   ", "", " ", "\t", "lone\rcr",
    "\r", "中文 テキスト", "sep\u2028line", "emoji 🎉", "`code`", "*em* **strong**",
]
_word = st.text(alphabet=st.sampled_from(list("ab #*`~-_>:\\|\t中")), max_size=12)
line_strategy = st.one_of(
    st.sampled_from(FRAGMENTS),
    _word,
    st.builds(lambda a, b: a + b, st.sampled_from(FRAGMENTS), _word),
)


@st.composite
def markdown_bodies(draw: st.DrawFn) -> str:
    """Text an agent or a person might give to `remember`, CommonMark spec examples included."""
    kind = draw(st.integers(0, 3))
    if kind == 0:
        text = draw(st.sampled_from(examples()))
    else:
        lines = draw(st.lists(line_strategy, min_size=1, max_size=14))
        if kind == 3:
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(examples())))
        text = "\n".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.integers(0, 4)) == 0:
        text = "    " + text  # leading indentation must survive
    return text


def remembered(text: str, entry_id: str, day: str = "2026-12-02") -> Entry | None:
    """The entry `remember` writes for `text` (None when remember refuses the text)."""
    from gitmem.errors import InvalidInputError

    try:
        body = safe_body(check_text(text))
        heading = heading_for(text, None)
    except InvalidInputError:
        return None
    return Entry(heading, body, {"Id": entry_id, "Importance": "normal", "Volatility": "normal",
                                 "Created": day, "Verified": day})


# -- hand edits --------------------------------------------------------------------------------

APPENDED = ["See also ops/db.md", "more text", "- a list item", "**Related:** global-sem-0001",
            "  indented", "> quoted", "trailing\r", ""]


@dataclass
class Files:
    """Topic files being edited by hand: path -> text, and which Ids were written where."""

    texts: dict[str, str]
    bodies: dict[str, str] = field(default_factory=dict)  # id -> body as written

    def locate(self, entry_id: str) -> tuple[str, Entry] | None:
        for path, text in self.texts.items():
            for entry in parse_topic_file(text, path).entries:
                if entry.id == entry_id:
                    return path, entry
        return None


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _replace_raw(files: Files, entry_id: str, change: object) -> None:
    found = files.locate(entry_id)
    if found is None:
        return
    path, entry = found
    assert entry.raw is not None and callable(change)
    text = files.texts[path]
    files.texts[path] = text.replace(entry.raw, change(entry.raw, _newline(text)), 1)


def _lines(raw: str) -> list[str]:
    return split_lines(raw)


def _field_lines(lines: list[str]) -> list[int]:
    """Lines of known fields (the field block of an entry `remember` wrote)."""
    return [i for i, line in enumerate(lines) if is_known_field(line.rstrip("\r\n"))]


def append_after_fields(files: Files, entry_id: str, line: str) -> None:
    def change(raw: str, nl: str) -> str:
        body = raw.rstrip("\r\n")
        return body + nl + line + nl + raw[len(body):]
    _replace_raw(files, entry_id, change)


def insert_before_heading(files: Files, entry_id: str, line: str) -> None:
    _replace_raw(files, entry_id, lambda raw, nl: line + nl + raw)


def duplicate_field(files: Files, entry_id: str, name: str) -> None:
    def change(raw: str, nl: str) -> str:
        lines = _lines(raw)
        for index, text in enumerate(lines):
            if text.startswith(f"**{name}:**"):
                lines.insert(index + 1, text if text.endswith("\n") else text + nl)
                break
        return "".join(lines)
    _replace_raw(files, entry_id, change)


def unclosed_fence(files: Files, entry_id: str, where: str, fence: str) -> None:
    """A fence opened and never closed: at the end of the text, after the fields, or at the start
    of a text that holds no fence (a place where it cannot turn existing code into text)."""
    def change(raw: str, nl: str) -> str:
        lines = _lines(raw)
        fields = _field_lines(lines)
        if where == "after-fields" or not fields:
            return raw.rstrip("\r\n") + nl + fence + nl + raw[len(raw.rstrip("\r\n")):]
        if where == "start" and not any(re.match(r" {0,3}(```|~~~)", t) for t in lines):
            lines.insert(1, fence + nl)
            return "".join(lines)
        end = fields[0]
        while end > 1 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, fence + nl)
        return "".join(lines)
    _replace_raw(files, entry_id, change)


def indented_heading(files: Files, entry_id: str, spaces: int, position: int) -> None:
    def change(raw: str, nl: str) -> str:
        lines = _lines(raw)
        lines.insert(1 + position % max(len(lines) - 1, 1), " " * spaces + "## not an entry" + nl)
        return "".join(lines)
    _replace_raw(files, entry_id, change)


def move_entry(files: Files, entry_id: str, target: str) -> None:
    found = files.locate(entry_id)
    if found is None or found[0] == target:
        return
    path, entry = found
    assert entry.raw is not None
    files.texts[path] = files.texts[path].replace(entry.raw, "", 1)
    text = files.texts[target]
    nl = _newline(text)
    raw = entry.raw if entry.raw.endswith("\n") else entry.raw + nl
    if text and not text.endswith("\n"):
        text += nl
    files.texts[target] = text + (nl if text and not text.endswith(nl * 2) else "") + raw


def add_bom(files: Files, path: str) -> None:
    if not files.texts[path].startswith("\ufeff"):
        files.texts[path] = "\ufeff" + files.texts[path]


def to_crlf(files: Files, path: str) -> None:
    text = files.texts[path]
    if "\r\n" not in text:
        files.texts[path] = text.replace("\n", "\r\n")


OPERATIONS = ("append", "before", "move", "dup-id", "dup-field", "bom", "crlf", "fence", "indent")


@st.composite
def hand_edits(draw: st.DrawFn, ids: list[str], paths: list[str]) -> list[tuple[object, ...]]:
    """A random sequence of hand edits over the entries `ids` in the files `paths`."""
    ops: list[tuple[object, ...]] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(OPERATIONS))
        entry_id = draw(st.sampled_from(ids))
        path = draw(st.sampled_from(paths))
        if kind in ("append", "before"):
            ops.append((kind, entry_id, draw(st.sampled_from(APPENDED))))
        elif kind == "fence":
            ops.append((kind, entry_id, draw(st.sampled_from(["end", "after-fields", "start"])),
                        draw(st.sampled_from(["```", "~~~", "````sh"]))))
        elif kind == "indent":
            ops.append((kind, entry_id, draw(st.integers(1, 3)), draw(st.integers(0, 20))))
        else:
            ops.append((kind, entry_id, path))
    return ops


def apply(files: Files, op: tuple[object, ...]) -> None:
    kind, entry_id = str(op[0]), str(op[1])
    if kind == "append":
        append_after_fields(files, entry_id, str(op[2]))
    elif kind == "before":
        insert_before_heading(files, entry_id, str(op[2]))
    elif kind == "move":
        move_entry(files, entry_id, str(op[2]))
    elif kind == "dup-id":
        duplicate_field(files, entry_id, "Id")
    elif kind == "dup-field":
        duplicate_field(files, entry_id, "Importance")
    elif kind == "bom":
        add_bom(files, str(op[2]))
    elif kind == "crlf":
        to_crlf(files, str(op[2]))
    elif kind == "fence":
        unclosed_fence(files, entry_id, str(op[2]), str(op[3]))
    elif kind == "indent":
        indented_heading(files, entry_id, int(str(op[2])), int(str(op[3])))


def build_files(bodies: list[str], paths: list[str]) -> Files:
    """Topic files written the way `remember` writes them, entries spread over `paths`."""
    files = Files({path: f"---\ntopic: {path}\n---\n# {path}\n\n" for path in paths})
    number = 0
    for index, text in enumerate(bodies):
        number += 1
        entry = remembered(text, f"global-sem-{number:04d}")
        if entry is None:
            continue
        path = paths[index % len(paths)]
        files.texts[path] = append_entry_text(files.texts[path], entry)
        files.bodies[str(entry.id)] = entry.body
    return files


def body_kept(original: str, now: str) -> bool:
    """Every non-blank line of the body as written is still there, in order."""
    wanted = [line for line in original.split("\n") if line.strip(" \t")]
    have = iter(now.split("\n"))
    return all(any(line == got for got in have) for line in wanted)
