"""Byte budgets of the hot files and which items leave when an add overflows (pure).

A budget counts the UTF-8 bytes of a projection's body: the items and the separator lines
between them, nothing that only the context card adds. When an `add` would pass the budget, the
items that leave are chosen lowest importance first, then least recently updated, then oldest;
timestamps that are equal (they count whole seconds) leave in the order the items stand in
memories.json, which is the order they were added. Critical items and the item being added never
leave.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gitmem.errors import InvalidInputError
from gitmem.runtime.model import Item, body_bytes, parse_timestamp

USER_LIMIT = 4 * 1024
MEMORY_LIMIT = 10 * 1024
ITEM_LIMIT = 8 * 1024
_LEAVING_ORDER = {"low": 0, "normal": 1}
_OLDEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Limits:
    """The budgets in bytes (memory.json `settings.runtime` may change each)."""

    user: int = USER_LIMIT
    memory: int = MEMORY_LIMIT
    item: int = ITEM_LIMIT

    def of(self, target: str) -> int:
        return self.user if target == "user" else self.memory

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        """From `{"userLimitBytes": .., "memoryLimitBytes": .., "itemLimitBytes": ..}`."""
        values = settings if isinstance(settings, dict) else {}

        def pick(name: str, default: int) -> int:
            value = values.get(name, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 64:
                raise InvalidInputError(f"memory.json settings.runtime.{name} must be a whole number of bytes >= 64")
            return value

        return cls(pick("userLimitBytes", USER_LIMIT), pick("memoryLimitBytes", MEMORY_LIMIT),
                   pick("itemLimitBytes", ITEM_LIMIT))


def size_of(items: list[Item]) -> int:
    return body_bytes([item.content for item in items])


def _moment(value: str) -> datetime:
    """A stored timestamp for ordering; a missing or unreadable one counts as the oldest."""
    return parse_timestamp(value) or _OLDEST


def leaving_order(items: list[Item]) -> list[Item]:
    """Items that may leave, in the order they leave (`items` in their memories.json order)."""
    movable = [(position, item) for position, item in enumerate(items) if item.importance != "critical"]
    ordered = sorted(movable, key=lambda pair: (_LEAVING_ORDER.get(pair[1].importance, 1),
                                                _moment(pair[1].updated_at),
                                                _moment(pair[1].created_at), pair[0]))
    return [item for _position, item in ordered]


def plan_overflow(items: list[Item], new: Item, limit: int, name: str) -> list[Item]:
    """Items that must leave so that `items` + `new` fit `limit`; refused when they cannot."""
    together = [*items, new]
    if size_of(together) <= limit:
        return []
    keep = [item for item in together if item.importance == "critical" or item is new]
    if size_of(keep) > limit:
        critical = [item for item in items if item.importance == "critical"]
        raise InvalidInputError(
            f"refused: {name} holds at most {limit} bytes; its critical items alone use "
            f"{size_of(critical)} bytes ({len(critical)} item(s)) and the new item needs "
            f"{len(new.content.encode('utf-8'))} more, so nothing can make room; shorten or remove "
            "a critical item (or raise the budget in memory.json) first; nothing changed"
        )
    leaving: list[Item] = []
    remaining = list(together)
    for item in leaving_order(items):
        if size_of(remaining) <= limit:
            break
        remaining = [other for other in remaining if other is not item]
        leaving.append(item)
    return leaving
