"""Where a new entry goes: the store itself, a space named with --space, or a routing rule's space.

Two kinds of rules, both explicit (nothing is inferred from prose):
- the store's routing list (memory.json "spaces.routes", shared by the machines that sync it):
  `{"space": "team", "layer": "decisions"}`, `{"space": "team", "topic": "deploy*"}`,
  `{"space": "ops", "keyword": "kubernetes"}` — every condition given must hold;
- a space's own keywords (its memory.json "spaces.keywords", part of its description of what
  belongs there): a write whose title, text or topic holds one of them goes there.
Only active spaces take part. Rules pointing at one space: that space. Rules pointing at several:
refused with the choices, never guessed. No rule matching: the store itself while no other space
is active; with other spaces active, the default space (settings.spaces.default), and without one
the write is refused with the choices, as with several rules.

Where a write went and why is recorded in the commit that makes it, in the store it went to: a
`Routed:` trailer naming the reason and the store that routed it (see Target.trailer).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, InvalidInputError, NotFoundError
from gitmem.spaces.folder import read_only_error
from gitmem.spaces.mounts import (
    HOME,
    Mount,
    home_name,
    identity,
    is_home,
    load_mounts,
    open_mount,
    save_mounts,
)
from gitmem.store.txn import refuse_subagent

if TYPE_CHECKING:
    from gitmem.store.store import Store


@dataclass(frozen=True)
class Rule:
    space: str
    layer: str | None = None
    topic: str | None = None
    keyword: str | None = None
    origin: str = "routing rule"

    def describe(self) -> str:
        parts = [f"layer {self.layer}" if self.layer else "", f"topic {self.topic}" if self.topic else "",
                 f"keyword {self.keyword!r}" if self.keyword else ""]
        return f"{self.origin}: " + ", ".join(p for p in parts if p)

    def as_json(self) -> dict[str, str]:
        return {k: v for k, v in (("space", self.space), ("layer", self.layer),
                                  ("topic", self.topic), ("keyword", self.keyword)) if v}


@dataclass
class Target:
    """Where a write goes and why; `activate` when the write makes an inactive space active."""

    name: str
    store: Store
    home: bool
    reason: str
    activate: bool = False

    def trailer(self, root_store: Store) -> str:
        """The commit trailer recording the routing decision ('' when spaces played no part)."""
        if not self.reason or (self.home and not load_mounts(root_store.root)):
            return ""
        return f"Routed: {self.reason}; from the store {home_name(root_store)!r}"

    def finish(self, root_store: Store) -> str:
        """Activate a space a write went to (as the write made it a space in use); the note."""
        if self.activate:
            mounts = load_mounts(root_store.root)
            if self.name in mounts:
                mounts[self.name].active = True
                save_mounts(root_store.root, mounts)
            return f"written to space {self.name} ({self.reason}); it was inactive and is now active"
        return f"written to space {self.name} ({self.reason})"


def stored_rules(store: Store) -> list[Rule]:
    """The explicit routing list of memory.json."""
    record = store.registry.data.get("spaces")
    routes = record.get("routes") if isinstance(record, dict) else None
    rules = []
    for item in routes if isinstance(routes, list) else []:
        if isinstance(item, dict) and item.get("space"):
            rules.append(Rule(str(item["space"]), item.get("layer"), item.get("topic"),
                              item.get("keyword")))
    return rules


def all_rules(home: Store) -> list[Rule]:
    """The store's routing list plus the keywords of every active space."""
    rules = stored_rules(home)
    for mount in load_mounts(home.root).values():
        if not mount.active or not mount.writable:
            continue
        try:
            own = identity(open_mount(home, mount))
        except GitmemError:
            continue  # a space that cannot be opened routes nothing; `space list` says why
        rules += [Rule(mount.name, keyword=k, origin=f"keywords of space {mount.name}")
                  for k in own.keywords]
    return rules


def _has_word(text: str, word: str) -> bool:
    if not word.isascii():  # unspaced scripts have no word boundaries to look for
        return word.casefold() in text.casefold()
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def matches(rule: Rule, layer: str, topic: str, text: str) -> bool:
    if not (rule.layer or rule.topic or rule.keyword):
        return False
    if rule.layer and rule.layer != layer:
        return False
    if rule.topic and not fnmatch.fnmatchcase(topic.casefold(), rule.topic.casefold()):
        return False
    return not rule.keyword or _has_word(f"{topic}\n{text}", rule.keyword)


def _workspace_of(home: Store) -> str | None:
    try:
        return home.resolve_workspace()
    except GitmemError:
        return None


def _space_target(home: Store, mount: Mount, reason: str, *, explicit: bool) -> Target:
    store = open_mount(home, mount)
    # The store's own associations and folder decide the workspace, wherever the entry goes.
    store.workspace_flag = home.workspace_flag or _workspace_of(home)
    return Target(mount.name, store, False, reason, activate=explicit and not mount.active)


def choose(home: Store, *, space: str | None, layer: str, topic: str | None, text: str,
           verb: str = "remember", home_unless_routed: bool = False) -> Target:
    """The target of a new entry (see the module docstring for the rules);
    `home_unless_routed`: no rule matching means the store itself (a batch writes there)."""
    refuse_subagent(verb)  # before any lookup: a subagent's write is refused as such
    mounts = load_mounts(home.root)
    if space is not None:
        if is_home(home, space):
            return Target(home_name(home), home, True, "--space")
        if space not in mounts:
            raise NotFoundError(f"no space named {space!r} is mounted (`gitmem space list`)")
        if not mounts[space].writable:
            raise read_only_error(space)
        return _space_target(home, mounts[space], "--space", explicit=True)
    folders = {name for name, mount in mounts.items() if not mount.writable}
    mounts = {name: mount for name, mount in mounts.items() if name not in folders}  # never a folder
    if not mounts:
        return Target(home_name(home), home, True, "")
    hits: dict[str, list[Rule]] = {}
    for rule in all_rules(home):
        if rule.space in (HOME, home_name(home), *folders) or not matches(rule, layer, topic or "general", text):
            continue
        mount = mounts.get(rule.space)
        if mount is None:
            raise InvalidInputError(
                f"{rule.describe()} sends this write to space {rule.space!r}, which is not mounted"
                f" on this machine: mount it, or pass --space {HOME}"
            )
        if mount.active:
            hits.setdefault(rule.space, []).append(rule)
    if not hits:
        if home_unless_routed:
            return Target(home_name(home), home, True, "no routing rule matched")
        return _unrouted(home, mounts)
    if len(hits) > 1:
        choices = "; ".join(f"{name} ({rules[0].describe()})" for name, rules in sorted(hits.items()))
        raise InvalidInputError(
            f"routing is ambiguous: {choices}; pass --space NAME (or --space {HOME})"
        )
    name, rules = next(iter(hits.items()))
    return _space_target(home, mounts[name], rules[0].describe(), explicit=False)


def _unrouted(home: Store, mounts: dict[str, Mount]) -> Target:
    """No rule chose: the store when it is the only active space, else the default space, else
    the writer must choose (nothing is guessed)."""
    from gitmem.store.settings import default_space

    active = sorted(name for name, mount in mounts.items() if mount.active)
    if not active:
        return Target(home_name(home), home, True, "no routing rule matched")
    wanted = default_space(home.registry)
    if wanted is None:
        choices = ", ".join([f"{HOME} (this store)", *(_described(home, mounts[n]) for n in active)])
        raise InvalidInputError(
            f"no routing rule chooses a space for this write and {len(active) + 1} spaces are active:"
            f" {choices}; pass --space NAME, or set a default with `gitmem config set spaces.default NAME`"
        )
    if is_home(home, wanted):
        return Target(home_name(home), home, True, "the default space (settings.spaces.default)")
    if wanted in load_mounts(home.root) and wanted not in mounts:
        raise InvalidInputError(f"settings.spaces.default names space {wanted!r}, which is a read-only"
                                " Markdown folder: set the default to a store, or pass --space NAME")
    if wanted not in mounts:
        raise InvalidInputError(
            f"settings.spaces.default names space {wanted!r}, which is not mounted on this machine:"
            f" mount it, change the default, or pass --space NAME"
        )
    return _space_target(home, mounts[wanted], "the default space (settings.spaces.default)", explicit=True)


def _described(home: Store, mount: Mount) -> str:
    try:
        description = identity(open_mount(home, mount)).description
    except GitmemError:
        description = ""
    return f"{mount.name} ({description})" if description else mount.name


def add_rule(home: Store, rule: Rule) -> list[dict[str, Any]]:
    """Add a rule to the store's routing list (one commit); returns the list. A read-only
    Markdown folder takes no rule: writes never go there."""
    mount = load_mounts(home.root).get(rule.space)
    if mount is not None and not mount.writable:
        raise read_only_error(rule.space)
    return _edit_routes(home, lambda routes: routes + [rule.as_json()]
                        if rule.as_json() not in routes else routes, f"space route: {rule.space}")


def clear_rules(home: Store, space: str) -> list[dict[str, Any]]:
    return _edit_routes(home, lambda routes: [r for r in routes if r.get("space") != space],
                        f"space route: clear {space}")


def _edit_routes(home: Store, change: Any, message: str) -> list[dict[str, Any]]:
    with home.writing("space route") as txn:
        registry = home.registry
        record = registry.data.get("spaces")
        if not isinstance(record, dict):
            record = registry.data["spaces"] = {}
        routes = [r for r in record.get("routes") or [] if isinstance(r, dict)]
        updated = change(routes)
        if updated == routes:
            return routes
        record["routes"] = updated
        home.save_registry(txn, registry)
        txn.message = message
        return list(updated)
