"""`gitmem sync --all`: sync the store and every active space with their own remotes.

Each store goes through the ordinary `gitmem sync`; one failing does not stop the others, and
every outcome is reported. A store without a remote is skipped, and said so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError
from gitmem.spaces.folder import FolderSpace
from gitmem.spaces.mounts import reading_targets

if TYPE_CHECKING:
    from gitmem.store.store import Store


@dataclass
class SpaceSync:
    space: str
    result: str  # a sync result, "skipped", or "failed"
    report: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    exit_code: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"space": self.space, "result": self.result, "error": self.error,
                "exit_code": self.exit_code, "report": self.report}


def sync_all(home: Store, progress: Callable[[str], None] | None = None) -> list[SpaceSync]:
    from gitmem.sync.run import sync

    targets, problems = reading_targets(home, every=True)
    out = [SpaceSync(name, "failed", error=reason, exit_code=2) for name, reason in problems]
    for name, store in targets:
        if isinstance(store, FolderSpace):
            out.append(SpaceSync(name, "skipped", error="a read-only Markdown folder: nothing to sync"))
            continue
        if not store.git.remote_url():
            out.append(SpaceSync(name, "skipped", error="no remote configured"))
            continue
        say = (lambda message, name=name: progress(f"{name}: {message}")) if progress else None
        try:
            report = sync(store, progress=say)
        except GitmemError as exc:
            out.append(SpaceSync(name, "failed", error=str(exc), exit_code=exc.exit_code))
            continue
        out.append(SpaceSync(name, report.result, report.as_json(),
                             exit_code=3 if report.conflicts else 0))
    return out
