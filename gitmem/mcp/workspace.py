"""MCP tools about the session and the store: context, state, working, status, sync, conflicts,
history, capture. Each calls the library function its CLI verb calls."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp_types import CallToolResult
from pydantic import Field

from gitmem.mcp import rules
from gitmem.mcp.reply import reply

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from gitmem.mcp.session import Session
    from gitmem.store.store import Store
    from gitmem.verbs.context import Card

AllowSecret = Annotated[bool, Field(description=rules.ALLOW_SECRET)]


def card(store: Store, *, max_chars: int | None = None, subagent: bool = False) -> Card:
    """The context card of the session's workspace (as `gitmem context` builds it)."""
    from gitmem.verbs.context import card_for

    return card_for(store, max_chars=max_chars, subagent=subagent)


def register(server: MCPServer, session: Session) -> None:
    """Add the session and store tools to `server`, answering from `session`."""

    @server.tool(name="context", description=(
        "The context card for the start of a session: runtime memory, workspace state, working "
        "memory, decisions in force, learnings, codebase topics, critical facts, conflicts. Read "
        "it before you start work. What it leaves out still exists: use search."))
    async def context(
        max_chars: Annotated[int | None, Field(ge=200, description=(
            "Budget for the card (default from the store's settings)."))] = None,
    ) -> CallToolResult:
        def work(store: Store) -> dict[str, Any]:
            return card(store, max_chars=max_chars, subagent=session.subagent).as_json()

        return reply(await session.call(work, text=lambda data: str(data.get("text", ""))))

    @server.tool(name="state", description=(
        "Replace one section of the workspace's state.md (where the project stands: goals, "
        "status, open questions), stamped verified today." + rules.WRITE_RULES))
    async def state(
        section: Annotated[str, Field(description="Section heading of state.md to replace.")],
        content: Annotated[str, Field(description="The new content of the section.")],
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.verbs.workfiles import record_state

        def work(store: Store) -> dict[str, Any]:
            return _write(record_state(store, section, content, allow_secret=allow_secret))

        return reply(await session.call(work, verb="state"))

    @server.tool(name="working", description=(
        "Record what you are working on in this workspace's working.md: replace a section "
        "(Task, Next steps, Plan, Blocked by) and/or add a note to the Recent activity log, so "
        "the next session can pick up where this one stops." + rules.WRITE_RULES))
    async def working(
        section: Annotated[Literal["Task", "Next steps", "Plan", "Blocked by"] | None,
                           Field(description="Section to replace (with content).")] = None,
        content: Annotated[str | None, Field(description="New content of the section.")] = None,
        activity: Annotated[str | None, Field(description="A note for Recent activity.")] = None,
        clear_activity: Annotated[bool, Field(description="Empty the Recent activity log.")] = False,
        allow_secret: AllowSecret = False,
    ) -> CallToolResult:
        from gitmem.verbs.workfiles import WorkingUpdate, record_working

        update = WorkingUpdate(section, content, activity, clear_activity, allow_secret)
        return reply(await session.call(lambda store: _write(record_working(store, update)),
                                        verb="working"))

    @server.tool(name="status", description=(
        "Where the store lives, what it holds per scope and layer, and what needs attention "
        "(uncommitted hand edits, conflicts, problems, sync state, pending digests)."))
    async def status() -> CallToolResult:
        from gitmem.verbs.status import status as read_status

        return reply(await session.call(read_status))

    @server.tool(name="sync", description=(
        "Share memory with the other machines: commit pending changes, fetch, merge entry by "
        "entry, push. Conflicts keep both versions and are listed by the conflicts tool. "
        "`dry_run` fetches and says what a sync would do without changing anything else. "
        "Subagents must not call it."))
    async def sync(dry_run: Annotated[bool, Field(description="Only preview.")] = False) -> CallToolResult:
        def work(store: Store) -> dict[str, Any]:
            if dry_run:
                from gitmem.sync.dryrun import dry_run as do_dry_run

                return dict(do_dry_run(store).as_json())
            from gitmem.sync.run import sync as do_sync

            report = do_sync(store)
            if report.conflicts:
                store.notes.append(f"{len(report.conflicts)} conflict(s): both versions are kept; "
                                   "the conflicts tool lists them and how to settle each")
            return dict(report.as_json())

        return reply(await session.call(work, verb=None if dry_run else "sync"))

    @server.tool(name="conflicts", description=(
        "Entries left between conflict markers by a merge, with both versions' origin and how "
        "to settle each. Settle them only when you know which version is right."))
    async def conflicts() -> CallToolResult:
        from gitmem.sync.conflicts import list_conflicts

        return reply(await session.call(
            lambda store: [c.as_json() for c in list_conflicts(store)]))

    @server.tool(name="history", description=(
        "Record the workspace repository's new commits in the history layer (incremental; one "
        "topic per day), so later sessions can search what changed and when."
        " Subagents must not call it."))
    async def history(
        repo: Annotated[str | None, Field(description=(
            "The code repository (default: the one the server runs in)."))] = None,
        limit: Annotated[int, Field(ge=1, description="Commits per pass.")] = 1000,
    ) -> CallToolResult:
        from gitmem.history.ingest import ingest

        def work(store: Store) -> dict[str, Any]:
            return dict(ingest(store, Path(repo) if repo else None, limit=limit).as_json())

        return reply(await session.call(work, verb="history"))

    @server.tool(name="capture", description=(
        "Read what is new in a session transcript (Claude Code, Codex, Gemini CLI, OpenCode, "
        "Aider or generic JSONL), or in every transcript under a folder, and keep its durable "
        "part as a digest for consolidation (incremental; subagent sessions are skipped). "
        "Normally run by the session hooks or the schedule, not by hand. Subagents must not call it."))
    async def capture(
        transcript: Annotated[str, Field(description=(
            "Path of the transcript file, or of a folder of them (or OpenCode's database)."))],
        format: Annotated[Literal["claude-code", "codex", "gemini", "opencode", "copilot", "aider", "jsonl"] | None,
                          Field(description="Transcript format (default: detected).")] = None,
        use_model: Annotated[bool, Field(description=(
            "Summarize with the configured model (else clipped notes)."))] = True,
    ) -> CallToolResult:
        from gitmem.capture.pipeline import capture as run_capture

        def work(store: Store) -> dict[str, Any]:
            from gitmem.capture.folder import capture_folder, holds_sessions

            if holds_sessions(Path(transcript)):
                return capture_folder(store, Path(transcript), fmt=format, use_model=use_model).as_json()
            report = run_capture(store, Path(transcript), fmt=format, use_model=use_model)
            return dict(report.as_json())

        return reply(await session.call(work, verb="capture"))


def _write(result: Any) -> dict[str, Any]:
    return {"id": result.id, "path": result.path, "changed": result.changed, "note": result.note}
