"""Store.write_topics: a group of topic files (an import's flush) announced in one journal write
and checked whole before the first file changes."""

from __future__ import annotations

import json

import pytest

from gitmem.errors import ConflictError
from gitmem.format.entry import Entry, TopicFile
from gitmem.format.markdown import new_topic_file
from gitmem.store.store import Store
from gitmem.verbs.entries import remember
from support import git


def _topic(name: str, *texts: str) -> TopicFile:
    document = new_topic_file({"topic": name, "layer": "semantic", "scope": "global"}, name)
    document.entries.extend(Entry(title=text, body=text, fields={"Id": f"global-sem-{900 + i}"})
                            for i, text in enumerate(texts))
    return document


def test_a_group_is_announced_once_written_and_committed_as_one(store: Store) -> None:
    group = {"global/semantic/alpha.md": _topic("alpha", "one"),
             "global/semantic/beta.md": _topic("beta", "two")}
    before = len(git(store.root, "log", "--format=%H").split())
    with store.writing("import") as txn:
        assert store.write_topics(txn, group) == list(group)
        announced = json.loads((store.root / "state" / "journal.json").read_text())
        assert announced == {"verb": "import", "paths": list(group)}
        assert store.write_topics(txn, group) == []  # unchanged: nothing
        txn.message = "import: two files"
    assert len(git(store.root, "log", "--format=%H").split()) == before + 1
    assert "one" in (store.root / "global/semantic/alpha.md").read_text()
    assert not (store.root / "state" / "journal.json").exists()


def test_a_group_with_one_refused_file_changes_no_file(store: Store) -> None:
    remember(store, "kept as it is", "semantic", topic="held")
    held = store.root / "global/semantic/held.md"
    held.write_text(held.read_text() + "\n<<<<<<< ours\n## A\nx\n=======\n## B\ny\n>>>>>>> theirs\n")
    git(store.root, "commit", "-qam", "a conflict block committed by hand")
    text, head = held.read_text(), git(store.root, "rev-parse", "HEAD")
    group = {"global/semantic/fresh.md": _topic("fresh", "new"),
             "global/semantic/held.md": _topic("held", "the block dropped")}
    with pytest.raises(ConflictError), store.writing("import") as txn:
        store.write_topics(txn, group)
    assert not (store.root / "global/semantic/fresh.md").exists()
    assert held.read_text() == text
    assert git(store.root, "rev-parse", "HEAD") == head
