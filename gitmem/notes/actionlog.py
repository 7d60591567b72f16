"""What an import did, one Action per note, item or link, kept with bounded memory.

An import of 10,000 notes reports ~90,000 actions; held as objects they were a large share of
the import's peak memory. The log keeps its counts as it goes, holds up to HELD actions in
memory and moves older ones, pickled one after another, into an unnamed temporary file, so a
report of any size costs the same memory; reading it back replays them in order.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

HELD = 1000


@dataclass(frozen=True, slots=True)
class Action:
    """What the import did (or would do) with one note, item or link."""

    action: str  # added | updated | unchanged | duplicate | kept-edit | forgotten | linked | unlinked
    id: str | None
    path: str  # where in the store
    source: str  # file:line in the source
    title: str

    def __reduce__(self) -> tuple[type[Action], tuple[str, str | None, str, str, str]]:
        # Pickled as its values: a slotted dataclass's own state is gathered in Python, field by
        # field, and an import pickles every action it reports (twice: its plan and its log).
        return Action, (self.action, self.id, self.path, self.source, self.title)

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "id": self.id, "path": self.path, "source": self.source,
                "title": self.title}


class ActionLog:
    """An append-only, in-order list of actions that spills to disk past HELD."""

    def __init__(self) -> None:
        self._held: list[Action] = []
        self._file: IO[bytes] | None = None
        self._spilled = 0
        self._counts: dict[str, int] = {}

    def append(self, action: Action) -> None:
        self._counts[action.action] = self._counts.get(action.action, 0) + 1
        self._held.append(action)
        if len(self._held) >= HELD:
            self._spill()

    def _spill(self) -> None:
        if self._file is None:
            # Lives as long as the log: closed (and so removed) when it is collected.
            self._file = tempfile.TemporaryFile(prefix="gitmem-actions-")  # noqa: SIM115
        self._file.seek(0, 2)
        # One pickle per batch of held actions: a long-lived pickler's memo would grow.
        pickle.dump(self._held, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._spilled += len(self._held)
        self._held = []

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def __len__(self) -> int:
        return self._spilled + len(self._held)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[Action]:
        if self._file is not None:
            self._file.flush()
            self._file.seek(0)
            for _ in range(0, self._spilled, HELD):
                yield from pickle.load(self._file)
        yield from list(self._held)
