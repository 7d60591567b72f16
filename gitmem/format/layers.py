"""The layer table, where each layer's files live, ids, and the generated layer index files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from gitmem.errors import InvalidInputError

Shape = Literal["topics", "single"]


@dataclass(frozen=True)
class LayerSpec:
    """What a layer is: id abbreviation, where it may live, and its file shape."""

    name: str
    abbr: str
    global_ok: bool
    workspace_ok: bool
    shape: Shape
    indexed: bool = True
    description: str = ""


LAYERS: dict[str, LayerSpec] = {
    spec.name: spec
    for spec in (
        LayerSpec("semantic", "sem", True, True, "topics",
                  description="facts: how things are, configuration, conventions"),
        LayerSpec("episodic", "epi", True, True, "topics",
                  description="events: what happened and when"),
        LayerSpec("procedural", "pro", True, True, "topics",
                  description="how-tos: steps that work"),
        LayerSpec("learnings", "lrn", True, True, "topics",
                  description="lessons: mistakes not to repeat, insights"),
        LayerSpec("decisions", "dec", True, True, "topics",
                  description="settled choices with context, rationale, alternatives"),
        LayerSpec("codebase", "cod", False, True, "topics",
                  description="repository map: one topic per path or subsystem"),
        LayerSpec("history", "his", False, True, "topics",
                  description="commit history: one topic per calendar day"),
        LayerSpec("state", "", False, True, "single",
                  description="what the repository is right now; sections replaced"),
        LayerSpec("working", "", False, True, "single", indexed=False,
                  description="the agent's own head: task, plan, recent activity"),
        LayerSpec("junk", "", True, True, "single", indexed=False,
                  description="archaeology; never indexed"),
    )
}
TOPIC_LAYERS: tuple[str, ...] = tuple(n for n, s in LAYERS.items() if s.shape == "topics")
ABBR_TO_LAYER: dict[str, str] = {s.abbr: n for n, s in LAYERS.items() if s.abbr}
ID_RE = re.compile(r"^(?P<scope>[a-z0-9][a-z0-9-]*)-(?P<abbr>sem|epi|pro|lrn|dec|cod|his)-(?P<num>\d{4,})$")
GLOBAL = "global"
SCOPE_ROOTS = (GLOBAL, "workspaces")  # the folders every scope lives under
# Id numbers past this are not well-formed: no store holds a billion entries in one layer, and
# the catalog keeps numbers in 64-bit integers.
MAX_ID_NUMBER = 999_999_999
# File names Windows refuses (with any extension): a folder or topic file named so cannot be
# checked out there.
WINDOWS_RESERVED: frozenset[str] = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{p}{n}" for p in ("com", "lpt") for n in "0123456789"]
)
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def layer_spec(name: str) -> LayerSpec:
    """The spec of a layer by name; a clear error for unknown names."""
    try:
        return LAYERS[name]
    except KeyError:
        known = ", ".join(LAYERS)
        raise InvalidInputError(f"unknown layer {name!r} (known: {known})") from None


def check_layer_scope(layer: str, scope_key: str) -> LayerSpec:
    """Reject a layer used in a scope it does not belong to (e.g. codebase in global)."""
    spec = layer_spec(layer)
    if scope_key == GLOBAL and not spec.global_ok:
        raise InvalidInputError(f"layer {layer!r} exists only in a workspace; pass --workspace")
    return spec


def workspace_key_problem(key: str) -> str | None:
    """Why `key` cannot name a workspace, or None when it can."""
    if key == GLOBAL:
        return "'global' is reserved: it names the global scope"
    if not _KEY_RE.match(key):
        return "use 1-64 of a-z, 0-9 and '-', starting with a letter or digit"
    if key in WINDOWS_RESERVED:
        return f"{key!r} is a reserved file name on Windows"
    return None


def is_workspace_key(key: str) -> bool:
    return workspace_key_problem(key) is None


_SLUG_DROP = re.compile(r"[^\w]+", re.UNICODE)
SLUG_MAX = 80


def canonical_slug(name: str) -> str:
    """The file name (without .md) gitmem gives a topic: lower-case words joined by '-'."""
    slug = _SLUG_DROP.sub("-", name.strip().lower()).strip("-_")
    return slug[:SLUG_MAX].strip("-_")


def topic_name_problem(slug: str) -> str | None:
    """Why a topic file name (without .md) cannot be checked out everywhere, or None."""
    stem = slug.split(".", 1)[0].rstrip(" ").lower()
    if stem in WINDOWS_RESERVED:
        return f"{slug!r} is a reserved file name on Windows"
    if any(ch in '<>:"|?*\\' or ord(ch) < 32 for ch in slug) or slug.endswith((".", " ")):
        return f"{slug!r} holds characters Windows does not allow in file names"
    return None


def format_id(scope_key: str, layer: str, number: int) -> str:
    if number > MAX_ID_NUMBER:
        raise InvalidInputError(
            f"cannot number a new {layer} entry of {scope_key}: an Id past {MAX_ID_NUMBER} is taken"
        )
    return f"{scope_key}-{layer_spec(layer).abbr}-{number:04d}"


@dataclass(frozen=True)
class ParsedId:
    scope: str
    layer: str
    number: int


def parse_id(entry_id: str) -> ParsedId | None:
    """Split `<scope>-<abbr>-<NNNN>`; None when it is not a well-formed id."""
    match = ID_RE.match(entry_id.strip())
    if not match or len(match["num"].lstrip("0")) > len(str(MAX_ID_NUMBER)):
        return None
    number = int(match["num"])
    if number > MAX_ID_NUMBER:
        return None
    return ParsedId(match["scope"], ABBR_TO_LAYER[match["abbr"]], number)


def scope_dir(scope_key: str) -> str:
    """Repo-relative folder of a scope: `global` or `workspaces/<key>`."""
    return GLOBAL if scope_key == GLOBAL else f"workspaces/{scope_key}"


def layer_index_path(scope_key: str, layer: str) -> str:
    return f"{scope_dir(scope_key)}/{layer}.md"


def topic_dir(scope_key: str, layer: str) -> str:
    return f"{scope_dir(scope_key)}/{layer}"


def topic_path(scope_key: str, layer: str, slug: str) -> str:
    return f"{topic_dir(scope_key, layer)}/{slug}.md"


def single_file_path(scope_key: str, layer: str) -> str:
    return f"{scope_dir(scope_key)}/{layer}.md"


@dataclass(frozen=True)
class FileRole:
    """What a repo-relative path is in the store layout."""

    kind: Literal["topic", "layer-index", "single", "scope-index", "other"]
    scope: str = ""
    layer: str = ""
    slug: str = ""


_WORKSPACE_KEY = r"[a-z0-9][a-z0-9-]{0,63}"
_TOPIC_FILE_RE = re.compile(
    rf"^(?:(?P<g>global)|workspaces/(?P<w>{_WORKSPACE_KEY}))/(?P<layer>[a-z]+)/(?P<slug>[^/]+)\.md$"
)
_LAYER_FILE_RE = re.compile(
    rf"^(?:(?P<g>global)|workspaces/(?P<w>{_WORKSPACE_KEY}))/(?P<name>[A-Za-z]+)\.md$"
)


def classify_path(relpath: str) -> FileRole:
    """Tell whether a repo-relative posix path is a topic file, a layer index, and so on.

    A workspace folder whose name is not a valid key (`global`, `Bad Name`, `con`) holds no
    memory files, and hidden files (editor locks such as `.#deploy.md`) are not topic files."""
    match = _TOPIC_FILE_RE.match(relpath) or _LAYER_FILE_RE.match(relpath)
    if match and match["w"] is not None and not is_workspace_key(match["w"]):
        return FileRole("other")
    match = _TOPIC_FILE_RE.match(relpath)
    if match and match["layer"] in TOPIC_LAYERS and not match["slug"].startswith("."):
        scope = match["w"] or GLOBAL
        if LAYERS[match["layer"]].global_ok or scope != GLOBAL:
            return FileRole("topic", scope, match["layer"], match["slug"])
    match = _LAYER_FILE_RE.match(relpath)
    if match:
        scope = match["w"] or GLOBAL
        name = match["name"]
        if name == "INDEX":
            return FileRole("scope-index", scope)
        if name in LAYERS:
            spec = LAYERS[name]
            kind: Literal["layer-index", "single"] = (
                "layer-index" if spec.shape == "topics" else "single"
            )
            return FileRole(kind, scope, name)
    return FileRole("other")


def is_memory_file(relpath: str) -> bool:
    """Topic files and single-file layers: the files people and agents write entries into."""
    return classify_path(relpath).kind in ("topic", "single")


class TopicSummary(NamedTuple):
    """One line of a layer index (a tuple: a layer index of a large store lists thousands of
    topics on every write, and a frozen dataclass costs several times as much to make)."""

    slug: str
    title: str
    entries: int
    updated: str


def render_layer_index(scope_key: str, layer: str, topics: list[TopicSummary]) -> str:
    """The generated layer file: one line per topic, sorted by slug; deterministic."""
    heading = f"{layer.capitalize()} — {'global' if scope_key == GLOBAL else scope_key}"
    lines = [
        f"# {heading}",
        "",
        f"Topic index, generated by gitmem from the files under {layer}/ after every write.",
        "Do not edit: add or change entries in the topic files instead.",
        "",
    ]
    for topic in sorted(topics, key=lambda t: t.slug):
        noun = "entry" if topic.entries == 1 else "entries"
        updated = f", updated {topic.updated}" if topic.updated else ""
        title = topic.title.replace("]", "\\]")
        lines.append(f"- [{title}]({layer}/{topic.slug}.md) — {topic.entries} {noun}{updated}")
    if not topics:
        lines.append("_No topics yet._")
    return "\n".join(lines) + "\n"
