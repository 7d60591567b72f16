"""What every merge shares: the result and conflict records, markers, and small text helpers."""

from __future__ import annotations

from dataclasses import dataclass, field

OURS_MARKER = "<<<<<<< ours"
SPLIT_MARKER = "======="
THEIRS_MARKER = ">>>>>>> theirs"


@dataclass(frozen=True)
class Labels:
    """What the marker lines say about each side: `<machine> <short commit>` in a sync or a pull,
    so that a person reading the file on any machine knows where each version came from."""

    ours: str = "ours"
    theirs: str = "theirs"

    @property
    def opening(self) -> str:
        return f"<<<<<<< {self.ours}".rstrip()

    @property
    def closing(self) -> str:
        return f">>>>>>> {self.theirs}".rstrip()


PLAIN = Labels()


@dataclass
class MergeConflict:
    """A true collision: both versions were written into the text between conflict markers."""

    path: str
    entry_id: str | None
    title: str
    kind: str  # "both-edited" | "lines"; "edit-vs-delete" is reserved: it is only noted
    ours: str
    theirs: str


@dataclass
class MergeResult:
    """Merged text plus what the merge had to decide."""

    text: str
    conflicts: list[MergeConflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    renumbered: dict[str, str] = field(default_factory=dict)
    regenerate: bool = False


def lf(text: str) -> str:
    """`text` with CRLF line endings written as LF (for comparing)."""
    return text.replace("\r\n", "\n")


def to_newline(text: str, newline: str) -> str:
    """`text` with every CRLF/LF ending written as `newline`."""
    text = lf(text)
    return text.replace("\n", newline) if newline != "\n" else text


def with_eol(text: str, newline: str) -> str:
    """`text` ending with a line ending (empty text stays empty)."""
    return text if not text or text.endswith(("\n", "\r")) else text + newline


def fast_path(base: str | None, ours: str, theirs: str) -> str | None:
    """The answer when one side did nothing (or both did the same), else None."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def interleave(primary: list[str], secondary: list[str]) -> list[str]:
    """`primary` order; items only in `secondary` follow their nearest placed predecessor there."""
    result = list(primary)
    placed = set(primary)
    primary_only = placed - set(secondary)
    pending: list[str] = []  # secondary-only items seen before any placed one
    cursor: int | None = None
    for item in secondary:
        if item in placed:
            index = result.index(item)
            if cursor is None and pending:
                result[index:index] = pending
                index += len(pending)
                pending = []
            cursor = index + 1
            # Both sides appended after the same entry: ours' additions first, then theirs'.
            while cursor < len(result) and result[cursor] in primary_only:
                cursor += 1
        elif cursor is None:
            pending.append(item)
        else:
            result.insert(cursor, item)
            cursor += 1
    return result + pending


def conflict_block(ours: str, theirs: str, newline: str, labels: Labels = PLAIN) -> str:
    return (
        f"{labels.opening}{newline}{with_eol(ours, newline)}{SPLIT_MARKER}{newline}"
        f"{with_eol(theirs, newline)}{labels.closing}{newline}"
    )
