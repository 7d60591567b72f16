"""One MCP server's hold on the store: opened once, used from one worker thread, fresh per call.

The server lives as long as the agent's session, so the Store object (its git repository, catalog
and search index handles) is kept between calls. What a call must never inherit from the one
before is reset each time: memory.json is read again, the notes are emptied and the folder the
workspace is resolved from is restored. The files themselves are caught up by the store on every
operation (hand edits, pulls and plain-git commits between calls are seen exactly as a fresh
`gitmem` process sees them).

Every call runs on the same single worker thread: the store's handles (SQLite, libgit2, the search
index) stay on the thread that opened them, and two calls never interleave.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.redaction import internal_error

if TYPE_CHECKING:
    from gitmem.store.store import Store

Work = Callable[["Store"], Any]


@dataclass
class Outcome:
    """What one tool call produced: data for structured output and the text shown to the agent,
    or the one-line error."""

    data: Any = None
    text: str = ""
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    as_json: bool = False  # the text is the data as JSON (reply() renders it from masked data)

    def shown(self, text: str | None = None) -> str:
        lines = [self.error or (self.text if text is None else text),
                 *(f"gitmem: note: {note}" for note in self.notes)]
        return "\n".join(line for line in lines if line)


def to_text(data: Any) -> str:
    """Compact JSON an agent reads as the tool's text result."""
    return json.dumps(data, ensure_ascii=False, default=str)


class Session:
    """The store a server answers from, and the one thread every call runs on."""

    def __init__(self, root: str | None = None, *, workspace: str | None = None,
                 cwd: Path | None = None, subagent: bool = False) -> None:
        self.root = root
        self.workspace = workspace
        self.cwd = Path(caller.absolute(str(cwd or caller.cwd()))).resolve()
        self.subagent = subagent or caller.env("GITMEM_SUBAGENT") == "1"
        if self.subagent:
            # The library's own rule (store/txn.py) then refuses every write of this process.
            caller.set_process_env("GITMEM_SUBAGENT", "1")
        self._store: Store | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gitmem-mcp")

    # -- the store -----------------------------------------------------------------------------
    def store(self) -> Store:
        """The open store, with the state one call must not inherit from another reset."""
        from gitmem.store.paths import validate_workspace_key
        from gitmem.store.store import Store

        if self._store is None:
            if self.workspace is not None:
                validate_workspace_key(self.workspace)
            self._store = Store(self.root, workspace=self.workspace, cwd=self.cwd)
        store = self._store
        store.require()
        store.reload()  # memory.json may have been edited or synced since the last call
        store.cwd = self.cwd
        return store

    def close(self) -> None:
        if self._store is not None:
            self._worker.submit(self._store.close).result()
            self._store = None
        self._worker.shutdown(wait=True)

    # -- calls ---------------------------------------------------------------------------------
    def run(self, work: Work, *, verb: str | None = None,
            text: Callable[[Any], str] | None = None) -> Outcome:
        """Run `work(store)` here and now (on the caller's thread): its data and text, or the
        one-line error. `verb` names a write, refused at once for a subagent."""
        try:
            if verb is not None:
                from gitmem.store.txn import refuse_subagent

                refuse_subagent(verb)
            store = self.store()
            data = work(store)
            notes = list(dict.fromkeys(store.notes))
            if text is None:
                return Outcome(data, to_text(data), notes=notes, as_json=True)
            return Outcome(data, text(data), notes=notes)
        except GitmemError as exc:
            return Outcome(error=f"gitmem: error: {exc}")
        except Exception as exc:  # noqa: BLE001 - an agent gets one line, never a traceback
            if caller.env("GITMEM_DEBUG"):
                import traceback

                traceback.print_exc(file=sys.stderr)
            return Outcome(error=internal_error(exc))

    async def call(self, work: Work, *, verb: str | None = None,
                   text: Callable[[Any], str] | None = None) -> Outcome:
        """`run` on the worker thread, without blocking the server's event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, lambda: self.run(work, verb=verb, text=text))
