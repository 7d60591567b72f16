"""The context card: what an agent is handed at the start of a session, within a budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError
from gitmem.format import layers as L
from gitmem.format.entry import IMPORTANCE_RANK
from gitmem.format.freshness import grade_working
from gitmem.secrets.mask import hide_all, hide_secrets
from gitmem.store import catchup
from gitmem.store.settings import context_max_chars
from gitmem.verbs.reads import list_entries, read_or_skip, skipped_note
from gitmem.verbs.workfiles import working_updated

if TYPE_CHECKING:
    from datetime import date
    from pathlib import Path

    from gitmem.store.store import Store
    from gitmem.store.summaries import EntrySummary, GitView

DEFAULT_MAX_CHARS = 6000
MAIN_FOOTER = (
    "Writing nothing is a correct outcome. Record only what a later session needs "
    "(`gitmem remember`, `gitmem decision`, `gitmem state`, `gitmem working`); never write to fill a gap."
)
SUBAGENT_FOOTER = (
    "You are a subagent: read and search memory freely, but do not write it. "
    "Report what you learned to your caller; recording is the main agent's job."
)


@dataclass
class Section:
    name: str
    lines: list[str]
    share: float = 1.0  # the most of the card's budget this section may take
    cut_line: str = ""  # shown in place of the lines cut to fit; "{n}" is how many


@dataclass
class Card:
    workspace: str | None
    sections: list[Section] = field(default_factory=list)
    text: str = ""
    truncated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files that could not be read

    def as_json(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "text": self.text,
            "sections": [{"name": s.name, "lines": s.lines} for s in self.sections],
            "truncated": self.truncated,
            "skipped": self.skipped,
        }


def skipped_files(store: Store, workspace: str | None, scopes: list[str]) -> list[str]:
    """Memory files the card's scopes hold that cannot be read (they are left out of it)."""
    found = set(store.catalog.unreadable(scopes))
    if workspace is not None:
        for layer in ("state", "working"):
            read_or_skip(store, L.single_file_path(workspace, layer), found)
    return sorted(found)


# A provider returns the section for a scope list, or None when it has nothing to say.
Provider = Callable[["Store", str | None, list[str]], Section | None]


RUNTIME_SHARE = 0.6  # the hot memory may fill most of the card, never all of it


def runtime_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    """The hot runtime memory: USER.md items first, then MEMORY.md items visible on the
    workspace's branch, each under its metadata line (ages in whole days)."""
    from gitmem.runtime.model import metadata_line
    from gitmem.runtime.reads import snapshot

    pairs, notes = snapshot(store, scopes)
    if not pairs and not notes:
        return None
    now = store.now()
    lines = ["_USER.md (the user) and MEMORY.md (standing project notes); metadata in brackets is not"
             " part of the text._"]
    lines += [f"- note: {note}" for note in notes]
    lines += [f"- {metadata_line(item, now)}\n  {item.content}" for _scope, item in pairs]
    return Section("Runtime memory", lines, share=RUNTIME_SHARE,
                   cut_line="- _{n} more runtime item(s) not shown: `gitmem runtime show`_")


def state_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    if workspace is None:
        return None
    from gitmem.format.freshness import grade

    relpath = L.single_file_path(workspace, "state")
    unreadable: set[str] = set()
    document = read_or_skip(store, relpath, unreadable)
    if unreadable:
        return Section("Workspace state", [f"- {relpath} cannot be read (`gitmem check` says why)"])
    if document is None or not document.entries:
        return Section("Workspace state", ["- nothing recorded yet (`gitmem state SECTION CONTENT`)"])
    lines = []
    for entry in document.entries:
        mark = grade(entry.fields, "volatile", store.today()).label()
        summary = " ".join(hide_secrets(entry.body).split())[:300]  # masked before the cut
        lines.append(f"- **{entry.title}**{' ' + mark if mark else ''}: {summary}")
    return Section("Workspace state", lines)


def working_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    if workspace is None:
        return None
    relpath = L.single_file_path(workspace, "working")
    unreadable: set[str] = set()
    document = read_or_skip(store, relpath, unreadable)
    if unreadable:
        return Section("Working memory", [f"- {relpath} cannot be read (`gitmem check` says why)"])
    if document is None or not document.entries:
        return Section("Working memory", ["- nothing recorded yet: this workspace has no task on file (`gitmem working`)"])
    fresh = grade_working(working_updated(document), store.now())
    age = f" (updated {fresh.age_hours:.0f}h ago, {fresh.grade})" if fresh.age_hours is not None else ""
    lines = [f"_Your own notes for this workspace{age}._"]
    for entry in document.entries:
        lines.append(f"- **{entry.title}**:")
        lines.extend(f"  {line}" for line in entry.body.split("\n") if line.strip())
    return Section("Working memory", lines)


def _layer_section(title: str, layer: str, limit: int) -> Provider:
    def provider(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
        lines = ranked_lines(store, scopes, [layer], limit)
        return Section(title, lines) if lines else None

    return provider


def ranked_lines(store: Store, scopes: list[str], layers: list[str], limit: int,
                 importance: list[str] | None = None) -> list[str]:
    """The first `limit` live entries of these layers and scopes, of the store and its active
    spaces, one card line each: most important first, then most recently verified, then by Id
    (then layer, space, scope and file order).

    Read from the stat-checked summaries (gitmem.store.summaries): an unchanged file costs a
    stat, so the card does not parse every file of its layers."""
    from gitmem.format.freshness import grade
    from gitmem.spaces.lookup import qualify
    from gitmem.spaces.mounts import reading_targets

    today = store.today()
    found = []
    for position, (name, target) in enumerate(reading_targets(store, None)[0]):
        if target is not store:
            with target.reading():
                target.catch_up_catalog()
        files = [p for layer in layers for scope in scopes for p in target.catalog.files(scope, layer)]
        rows, _skipped = target.summaries.live_entries(files, scopes, layers, today,
                                                       importance=importance, limit=limit)
        windows = target.registry.freshness_windows()
        found += [(summary_rank(row, today, layers, position), row,
                   qualify(name, target is store, row.id), windows) for row in rows]
    found.sort(key=lambda item: item[0])
    lines = []
    for _rank, row, ref, windows in found[:limit]:
        label = grade(row.fields, row.volatility, today, windows).label()
        where = ref or f"{row.path}:{row.line}, no Id yet"
        lines.append(f"- {row.title}{' ' + label if label else ''} ({where})")
    return lines


def summary_rank(row: EntrySummary, today: date, layers: list[str],
                  position: int) -> tuple[int, int, str, int, int]:
    """The card's order: importance, then age, then Id, then layer, then space."""
    from gitmem.format.freshness import parse_day

    basis = parse_day(row.fields.get("Verified", "")) or parse_day(row.fields.get("Created", ""))
    age = (today - basis).days if basis else 10**6
    importance = IMPORTANCE_RANK.get(row.fields.get("Importance", "normal"), 1)
    return -importance, age, row.id or "", layers.index(row.layer), position


def codebase_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    if workspace is None:
        return None
    topics = store.catalog.topics(workspace, "codebase")
    if not topics:
        return None
    return Section("Mapped codebase topics", [", ".join(t.title for t in topics)])


def critical_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    lines = ranked_lines(store, scopes, ["semantic", "procedural", "episodic"], 20,
                         importance=["critical", "high"])
    return Section("Critical facts", lines) if lines else None


def _scope_of(relpath: str) -> str:
    head, _, rest = relpath.partition("/")
    return head if head == L.GLOBAL else rest.partition("/")[0] if head == "workspaces" else ""


def conflict_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    from gitmem.store.tree import conflicted_files

    lines = [
        f"- {relpath} holds an unresolved conflict: both versions are kept (`gitmem conflicts`)"
        if relpath.endswith(".json") else
        f"- {relpath} holds unresolved conflict markers: both versions are kept, resolve by hand"
        for relpath in conflicted_files(store.root, store.summaries.conflicted)
        if _scope_of(relpath) in scopes
    ]
    return Section("Conflicts", lines) if lines else None


def documents_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    """Active project documents of the scopes, newest first (read one with `gitmem doc show`)."""
    from gitmem.documents.verbs import list_documents

    rows = [row for scope in scopes
            for row in (list_documents(store, scope="global") if scope == L.GLOBAL
                        else list_documents(store, scope="workspace", workspace=scope))]
    if not rows:
        return None
    lines = [f"- {r['id']} {r['title']}" + (f" — {r['description']}" if r["description"] else "")
             for r in rows]
    return Section("Project documents", lines,
                   cut_line="- _{n} more active document(s): `gitmem doc list`_")


def suspect_section(store: Store, workspace: str | None, scopes: list[str]) -> Section | None:
    """Facts whose code changed in the workspace's repository after they were verified."""
    from gitmem.verbs.suspects import suspect_lines

    lines = suspect_lines(store, workspace, lambda: list_entries(store, scopes=[workspace or ""]))
    return Section("Suspect: code changed since verified", lines) if lines else None


PROVIDERS: list[Provider] = [
    conflict_section,
    runtime_section,
    state_section,
    working_section,
    suspect_section,
    _layer_section("Decisions in force", "decisions", 15),
    _layer_section("Learnings", "learnings", 15),
    codebase_section,
    critical_section,
    documents_section,
]


def build_card(
    store: Store,
    *,
    workspace: str | None,
    max_chars: int = DEFAULT_MAX_CHARS,
    subagent: bool = False,
) -> Card:
    """Assemble sections in priority order until the budget is spent; say what was cut."""
    if max_chars < 200:
        raise InvalidInputError("--max-chars must be at least 200")
    scopes = [workspace, L.GLOBAL] if workspace else [L.GLOBAL]
    card = Card(workspace)
    header = f"## gitmem memory — {'workspace ' + workspace if workspace else 'global'} ({store.today().isoformat()})"
    footer = SUBAGENT_FOOTER if subagent else MAIN_FOOTER
    cut_note = "_Cut to fit: {names} omitted. Absence here is not deletion — use `gitmem search`._"
    budget = max_chars - len(header) - len(footer) - len(cut_note) - 120
    parts = [header]
    # One catch-up (one git status) for the whole card, and the sections ask about the same
    # files: each is looked at once, and not at all when git says it is as committed.
    with catchup.one_look(store) as look, store.summaries.batch(_git_view(store, look)):
        for provider in PROVIDERS:
            section = provider(store, workspace, scopes)
            if section is None:
                continue
            # Stored secrets are never shown: one pass over the lines not masked lately (a
            # card is built again and again from mostly the same lines).
            section.lines = hide_all(section.lines)
            block = "\n".join([f"### {section.name}", *section.lines])
            room = min(budget, int(max_chars * section.share))
            if len(block) + 2 > room:
                kept = _fit_lines(section, room)
                if kept is None:
                    card.truncated.append(section.name)
                    continue
                card.truncated.append(section.name)
                section, block = kept
            budget -= len(block) + 2
            card.sections.append(section)
            parts.append(block)
    if card.truncated:
        parts.append(cut_note.format(names=", ".join(card.truncated)))
    card.skipped = skipped_files(store, workspace, scopes)
    if card.skipped:
        parts.append(f"_{skipped_note(card.skipped)}._")
    parts.append(footer)
    card.text = "\n\n".join(parts) + "\n"
    return card


def _git_view(store: Store, look: catchup.Look | None) -> GitView | None:
    """What the card's catch-up learned from git, for the summaries (None: they stat every file)."""
    from gitmem.store.summaries import GitView

    if look is None or look.head is None:
        return None
    head = look.head
    return GitView(head, look.dirty, store.git.changed_between,
                   lambda relpath: store.git.read_file_at(head, relpath))


def card_for(store: Store, *, cwd: Path | None = None, max_chars: int | None = None,
             subagent: bool = False) -> Card:
    """The card for the workspace of `cwd` (else the store's own), or the global card when no
    workspace is known; `max_chars` defaults to the store's contextMaxChars setting."""
    if cwd is not None:
        store.cwd = cwd.resolve()  # the workspace's git branch decides what runtime memory shows
    workspace = None
    try:
        workspace = store.resolve_workspace(cwd=cwd.resolve() if cwd else None)
    except InvalidInputError:
        if store.workspace_flag:
            raise
    budget = max_chars or context_max_chars(store.registry)
    return build_card(store, workspace=workspace, max_chars=budget, subagent=subagent)


def _fit_lines(section: Section, budget: int) -> tuple[Section, str] | None:
    """As many leading lines of a section as fit (with its cut line), or None when none does."""
    lines: list[str] = []
    size = len(section.name) + 5 + len(section.cut_line) + 8
    for line in section.lines:
        if size + len(line) + 1 > budget:
            break
        lines.append(line)
        size += len(line) + 1
    if not lines:
        return None
    if section.cut_line:
        lines.append(section.cut_line.replace("{n}", str(len(section.lines) - len(lines))))
    trimmed = Section(section.name, lines, section.share, section.cut_line)
    return trimmed, "\n".join([f"### {section.name}", *lines])
