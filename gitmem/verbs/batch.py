"""`gitmem batch`: many writes, one commit. Each item names a write verb (`op`) and its arguments;
every item goes through that verb's library function (dedup, ids, the secret gate per item), and
the whole batch is one commit. One bad item refuses the batch: nothing is written (no file, no
commit, no index entry), and the error names the item's line (or position in a list).

A batch writes into one store, the one it is opened on: an item whose routing rules send it to a
mounted space, or that names an entry living in one, is refused (write it on its own).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, InvalidInputError

if TYPE_CHECKING:
    from gitmem.store.store import Store
    from gitmem.verbs.base import WriteResult

MAX_ITEMS = 10_000

_REMEMBER = {"text", "layer", "topic", "title", "importance", "volatility", "until", "source", "supersedes",
             "scope", "workspace", "force", "paths", "allow_secret"}
# op -> (required arguments, allowed arguments)
OPS: dict[str, tuple[set[str], set[str]]] = {
    "remember": ({"text", "layer"}, _REMEMBER),
    "supersede": ({"id", "text"}, {"id", "text", "title", "importance", "volatility", "until", "source",
                                   "topic", "paths", "allow_secret"}),
    "decision": ({"statement", "rationale"}, {"statement", "rationale", "context", "alternatives",
                                              "consequences", "topic", "importance", "scope", "workspace",
                                              "allow_secret"}),
    "codebase": ({"topic", "text"}, {"topic", "text", "importance", "workspace", "source", "allow_secret"}),
    "forget": ({"id"}, {"id", "undo"}),
    "verify": ({"id"}, {"id"}),
    "relate": ({"id", "type", "other"}, {"id", "type", "other"}),
}
_FLAGS = {"force", "undo", "allow_secret"}
_LISTS = {"alternatives"}


class BatchItemError(GitmemError):
    """One item of a batch was refused, so the whole batch was: carries that item's exit code."""

    def __init__(self, line: int, cause: GitmemError) -> None:
        self.line = line
        self.cause = cause
        self.exit_code = cause.exit_code
        super().__init__(f"line {line}: {cause.message}; nothing in the batch was written")


@dataclass(frozen=True)
class BatchItem:
    line: int  # 1-based: the line of the input, or the position in a list
    op: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ItemResult:
    line: int
    op: str
    id: str | None
    path: str
    changed: bool
    note: str = ""


@dataclass(frozen=True)
class BatchResult:
    items: list[ItemResult]
    commit: str | None  # None when no item changed anything

    def as_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "written": sum(i.changed for i in self.items),
                "items": [asdict(i) for i in self.items]}


def check_item(line: int, raw: Any) -> BatchItem:
    """One item as given (an object with `op` and the op's arguments), checked before any write."""
    if not isinstance(raw, dict):
        raise BatchItemError(line, InvalidInputError("an item must be a JSON object with \"op\""))
    op = raw.get("op")
    if op not in OPS:
        raise BatchItemError(line, InvalidInputError(
            f"unknown op {json.dumps(op)}; the ops are: {', '.join(OPS)}"))
    required, allowed = OPS[op]
    args = {k: v for k, v in raw.items() if k != "op"}
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise BatchItemError(line, InvalidInputError(
            f"{op}: unknown argument {unknown[0]!r}; {op} takes {', '.join(sorted(allowed))}"))
    missing = sorted(required - {k for k, v in args.items() if v not in (None, "")})
    if missing:
        raise BatchItemError(line, InvalidInputError(f"{op}: {missing[0]!r} is required"))
    for key, value in args.items():
        if key in _FLAGS and not isinstance(value, bool):
            raise BatchItemError(line, InvalidInputError(f"{op}: {key!r} must be true or false"))
        if key in _LISTS and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise BatchItemError(line, InvalidInputError(f"{op}: {key!r} must be a list of strings"))
        if key not in _FLAGS | _LISTS and value is not None and not isinstance(value, str):
            raise BatchItemError(line, InvalidInputError(f"{op}: {key!r} must be a string"))
    return BatchItem(line, str(op), args)


def parse_lines(text: str) -> list[BatchItem]:
    """JSON lines (blank lines skipped) into checked items; the first bad line is the error."""
    items: list[BatchItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise BatchItemError(number, InvalidInputError(f"not JSON ({exc.args[0].split(':')[0]})")) from None
        items.append(check_item(number, raw))
    return _bounded(items)


def parse_list(values: list[Any]) -> list[BatchItem]:
    """A list of item objects (the MCP tool's argument); positions count from 1."""
    return _bounded([check_item(position, raw) for position, raw in enumerate(values, start=1)])


def _bounded(items: list[BatchItem]) -> list[BatchItem]:
    if not items:
        raise InvalidInputError("the batch is empty: give one JSON object per line")
    if len(items) > MAX_ITEMS:
        raise InvalidInputError(f"the batch has {len(items)} items; at most {MAX_ITEMS} go in one commit")
    return items


def run_batch(home: Store, items: list[BatchItem]) -> BatchResult:
    """Every item through its verb inside one transaction: one commit, or nothing at all."""
    home.require()
    done: list[ItemResult] = []
    before = home.git.head_oid()
    with home.batch("batch") as txn:
        for item in items:
            try:
                result = _WRITERS[item.op](home, item.args)
            except BatchItemError:
                raise
            except GitmemError as exc:
                raise BatchItemError(item.line, exc) from None
            done.append(ItemResult(item.line, item.op, result.id, result.path, result.changed, result.note))
        written = sum(i.changed for i in done)
        txn.message = f"batch: {written} write{'s' if written != 1 else ''} of {len(items)}\n\n" + "\n".join(
            f"{i.op}: {i.id or i.path}" for i in done if i.changed)
    after = home.git.head_oid()
    return BatchResult(done, after if after != before else None)


# -- the writers: each calls the verb's library function on the home store ------------------------
def _home_only(home: Store, layer: str, topic: str | None, text: str) -> None:
    """Refuse an item the routing rules would send to another space (a batch is one store)."""
    from gitmem.verbs.routed import route_write

    target = route_write(home, None, layer, topic, text, home_unless_routed=True)
    if not target.home:
        raise InvalidInputError(f"routed to space {target.name}: a batch writes to one store; "
                                "write this one on its own (`gitmem remember --space ...`)")


def _home_id(home: Store, ref: str) -> str:
    from gitmem.verbs.routed import entry_ref

    found = entry_ref(home, ref, None)
    if not found.home:
        raise InvalidInputError(f"{ref} lives in space {found.space}: a batch writes to one store")
    return found.id


def _remember(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.entries import paths_field, remember

    options = dict(args)
    text, layer, paths = options.pop("text"), options.pop("layer"), options.pop("paths", None)
    _home_only(home, layer, options.get("topic"), f"{options.get('title') or ''}\n{text}")
    return remember(home, text, layer, extra_fields=paths_field(paths) if paths else None, **options)


def _supersede(home: Store, args: dict[str, Any]) -> WriteResult:
    """A new entry replacing `id`, in the old entry's scope, layer and (unless given) topic."""
    old = home.locate(_home_id(home, args["id"]))
    options = {k: v for k, v in args.items() if k != "id"}
    options.setdefault("topic", old.topic)
    workspace = None if old.scope == "global" else old.scope
    return _remember(home, {**options, "layer": old.layer, "supersedes": old.entry.id,
                            "scope": "global" if workspace is None else "workspace", "workspace": workspace})


def _decision(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.decisions import decision

    options = dict(args)
    statement, rationale = options.pop("statement"), options.pop("rationale")
    _home_only(home, "decisions", options.get("topic"), f"{statement}\n{options.get('context') or ''}\n{rationale}")
    options["alternatives"] = list(options.get("alternatives") or [])
    return decision(home, statement, rationale=rationale, **options)


def _codebase(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.entries import codebase

    options = dict(args)
    topic, text = options.pop("topic"), options.pop("text")
    _home_only(home, "codebase", topic, text)
    return codebase(home, topic, text, **options)


def _forget(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.entries import forget

    return forget(home, _home_id(home, args["id"]), undo=bool(args.get("undo")))


def _verify(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.entries import verify

    return verify(home, _home_id(home, args["id"]))


def _relate(home: Store, args: dict[str, Any]) -> WriteResult:
    from gitmem.verbs.relations import relate

    _home_id(home, args["id"])
    _home_id(home, args["other"])
    return relate(home, args["id"], args["type"], args["other"])


_WRITERS: dict[str, Callable[[Store, dict[str, Any]], WriteResult]] = {
    "remember": _remember, "supersede": _supersede, "decision": _decision, "codebase": _codebase,
    "forget": _forget, "verify": _verify, "relate": _relate,
}
