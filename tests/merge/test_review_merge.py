"""The review queue's merge (pure): removals win, additions of both kept once per fact,
rejections of both kept once per fingerprint, never a conflict."""

from __future__ import annotations

from gitmem.format.reviewqueue import Queue, dump_queue, fingerprint, item_id, parse_queue
from gitmem.merge.files import merge_file


def item(text: str, digest: str = "d1") -> dict:
    return {"id": item_id(fingerprint(text), digest), "layer": "semantic", "scope": "global",
            "topic": "t", "text": text, "digest": digest, "fingerprint": fingerprint(text)}


def rejection(text: str, at: str, reason: str) -> dict:
    return {"id": fingerprint(text), "at": at, "machine": "m", "reason": reason}


def merged(base: Queue, ours: Queue, theirs: Queue) -> Queue:
    result = merge_file("review.json", dump_queue(base), dump_queue(ours), dump_queue(theirs))
    assert result is not None and not result.conflicts
    return parse_queue(result.text)


def test_an_item_removed_on_either_side_is_gone_and_new_ones_of_both_are_kept() -> None:
    one, two, three, four = item("One."), item("Two."), item("Three."), item("Four.")
    base = Queue([one, two])
    ours = Queue([two, three])  # one accepted here, three queued
    theirs = Queue([one, four])  # two rejected there, four queued
    theirs.reject(two, "2026-12-02T10:00:00", "b", "no")
    result = merged(base, ours, theirs)
    assert [i["text"] for i in result.items] == ["Three.", "Four."]
    assert [r["id"] for r in result.rejected] == [fingerprint("Two.")]


def test_one_fact_waits_once_and_a_fact_rejected_on_one_side_leaves_the_other() -> None:
    base = Queue()
    ours = Queue([item("The port is 5673.", "d1"), item("Kept.", "d1")])
    theirs = Queue([item("the port is 5673", "d9")])  # the same fact from another digest
    assert [i["digest"] for i in merged(base, ours, theirs).items] == ["d1", "d1"]
    theirs = Queue([], [rejection("The port is 5673!", "2026-12-02T10:00:00", "wrong")])
    assert [i["text"] for i in merged(base, ours, theirs).items] == ["Kept."]


def test_the_same_fact_rejected_on_both_sides_is_one_rejection_the_earlier_standing() -> None:
    base = Queue([item("X.")])
    ours = Queue([], [rejection("X.", "2026-12-02T11:00:00", "ours")])
    theirs = Queue([], [rejection("X.", "2026-12-02T10:00:00", "theirs")])
    result = merged(base, ours, theirs)
    assert result.items == [] and [r["reason"] for r in result.rejected] == ["theirs"]


def test_rejections_stay_bounded() -> None:
    queue = Queue()
    for n in range(1005):
        queue.reject(item(f"Fact {n}."), f"2026-12-02T10:{n // 60:02d}:{n % 60:02d}", "m", "")
    assert len(queue.rejected) == 1000 and queue.rejected[0]["text"] == "Fact 5."


def test_a_side_that_is_not_a_queue_falls_back_to_lines_and_keeps_both() -> None:
    base = dump_queue(Queue([item("One.")]))
    ours = dump_queue(Queue([item("One."), item("Two.")]))
    theirs = base.replace('"One."', '"One, edited by hand."').replace("]", "", 1)  # broken JSON
    result = merge_file("review.json", base, ours, theirs)
    assert result is not None
    assert "Two." in result.text and "edited by hand" in result.text  # neither side lost
    assert any("not a review queue" in note for note in result.notes)
