"""The agent hooks: the context card at session start, a capture when the session compacts or
ends, the entries most relevant to a prompt. Each reads the hook payload (hookio) and never makes
the agent wait on anything slow: the capture runs in a detached background process.

A hook never fails the agent's session: what goes wrong is said in one line (in the context for
the model, or in logs/memory.log for the background capture) and the hook exits 0.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gitmem import caller
from gitmem.integrate.hookio import HookInput, additional_context

if TYPE_CHECKING:
    from gitmem.store.store import Store
    from gitmem.verbs.context import Card

PROMPT_HITS = 3
SNIPPET_CHARS = 240


def open_for(payload: HookInput, root: str | None, workspace: str | None) -> Store:
    """The store, with the workspace resolved from the session's folder."""
    from gitmem.store.store import open_store

    return open_store(root, workspace=workspace, cwd=payload.folder)


@contextmanager
def opened(payload: HookInput, root: str | None, workspace: str | None) -> Iterator[Store]:
    """open_for, closed afterwards; in the warm server the store borrows the repository,
    catalog and index kept there and gives them back when the call ends, as the CLI's own
    commands do (closing them would make every hook open the index afresh)."""
    from gitmem.store import warm

    store = open_for(payload, root, workspace)
    warm.adopt(store)
    try:
        yield store
    finally:
        if not warm.enabled():
            store.close()


def context_hook(payload: HookInput, root: str | None, workspace: str | None, *,
                 subagent: bool = False, native: bool = False) -> str:
    """The hook output carrying the context card (the subagent card for a subagent); with
    `native`, the project's Claude Code auto memory is kept in step first (imports/native.py)."""
    from gitmem.verbs.context import card_for

    with opened(payload, root, workspace) as store:
        note = native_pass(store, payload) if native and not subagent else ""
        card = card_for(store, cwd=payload.folder, subagent=subagent)
        text = card.text.rstrip("\n") + (f"\n\n{note}" if note else "")
        if not subagent and payload.session_id:  # a subagent's payload names its caller's session
            text = _recorded(store, payload, card, text)
    default = "SubagentStart" if subagent else "SessionStart"
    return additional_context(payload.event or default, text)


def native_pass(store: Store, payload: HookInput) -> str:
    """One native-memory pass for the session's project: '' when it went well, else the one line
    that says why MEMORY.md was not brought up to date (the card is never held back by it)."""
    from pathlib import Path

    from gitmem.errors import GitmemError
    from gitmem.imports.native import run_pass

    if payload.folder is None:
        return ""
    try:
        store.resolve_workspace(None, cwd=payload.folder)
    except GitmemError:
        return ""  # a folder of no workspace (a user-level hook in ~, say): nothing to keep in step
    try:
        report = run_pass(store, payload.folder, Path(caller.home()))
    except GitmemError as exc:
        return f"gitmem: Claude Code's MEMORY.md was not brought up to date: {exc}"
    if report.refused:
        return f"gitmem: {report.line()}"
    return ""


def _recorded(store: Store, payload: HookInput, card: Card, text: str) -> str:
    """Record the card injected into the session; after a compaction, the card says which of
    its sections changed since the session's last one (integrate/reinject.py)."""
    from gitmem.integrate import reinject

    if payload.source == "compact":
        note = reinject.compact_note(reinject.changes_since(card, reinject.last_card(store.root, payload.session_id)))
        if note:
            head, _, rest = text.partition("\n\n")
            text = f"{head}\n\n{note}\n\n{rest}"
    reinject.record_card(store.root, payload.session_id, card)
    return text


def search_hook(payload: HookInput, root: str | None, workspace: str | None) -> str:
    """The hook output carrying the few entries most relevant to the prompt, and what changed in
    the card when the cadence context.refreshMinutes is due ('' when neither has anything)."""
    from gitmem.verbs.search import search

    with opened(payload, root, workspace) as store:
        hits = search(store, payload.prompt, limit=PROMPT_HITS) if payload.prompt.strip() else []
        changed = _card_changes(store, payload)
    parts = [changed] if changed else []
    if hits:
        lines = ["gitmem entries that may bear on this prompt (verify before relying on them):"]
        for hit in hits:
            snippet = " ".join(str(hit["snippet"]).split())[:SNIPPET_CHARS]
            lines.append(f"- {hit['title']} ({hit.get('ref') or hit['id']}, {hit['path']}:{hit['line']},"
                         f" {hit['freshness']}): {snippet}")
        parts.append("\n".join(lines))
    if not parts:
        return ""
    return additional_context(payload.event or "UserPromptSubmit", "\n\n".join(parts))


def _card_changes(store: Store, payload: HookInput) -> str:
    """What changed in the session's card since its last one, when the cadence is due (else '');
    the first prompt of a session whose card was never recorded records it."""
    import time

    from gitmem.errors import GitmemError
    from gitmem.integrate import reinject
    from gitmem.store.settings import context_refresh_minutes
    from gitmem.verbs.context import card_for

    try:
        minutes = context_refresh_minutes(store.registry)
    except GitmemError:
        return ""  # a bad value never costs the prompt its entries; `gitmem config list` shows it
    if minutes <= 0 or not payload.session_id:
        return ""
    record, now = reinject.last_card(store.root, payload.session_id), time.time()
    if record and not reinject.due(record, minutes, now):
        return ""
    card = card_for(store, cwd=payload.folder)
    reinject.record_card(store.root, payload.session_id, card, now)
    changes = reinject.changes_since(card, record)
    return "" if not record or changes.empty else reinject.changes_text(card, changes)


def capture_hook(payload: HookInput, root: str | None, workspace: str | None, *,
                 turn: bool = False) -> str:
    """Start the capture of the session's transcript in a detached process; returns at once.
    Returns a one-line description of what was started (or why nothing was). With `turn` (a
    turn's end), only when the session's last capture is capture.turnMinutes old (integrate/turns.py)."""
    import time

    from gitmem.errors import InvalidInputError
    from gitmem.integrate import sessionlog, turns
    from gitmem.store.settings import capture_turn_minutes

    if not payload.transcript_path:
        raise InvalidInputError("--hook: the hook payload names no transcript_path")
    now = time.time()
    skipped = turns.throttled(payload, root, now) if turn else None
    if skipped is not None:
        return skipped  # the common case at a turn's end: decided without opening the store
    store = open_for(payload, root, workspace)  # resolved here: a missing store is said now
    minutes = capture_turn_minutes(store.registry) if turn else 0.0
    store.close()
    session = sessionlog.session_key(payload.session_id, payload.transcript_path)
    if turn:
        decision = turns.turn_due(store.root, session, minutes, now)
        if not decision.due:
            return decision.skipped_line(now)
    turns.mark_started(store.root, session, payload.transcript_path, now)
    args = [sys.executable, "-m", "gitmem.integrate.capturejob", "--root", str(store.root),
            "--transcript", payload.transcript_path]
    if payload.folder is not None:
        args += ["--cwd", str(payload.folder)]
    if workspace:
        args += ["--workspace", workspace]
    # A new session: the job outlives the hook, and a signal to the agent's process group
    # (Claude Code closing) does not reach it.
    import subprocess

    subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                     cwd=str(payload.folder or store.root), env=caller.child_env())
    return f"capture of {payload.transcript_path} started in the background"

