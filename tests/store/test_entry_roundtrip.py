"""The store round trip of the entry properties tests/format checks in process: the CommonMark
spec examples and random bodies through `remember`, and random hand edits followed by
`check --fix` and a write, in real stores with real commits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entrygen import Files, apply, body_kept, hand_edits, markdown_bodies
from fixtures.commonmark import examples
from gitmem.errors import InvalidInputError
from gitmem.format.entry import text_hash
from gitmem.format.markdown import parse_topic_file
from gitmem.store.store import Store
from gitmem.verbs.base import check_text, safe_body
from gitmem.verbs.check import check_tree
from gitmem.verbs.entries import remember
from gitmem.verbs.reads import show


def _entries(store: Store) -> dict[str, tuple[str, str]]:
    """id -> (path, body) of every entry on disk; fails on an entry without an Id."""
    found: dict[str, tuple[str, str]] = {}
    for relpath in store.all_topic_files():
        for entry in parse_topic_file((store.root / relpath).read_bytes().decode("utf-8"), relpath).entries:
            assert entry.id and entry.id not in found, (relpath, entry.title)
            found[entry.id] = (relpath, entry.body)
    return found


def test_every_commonmark_example_through_remember_loses_no_id(store: Store) -> None:
    written: dict[str, str] = {}
    for number, text in enumerate(examples()):
        try:
            expected = safe_body(check_text(text))
        except InvalidInputError:
            continue  # blank examples: remember refuses them
        result = remember(store, text, "semantic", topic=f"spec-{number // 50}", force=True)
        if result.changed:
            written[str(result.id)] = expected
        else:  # the same text once whitespace and case are set aside: recorded once
            assert text_hash(written[str(result.id)]) == text_hash(expected)
    on_disk = _entries(store)
    assert sorted(on_disk) == sorted(written)
    for entry_id, body in written.items():
        assert on_disk[entry_id][1] == body
        assert show(store, entry_id)["body"] == body


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, str]]]:
    root = tmp_path_factory.mktemp("roundtrip")
    store = Store(root / "store", cwd=root)
    store.init()
    yield store, {}
    store.close()


@settings(deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(markdown_bodies(), st.sampled_from(["a", "b", "c"]))
def test_random_bodies_through_remember_read_back_as_written(
        shared_store: tuple[Store, dict[str, str]], text: str, topic: str) -> None:
    store, written = shared_store
    try:
        expected = safe_body(check_text(text))
    except InvalidInputError:
        return
    result = remember(store, text, "semantic", topic=topic)
    if result.changed:
        written[str(result.id)] = expected
    assert text_hash(written[str(result.id)]) == text_hash(expected)
    assert show(store, str(result.id))["body"] == written[str(result.id)]
    on_disk = _entries(store)
    assert sorted(on_disk) == sorted(written)


PATHS = ["global/semantic/a.md", "global/semantic/b.md"]


@settings(deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(st.lists(markdown_bodies(), min_size=2, max_size=4), st.data())
def test_hand_edits_then_check_fix_and_a_write_lose_nothing(
        tmp_path_factory: pytest.TempPathFactory, bodies: list[str], data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("hand")
    store = Store(root / "store", cwd=root)
    store.init()
    try:
        written: dict[str, str] = {}
        for number, text in enumerate(bodies):
            result = _try_remember(store, text, ["a", "b"][number % 2])
            if result is not None and result.changed:
                written[str(result.id)] = show(store, str(result.id))["body"]
        if not written:
            return
        files = Files({p: (store.root / p).read_bytes().decode("utf-8") for p in PATHS
                       if (store.root / p).exists()})
        for op in data.draw(hand_edits(sorted(written), sorted(files.texts))):
            apply(files, op)
        for relpath, text in files.texts.items():
            (store.root / relpath).write_bytes(text.encode("utf-8"))
        check_tree(store, fix=True)
        added = _try_remember(store, "written after the hand edits", "a")
        on_disk = _entries(store)
        expected = set(written) | ({str(added.id)} if added is not None else set())
        assert set(on_disk) == expected, "an Id was lost or an entry appeared"
        for entry_id, body in written.items():
            assert body_kept(body, on_disk[entry_id][1]), entry_id
    finally:
        store.close()


def _try_remember(store: Store, text: str, topic: str) -> object:
    """remember, or None when it refuses (blank text, or a hand edit left with an error)."""
    try:
        return remember(store, text, "semantic", topic=topic, force=True)
    except InvalidInputError:
        return None


def test_files_are_left_as_written_when_a_hand_edit_has_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", cwd=tmp_path)
    store.init()
    first = remember(store, "one fact", "semantic", topic="a").id
    path = store.root / PATHS[0]
    doubled = path.read_text().replace(f"**Id:** {first}\n", f"**Id:** {first}\n**Id:** {first}\n")
    path.write_text(doubled)
    report = check_tree(store, fix=True)
    assert [str(p) for p in report.errors] and path.read_text() == doubled
    remember(store, "another fact", "semantic", topic="b")  # elsewhere: the write goes on
    with pytest.raises(InvalidInputError, match="second Id line"):
        remember(store, "into that file", "semantic", topic="a")
    assert path.read_text() == doubled
    store.close()
