"""Randomized, seeded torture test of sync: two machines apply hundreds of random operations
(remember, edit a body by hand, forget, hand-append an entry without an Id, delete a topic file)
interleaved with syncs, against one bare remote. At the end both hold the same tree, every entry
written on either side is still there unless its topic was deliberately deleted, Ids are unique,
and the only conflict markers ever written were true same-entry collisions listed in CONFLICT.md.

Every entry's heading is a unique token, so an entry can be followed through renumbering.
GITMEM_TORTURE_SEEDS=1,2,3,... runs more seeds.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gitmem.format import layers as L
from gitmem.format.markdown import parse_topic_file, render_topic_file
from gitmem.store.store import Store
from gitmem.sync.remote import init_store
from gitmem.sync.run import SyncReport, sync
from gitmem.verbs.entries import forget, remember
from support import git

SEEDS = [int(s) for s in os.environ.get("GITMEM_TORTURE_SEEDS", "7,2026").split(",") if s]
OPERATIONS = 220
TOPICS = ("alpha", "beta", "gamma")
LAYERS = ("semantic", "learnings")
TOKEN_RE = re.compile(r"^## (T\d+)\b", re.MULTILINE)


@dataclass
class World:
    """What the test knows should be true, whatever the merges decided."""

    rng: random.Random
    written: set[str] = field(default_factory=set)  # every token ever written, on either machine
    deleted: set[str] = field(default_factory=set)  # tokens whose topic file was deleted on purpose
    conflicts: int = 0
    counter: int = 0

    def token(self) -> str:
        self.counter += 1
        token = f"T{self.counter}"
        self.written.add(token)
        return token


def topic_files(store: Store) -> list[str]:
    return [p for p in store.all_topic_files() if (store.root / p).is_file()]


def entries_on_disk(store: Store) -> list[tuple[str, str, str | None]]:
    """(path, heading token, id) of every entry in the work tree."""
    found = []
    for relpath in topic_files(store):
        topic = parse_topic_file((store.root / relpath).read_text(encoding="utf-8"), relpath)
        found += [(relpath, e.title.split()[0], e.id) for e in topic.entries]
    return found


def op_remember(store: Store, world: World) -> None:
    token = world.token()
    remember(store, f"{token} written on {store.root.name}", world.rng.choice(LAYERS),
             topic=world.rng.choice(TOPICS), title=token)


def op_edit(store: Store, world: World) -> None:
    candidates = entries_on_disk(store)
    if not candidates:
        return op_remember(store, world)
    relpath, token, _ = world.rng.choice(candidates)
    full = store.root / relpath
    topic = parse_topic_file(full.read_text(encoding="utf-8"), relpath)
    index = next(i for i, e in enumerate(topic.entries) if e.title.split()[0] == token)
    body = f"{token} edited on {store.root.name}, revision {world.rng.randrange(10**6)}"
    topic.entries[index] = topic.entries[index].with_body(body)
    full.write_text(render_topic_file(topic), encoding="utf-8")


def op_forget(store: Store, world: World) -> None:
    candidates = [entry_id for _, _, entry_id in entries_on_disk(store) if entry_id]
    if not candidates:
        return op_remember(store, world)
    forget(store, world.rng.choice(sorted(candidates)))


def op_hand_append(store: Store, world: World) -> None:
    files = topic_files(store)
    if not files:
        return op_remember(store, world)
    token = world.token()
    with open(store.root / world.rng.choice(files), "a", encoding="utf-8") as handle:
        handle.write(f"\n## {token}\n{token} appended by hand on {store.root.name}\n")


def op_delete_topic(store: Store, world: World) -> None:
    files = topic_files(store)
    if not files:
        return
    relpath = world.rng.choice(files)
    world.deleted |= set(TOKEN_RE.findall((store.root / relpath).read_text(encoding="utf-8")))
    (store.root / relpath).unlink()


def conflict_spans(text: str) -> list[tuple[int, int]]:
    """Outermost <<<<<<< ... >>>>>>> blocks, nested ones included."""
    spans, depth, start, pos = [], 0, 0, 0
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<<"):
            start = pos if depth == 0 else start
            depth += 1
        elif line.startswith(">>>>>>>") and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, pos + len(line)))
        pos += len(line)
    assert depth == 0, "unbalanced conflict markers"
    return spans


def versions(block: str) -> list[str]:
    """The versions a conflict block holds (text between marker lines that has an entry)."""
    parts = re.split(r"^(?:<{7}|={7}|>{7})[^\n]*\n", block, flags=re.MULTILINE)
    return [part for part in parts if TOKEN_RE.search(part)]


def check_and_resolve(store: Store, report: SyncReport, world: World) -> None:
    """Every conflict is one entry written differently on both sides, and listed; then resolve."""
    if not report.conflicts:
        assert not (store.root / "state/CONFLICT.md").exists()
        return
    listing = (store.root / "state/CONFLICT.md").read_text(encoding="utf-8")
    for conflict in report.conflicts:
        assert conflict.kind == "both-edited", conflict
        assert conflict.entry_id and conflict.entry_id in listing and conflict.path in listing
    for relpath in sorted({c.path for c in report.conflicts}):
        full = store.root / relpath
        content = full.read_text(encoding="utf-8")
        spans = conflict_spans(content)
        assert spans, f"{relpath}: no conflict block"
        for start, end in reversed(spans):
            found = versions(content[start:end])
            tokens = {TOKEN_RE.findall(v)[0] for v in found}
            assert len(found) >= 2 and all(len(TOKEN_RE.findall(v)) == 1 for v in found)
            assert len(tokens) == 1, f"{relpath}: one block holds different entries {tokens}"
            assert len(set(found)) > 1  # the same entry, written differently: a true collision
            world.conflicts += 1
            keep = world.rng.choice(found)
            content = content[:start] + keep + ("" if keep.endswith("\n\n") else "\n") + content[end:]
        full.write_text(content, encoding="utf-8")


def do_sync(store: Store, world: World) -> None:
    check_and_resolve(store, sync(store), world)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_machines_survive_random_operations_and_syncs(tmp_path: Path, bare_remote: Path,
                                                          seed: int) -> None:
    world = World(random.Random(seed))
    machines = []
    for name in ("a", "b"):
        store = Store(tmp_path / name, cwd=tmp_path)
        init_store(store, remote=str(bare_remote), branch="main")
        if name == "a":
            sync(store)
        machines.append(store)
    operations = (op_remember, op_remember, op_edit, op_edit, op_forget, op_hand_append,
                  op_delete_topic)
    syncs = 0
    for _ in range(OPERATIONS):
        store = world.rng.choice(machines)
        if world.rng.random() < 0.22:
            do_sync(store, world)
            syncs += 1
        else:
            world.rng.choice(operations)(store, world)
    for _round in range(6):  # settle: each machine syncs, and pushes its resolutions at once
        for store in machines:
            report = sync(store)
            check_and_resolve(store, report, world)
            if report.conflicts:
                do_sync(store, world)
        heads = {git(s.root, "rev-parse", "HEAD").strip() for s in machines}
        if len(heads) == 1 and all(git(s.root, "status", "--porcelain") == "" for s in machines):
            break
    a, b = machines
    assert git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")
    assert syncs >= 30

    final = entries_on_disk(a)
    present = {token for _, token, _ in final}
    missing = world.written - present - world.deleted
    assert not missing, f"lost entries: {sorted(missing)}"
    for scope_layer, count in Counter(
            (L.classify_path(p).scope, L.classify_path(p).layer, i) for p, _, i in final).items():
        assert count == 1, f"duplicate id {scope_layer}"
    assert all(entry_id for _, _, entry_id in final)
    for relpath in a.all_topic_files():
        assert "<<<<<<<" not in (a.root / relpath).read_text(encoding="utf-8")
    for scope in a.scope_keys():
        for layer in LAYERS:
            index = a.root / L.layer_index_path(scope, layer)
            if index.exists():
                a.catch_up_catalog()
                assert index.read_text() == L.render_layer_index(scope, layer, a.catalog.topics(scope, layer))
    for store in machines:
        assert not (store.root / "state/CONFLICT.md").exists()
        store.close()
