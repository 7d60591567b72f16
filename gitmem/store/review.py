"""Reading and writing the review queue of a store (the file: format/reviewqueue.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitmem.format.reviewqueue import REVIEW_PATH, Queue, dump_queue, parse_queue
from gitmem.git.machine import machine_name

if TYPE_CHECKING:
    from gitmem.store.store import Store, WriteTxn


def read_queue(store: Store) -> Queue:
    """The queue as committed or hand-edited; the last good version when it does not parse."""
    return store.read_json(REVIEW_PATH, parse_queue, Queue)


def write_queue(store: Store, txn: WriteTxn, queue: Queue) -> bool:
    """Write the queue inside a write transaction (refused while the file does not parse)."""
    store.refuse_stand_in(REVIEW_PATH)
    return store.write_file(txn, REVIEW_PATH, dump_queue(queue))


def queue_length(store: Store) -> int:
    """How many items wait for review (0 when there is no queue)."""
    return len(read_queue(store).items)


def this_machine() -> str:
    """The machine name a queued or rejected item records (the one commits carry)."""
    return machine_name()
