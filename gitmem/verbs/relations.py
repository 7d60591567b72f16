"""Typed links between entries: `gitmem relate` records one, `gitmem related` walks them.

Only recorded links are walked (both ways: the links an entry holds and those pointing at it),
plus, when asked, the temporal neighbours derived from the entry's topic file — marked derived.
Nothing else is inferred. See gitmem/format/references.py for the types and their direction.
"""

from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, InvalidInputError, NotFoundError
from gitmem.format import layers as L
from gitmem.format.entry import Entry
from gitmem.format.normalize import Problem
from gitmem.format.references import RELATION_TYPES, SYMMETRIC, add_relation, parse_related
from gitmem.spaces.lookup import Ref, resolve_ref, split_ref
from gitmem.spaces.mounts import is_home, load_mounts, open_mount
from gitmem.store.relcheck import relation_findings
from gitmem.store.tree import read_memory_text
from gitmem.verbs.base import WriteResult

if TYPE_CHECKING:
    from gitmem.store.store import Located, Store

MAX_DEPTH = 5
UNTYPED = "untyped"


def check_type(kind: str) -> str:
    kind = kind.strip().lower()
    if kind not in RELATION_TYPES:
        raise InvalidInputError(f"unknown relation type {kind!r} (use {'|'.join(RELATION_TYPES)})")
    return kind


# -- relate ------------------------------------------------------------------------------------
def relate(home: Store, ref: str, kind: str, other: str, *, space: str | None = None) -> WriteResult:
    """Record `kind:OTHER` on ID (and `kind:ID` on OTHER for the symmetric types), one commit."""
    kind = check_type(kind)
    source, found = resolve_ref(home, ref, space=space, writing=True)
    other_space, other_id = split_ref(other)
    if other_space is None:
        try:  # a bare OTHER is looked for in ID's own store first
            target, target_found = Ref(source.space, source.store, other_id, source.home), \
                source.store.locate(other_id)
        except NotFoundError:
            target, target_found = resolve_ref(home, other, writing=True)
    else:
        target, target_found = resolve_ref(home, other, writing=True)
    if L.parse_id(target.id) is None:  # a folder space's note: its id is not an entry Id
        raise InvalidInputError(
            f"{target.qualified} is a note of the read-only folder space {target.space}: a link "
            "records entry Ids only (`gitmem space merge` copies the note into a store first)")
    same_store = target.store.root == source.store.root
    if same_store and target.id == source.id:
        raise InvalidInputError(f"{source.id} cannot be related to itself")
    if not same_store and not source.home:
        raise InvalidInputError(
            f"{source.qualified} lives in space {source.space}: its links can point only inside"
            " that space (link from the store's own entry instead)")
    written = target.id if same_store else target.qualified
    store = source.store
    with store.writing("relate") as txn:
        changed = _add(store, txn, found, kind, written)
        if kind in SYMMETRIC and same_store:
            changed = _add(store, txn, target_found, kind, source.id) or changed
        if not changed:
            return WriteResult(source.id, found.path, False, "already recorded; nothing changed")
        txn.message = f"relate: {source.id} {kind}:{written}"
    return WriteResult(source.id, found.path, True,
                       "recorded both ways" if kind in SYMMETRIC and same_store else "recorded")


def _add(store: Store, txn: Any, found: Located, kind: str, ref: str) -> bool:
    document = store.read_file(found.path)
    assert document is not None and found.entry.id is not None
    index = document.find(found.entry.id)
    assert index is not None
    entry = document.entries[index]
    value = add_relation(entry.get("Related"), kind, ref)
    if value is None:
        return False
    document.entries[index] = entry.with_fields(Related=value)
    return store.write_topic(txn, found.path, document)


# -- related -----------------------------------------------------------------------------------
@dataclass
class _StoreLinks:
    """Who points at whom in one store (built from the files that hold a Related field)."""

    incoming: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id -> (from, type)


def _links(store: Store) -> _StoreLinks:
    links = _StoreLinks()
    for relpath in store.all_topic_files():
        try:
            if "**Related:**" not in read_memory_text(store.root, relpath):
                continue
            document = store.read_file(relpath)
        except (OSError, InvalidInputError):
            continue  # a file that cannot be read links nothing; `gitmem check` names it
        for entry in document.entries if document else []:
            for item in parse_related(entry.get("Related")):
                if entry.id and item.target and item.space is None:
                    links.incoming.setdefault(item.target, []).append((entry.id, item.type or UNTYPED))
    return links


@dataclass(frozen=True)
class _Node:
    space: str
    home: bool
    id: str

    @property
    def ref(self) -> str:
        return self.id if self.home else f"{self.space}/{self.id}"


class _Walk:
    """Breadth-first over recorded (and, when asked, derived) links."""

    def __init__(self, home: Store, types: set[str] | None, derive: bool) -> None:
        self.home = home
        self.types = types
        self.derive = derive
        self.stores: dict[str, Store] = {}
        self.links: dict[str, _StoreLinks] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: list[dict[str, Any]] = []
        self._edge_keys: set[tuple[str, str, str, bool]] = set()

    def node(self, node: _Node, depth: int) -> dict[str, Any] | None:
        if node.ref in self.nodes:
            return self.nodes[node.ref]
        record: dict[str, Any] = {"ref": node.ref, "id": node.id, "space": node.space,
                                  "depth": depth, "title": "", "path": None, "line": None,
                                  "missing": True}
        store = self.stores.get(node.space)
        located = None
        if store is not None:
            try:
                located = store.locate(node.id)
            except NotFoundError:
                located = None
        if located is not None:
            record.update(title=located.entry.title, path=located.path,
                          line=located.entry.line, missing=False)
        self.nodes[node.ref] = record
        record["_located"] = located
        return record

    def edge(self, source: _Node, target: _Node, kind: str, derived: bool) -> bool:
        if self.types is not None and kind not in self.types:
            return False
        key = (source.ref, target.ref, kind, derived)
        mirrored = (target.ref, source.ref, kind, derived)
        if key in self._edge_keys or (kind in SYMMETRIC and mirrored in self._edge_keys):
            return False
        self._edge_keys.add(key)
        self.edges.append({"from": source.ref, "to": target.ref, "type": kind, "derived": derived})
        return True

    def neighbours(self, node: _Node) -> list[_Node]:
        record = self.nodes[node.ref]
        located: Located | None = record.get("_located")
        found: list[_Node] = []
        if located is not None:
            for item in parse_related(located.entry.get("Related")):
                if item.target is None:
                    continue
                target = self._resolve(node, item.space, item.target)
                if self.edge(node, target, item.type or UNTYPED, False):
                    found.append(target)
        store = self.stores[node.space]
        if node.space not in self.links:
            self.links[node.space] = _links(store)
        for source_id, kind in self.links[node.space].incoming.get(node.id, []):
            source = _Node(node.space, node.home, source_id)
            if self.edge(source, node, kind, False):
                found.append(source)
        if self.derive and located is not None:
            before, after = _temporal_neighbours(store, located)
            for other, later in ((before, node), (after, None)):
                if other is None:
                    continue
                neighbour = _Node(node.space, node.home, other)
                src, dst = (node, neighbour) if later is not None else (neighbour, node)
                if self.edge(src, dst, "temporal", True):
                    found.append(neighbour)
        return found

    def _resolve(self, node: _Node, space: str | None, entry_id: str) -> _Node:
        if space is None:
            return _Node(node.space, node.home, entry_id)
        if node.home and space not in self.stores:
            mount = load_mounts(self.home.root).get(space)
            if mount is not None and mount.active:
                with contextlib.suppress(GitmemError):  # unreadable: its nodes stay missing
                    self.stores[space] = open_mount(self.home, mount)
        return _Node(space, is_home(self.home, space), entry_id)


def _temporal_neighbours(store: Store, located: Located) -> tuple[str | None, str | None]:
    """The entries created just before and just after this one in its topic file (ids)."""
    document = store.read_file(located.path)
    if document is None:
        return None, None

    def order(entry: Entry) -> tuple[str, int]:
        parsed = L.parse_id(entry.id or "")
        return (entry.get("Created")[:10], parsed.number if parsed else 0)

    ordered = sorted((e for e in document.entries if e.id), key=order)
    ids = [e.id for e in ordered]
    position = ids.index(located.entry.id)
    before = ids[position - 1] if position > 0 else None
    after = ids[position + 1] if position + 1 < len(ids) else None
    return before, after


def related(home: Store, ref: str, *, space: str | None = None, types: list[str] | None = None,
            depth: int = 1, derive: list[str] | None = None) -> dict[str, Any]:
    """The entries linked to ID up to `depth` steps, with the links walked."""
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidInputError(f"--depth must be between 1 and {MAX_DEPTH}")
    wanted = {check_type(t) if t != UNTYPED else t for t in types} if types else None
    for kind in derive or []:
        if kind != "temporal":
            raise InvalidInputError(f"only temporal links can be derived, not {kind!r}")
    start, _found = resolve_ref(home, ref, space=space)
    walk = _Walk(home, wanted, bool(derive))
    walk.stores[start.space] = start.store
    root = _Node(start.space, start.home, start.id)
    walk.node(root, 0)
    queue = deque([(root, 0)])
    while queue:
        node, level = queue.popleft()
        if level >= depth or node.space not in walk.stores or walk.nodes[node.ref]["missing"]:
            continue
        for neighbour in walk.neighbours(node):
            if neighbour.ref not in walk.nodes:
                walk.node(neighbour, level + 1)
                queue.append((neighbour, level + 1))
    nodes = [{k: v for k, v in n.items() if k != "_located"} for n in walk.nodes.values()]
    return {"root": root.ref, "nodes": nodes, "edges": walk.edges}


# -- check -------------------------------------------------------------------------------------
def relation_report(store: Store) -> tuple[list[Problem], list[Problem]]:
    """(problems, hints) of every Related and Paths field in the store, for `gitmem check`."""
    texts = {}
    for relpath in store.all_topic_files():
        try:
            texts[relpath] = read_memory_text(store.root, relpath)
        except (OSError, InvalidInputError):
            continue  # reported by the format check
    return relation_findings(store.catalog, texts)
