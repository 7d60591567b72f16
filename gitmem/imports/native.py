"""Claude Code's own auto memory kept in step with the store, both ways (docs/decisions/0038).

One pass for a project: what Claude Code (or a person) wrote in the project's auto-memory folder
is imported as entries of the project's workspace through the one import engine (idempotent by
Source/Import-hash), each file behind the secret gate on its own; then gitmem's block of
MEMORY.md is rendered again from the store (gitmem/imports/nativeblock.py). The last rendered
block is kept in state/native-memory.json, so a line added or changed inside it by hand is told
from gitmem's own text and imported, never overwritten. That file also lists the projects that
turned native memory on: machine-local, since the folders differ from machine to machine.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError, InvalidInputError
from gitmem.fsio import file_lock, load_json_object, write_json_atomic, write_text_atomic
from gitmem.imports import nativeblock as nb
from gitmem.imports.claude_code import INDEX, memory_file, memory_folder, memory_topic
from gitmem.imports.engine import TOPIC_LAYERS, ImportOptions, project_workspace, run_import
from gitmem.imports.instructions import InstructionReader
from gitmem.notes.markdown import markdown_files
from gitmem.notes.model import Note, ReadContext, SourceFile
from gitmem.secrets.scan import find_secrets
from gitmem.store.store import Store
from gitmem.store.workspaces import project_folder

STATE_FILE = "state/native-memory.json"
LOCK_FILE = "state/native-memory.lock"
LOCK_SECONDS = 10.0  # under the hook's own timeout: a pass under way elsewhere is waited for, briefly
GLOBAL_IMPORTANCE = ["critical", "high"]  # the global entries that matter in every project
HELD = ("added", "updated", "unchanged", "kept-edit", "duplicate")  # a live entry Claude Code holds


@dataclass
class PassReport:
    """What one pass did for one project."""

    project: Path
    path: Path  # the MEMORY.md rendered
    workspace: str = ""
    counts: dict[str, int] = field(default_factory=dict)  # import actions
    listed: int = 0
    total: int = 0
    refused: list[str] = field(default_factory=list)  # files left out, and why
    written: bool = False
    forgotten: list[str] = field(default_factory=list)  # Ids whose line was deleted from the block
    note: str = ""  # why deleted lines were not read as forgetting (the block is rendered again)

    def line(self) -> str:
        imported = ", ".join(f"{n} {what}" for what, n in sorted(self.counts.items())) or "nothing"
        refused = f"; left out: {'; '.join(self.refused)}" if self.refused else ""
        forgot = (f"; forgot {', '.join(self.forgotten)} (deleted from MEMORY.md; "
                  "`gitmem forget --undo ID` brings one back)") if self.forgotten else ""
        note = f"; {self.note}" if self.note else ""
        return (f"native memory {self.path}: imported {imported}; lists {self.listed} of "
                f"{self.total} entries of {self.workspace}{refused}{forgot}{note}")


# -- the machine-local list ----------------------------------------------------------------------
def _load(root: Path) -> dict[str, dict[str, Any]]:
    try:
        data = load_json_object(root / STATE_FILE)
    except (OSError, ValueError):
        return {}
    projects = data.get("projects")
    return {k: v for k, v in projects.items() if isinstance(v, dict)} if isinstance(projects, dict) else {}


def _save(root: Path, projects: dict[str, dict[str, Any]]) -> None:
    write_json_atomic(root / STATE_FILE, {"projects": projects})


def enabled_projects(root: Path) -> list[Path]:
    """The projects of this machine whose auto memory gitmem keeps in step."""
    return [Path(p) for p in sorted(_load(root))]


def is_enabled(root: Path, project: Path) -> bool:
    return str(project_folder(project)) in _load(root)


def disable(root: Path, project: Path) -> None:
    """Take the project off the list (its MEMORY.md is left to `remove_block`)."""
    with file_lock(root / LOCK_FILE, LOCK_SECONDS, "the native memory pass"):
        projects = _load(root)
        if projects.pop(str(project_folder(project)), None) is not None:
            _save(root, projects)


# -- one pass --------------------------------------------------------------------------------------
def run_pass(store: Store, project: Path, home: Path) -> PassReport:
    """Import the project's auto-memory folder, then render gitmem's block of its MEMORY.md (the
    project joins the list of this machine)."""
    project = project_folder(project)
    folder = memory_folder(home, project)
    report = PassReport(project, folder / INDEX)
    with file_lock(store.root / LOCK_FILE, LOCK_SECONDS, "the native memory pass"):
        projects = _load(store.root)
        record = projects.get(str(project), {})
        rendered = record.get("rendered") if isinstance(record.get("rendered"), list) else None
        text = _current(report.path)
        cut = nb.split(text)
        hand = nb.hand_lines(cut.block or [], rendered)
        _forget_deleted(store, cut.block, rendered, report)
        here = _inbound(store, project, folder, home, hand, record, report)
        report.workspace = project_workspace(store, project)
        rows, report.total = ranked_rows(store, report.workspace, here)
        block = nb.render(rows, report.workspace, nb.outside(text), report.total)
        report.listed = len(block) - nb.FRAME_LINES
        refused_here = [line for _i, line in hand] if any(
            r.startswith(f"{INDEX}:") for r in report.refused) else []
        new = nb.placed(text, [*block, *refused_here])  # refused lines: kept, outside the block
        if new != text:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(report.path, new)
            report.written = True
        wanted = {"memory": str(folder), "rendered": block[1:-1], "here": sorted(here),
                  "refused": report.refused, "folder": fingerprint(folder)}
        if record != wanted:
            projects[str(project)] = wanted
            _save(store.root, projects)
    return report


def _forget_deleted(store: Store, block: list[str] | None, rendered: list[str] | None,
                    report: PassReport) -> None:
    """Forget (as `gitmem forget` does: undoable) each entry whose line was deleted from the
    block since the last rendering, when the entry is still as that rendering showed it."""
    from gitmem.verbs.entries import update_entry

    gone, report.note = nb.deleted_rows(block, rendered)
    for entry_id, line in gone:
        try:
            entry = store.locate(entry_id).entry
        except GitmemError:
            continue  # gone or moved since: nothing to forget here
        if entry.is_forgotten or nb.entry_line(nb.Row(entry_id, entry.title)) != line:
            continue  # changed since it was rendered: the deletion was of another text
        update_entry(store, "forget (deleted from Claude Code's MEMORY.md)", entry_id,
                     Forgotten=store.today().isoformat())
        report.forgotten.append(entry_id)


def fingerprint(folder: Path) -> str:
    """The folder's Markdown files by name, size and modification time: what tells a pass that
    nothing was written there since the last one (and spares it the import)."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in markdown_files(folder):
            stat = path.stat()
            digest.update(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:24]


def _inbound(store: Store, project: Path, folder: Path, home: Path, hand: list[tuple[int, str]],
             record: dict[str, Any], report: PassReport) -> set[str]:
    """Import the folder (unless nothing changed there since the last pass); the Ids of the
    live entries whose text Claude Code holds there now."""
    if (not hand and record.get("folder") == fingerprint(folder)
            and isinstance(record.get("here"), list) and isinstance(record.get("refused"), list)):
        report.refused = [str(r) for r in record["refused"]]
        return {str(i) for i in record["here"]}
    sources = _sources(project, folder, home, hand, report)
    imported = run_import(store, ImportOptions("claude-code"), lambda: sources)
    report.counts = {k: v for k, v in imported.counts().items() if k != "unchanged"}
    hand_where = {f"{s.path}:{n.line}" for s in sources for n in s.notes
                  if n.anchor.startswith("gitmem-block/")}
    return {a.id for a in imported.actions if a.id and a.action in HELD and a.source not in hand_where}


def _current(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path} ({exc}); fix or move it, then run again") from None


def _sources(project: Path, folder: Path, home: Path, hand: list[tuple[int, str]],
             report: PassReport) -> list[SourceFile]:
    """The folder's files as the import reads them, each one a likely secret or an unreadable
    shape refuses left out (named in the report) so the others still come in."""
    if not folder.is_dir():
        return []
    reader = InstructionReader("claude-code", project, ReadContext(home=home), follow=True)
    found: list[SourceFile] = []
    for path in markdown_files(folder):
        try:
            files = memory_file(reader, path, lambda text: _hand_notes(text, hand))
        except GitmemError as exc:
            report.refused.append(f"{path.name}: {exc}")
            continue
        for source in files:
            secrets = find_secrets(source.text, path=source.path)
            if secrets:
                report.refused.append(f"{path.name}:{secrets[0].line}: holds a likely secret "
                                      f"({secrets[0].kind}); nothing of it imported")
            else:
                found.append(source)
    return found


def _hand_notes(text: str, hand: list[tuple[int, str]]) -> list[Note]:
    """The block's hand-written lines as notes (anchored by their text, found again unchanged)."""
    cut = nb.split(text)
    first = len(cut.before) + 2  # the block's first line, counted from 1
    notes = []
    for index, line in hand:
        body = nb.without_id(line)
        if not body:
            continue
        anchor = "gitmem-block/" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
        was = nb.rendered_id(line)  # an edited line: the entry it was rendered from
        notes.append(Note(anchor=anchor, title=body.split("\n")[0][:80], body=body,
                          topic=memory_topic(Path(INDEX)), line=first + index,
                          fields={"Related": f"temporal:{was}"} if was else {}))
    return notes


def ranked_rows(store: Store, workspace: str, leave_out: set[str],
                want: int = nb.WINDOW_LINES) -> tuple[list[nb.Row], int]:
    """The first `want` of the workspace's live entries and the global ones that matter, most
    important and freshest first (the context card's order), less those in `leave_out`; and how
    many there are in all (counted, not read: a large workspace decodes only what can be shown)."""
    from gitmem.format import layers as L
    from gitmem.verbs.context import summary_rank

    with store.reading():
        store.catch_up_catalog()
    today, layers = store.today(), list(TOPIC_LAYERS)
    mine = [p for layer in layers for p in store.catalog.files(workspace, layer)]
    theirs = [p for layer in layers for p in store.catalog.files(L.GLOBAL, layer)]
    found, _skipped = store.summaries.live_entries(mine, [workspace], layers, today,
                                                   limit=want + len(leave_out))
    grades, _skipped = store.summaries.live_grades(mine, [workspace], layers, today,
                                                   store.registry.freshness_windows())
    shared, _skipped = store.summaries.live_entries(theirs, [L.GLOBAL], layers, today,
                                                    importance=GLOBAL_IMPORTANCE)
    total = sum(sum(per.values()) for per in grades.values()) + len(shared) - len(leave_out)
    rows = sorted([*found, *shared], key=lambda row: summary_rank(row, today, layers, 0))
    kept = [nb.Row(row.id, row.title) for row in rows if row.id and row.id not in leave_out]
    return kept[:want], max(total, len(kept[:want]))


# -- taking it out -------------------------------------------------------------------------------
def without_block(home: Path, project: Path) -> tuple[Path, str | None, str | None]:
    """(MEMORY.md, what it holds, what it holds without gitmem's block: None when nothing else
    is left, as Claude Code would have no such file)."""
    path = memory_folder(home, project_folder(project)) / INDEX
    text = _current(path) if path.is_file() else None
    if text is None:
        return path, None, None
    kept = nb.outside(text)
    return path, text, kept if kept.strip() else None
