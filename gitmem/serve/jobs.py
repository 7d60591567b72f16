"""The scheduled jobs, as library calls: sync, history ingest, consolidation of pending digests
(and the runtime tier's maintenance after it), the freshness pass over stale and expired entries.

Each returns a one-line result (what the server logs and shows in `gitmem status`) and raises
when the run failed, so the schedule backs off. A job with nothing to do says so and succeeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gitmem.store.store import Store, open_store

T = TypeVar("T")
R = TypeVar("R")


def _each(root: Path, items: list[T], run: Callable[[Store, T], R], *, cwd: Callable[[T], Path],
          name: Callable[[T], str]) -> tuple[list[R], list[str]]:
    """run(store, item) for every item, each with a store of its own opened in `cwd(item)`;
    (what the runs returned, `name: error` of each that failed: it does not stop the others)."""
    done: list[R] = []
    failed: list[str] = []
    for item in items:
        store = open_store(root, cwd=cwd(item))
        try:
            done.append(run(store, item))
        except Exception as exc:  # noqa: BLE001 - one broken item does not stop the others
            failed.append(f"{name(item)}: {exc}")
        finally:
            store.close()
    return done, failed


def _result(summary: str, failed: list[str], label: str = "failed: ") -> str:
    """The job's line; raised when anything failed, so the schedule backs off."""
    if failed:
        raise RuntimeError(f"{summary}; {label}{'; '.join(failed)}")
    return summary


def sync_job(root: Path) -> str:
    """`gitmem sync`, when the store has a remote."""
    from gitmem.errors import ConflictError
    from gitmem.sync.run import sync

    store = open_store(root, cwd=root)
    try:
        if store.git.remote_url() is None:
            return "skipped: no remote (`gitmem remote set URL`)"
        report = sync(store)
    finally:
        store.close()
    if report.conflicts:
        raise ConflictError(f"{len(report.conflicts)} conflict(s) left; `gitmem conflicts` lists them")
    return f"{report.result} ({report.remote})"


def history_repos(root: Path) -> list[Path]:
    """Code repositories this machine records: those ingested before and the associated folders."""
    from gitmem.history.ingest import STATE_FILE
    from gitmem.store.registry import load_associations

    found: list[str] = []
    try:
        data = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if isinstance(data, dict):
        found += [str(v["repo"]) for v in data.values() if isinstance(v, dict) and v.get("repo")]
    found += list(load_associations(root))
    repos = [Path(p) for p in dict.fromkeys(found)]
    return [p for p in repos if (p / ".git").exists() and p.resolve() != root.resolve()]


def history_job(root: Path) -> str:
    """`gitmem history` for every known code repository; fails when any of them failed."""
    from gitmem.history.ingest import ingest

    repos = history_repos(root)
    if not repos:
        return "skipped: no code repository known (`gitmem history --repo DIR` once)"
    done, failed = _each(root, repos, lambda store, repo: ingest(store, repo).recorded,
                         cwd=lambda repo: repo, name=lambda repo: repo.name)
    summary = f"{sum(done)} commit(s) recorded from {len(repos)} repositor{'y' if len(repos) == 1 else 'ies'}"
    return _result(summary, failed)


def consolidate_job(root: Path) -> str:
    """`gitmem consolidate` when a model is configured and digests are pending, then the runtime
    tier's maintenance pass (`gitmem runtime maintain --queue`): its proposals wait for review."""
    from gitmem.capture.digests import list_digests
    from gitmem.consolidate.run import consolidate
    from gitmem.models.config import load_ladder

    if not load_ladder(root).rungs:
        return "skipped: no model configured (`gitmem models add`)"
    summary, failed = "nothing pending", []
    if list_digests(root, "pending"):
        store = open_store(root, cwd=root)
        try:
            report = consolidate(store)
        finally:
            store.close()
        if report.parse_failed:
            failed.append("the model's reply could not be used; the digests stay pending")
        summary = f"{report.result}: {len(report.consolidated)} digest(s), {len(report.entries)} entr(y/ies)"
    done, broken = _each(root, [root], lambda store, _root: _maintain(store), cwd=lambda item: item,
                         name=lambda _root: "runtime maintain")
    return _result("; ".join([summary, *done]), failed + broken, label="")


def _maintain(store: Store) -> str:
    from gitmem.consolidate.maintain import maintain

    report = maintain(store, queue=True)
    return f"runtime maintenance: {len(report.queued)} proposal(s) queued for review"


def refresh_job(root: Path) -> str:
    """`gitmem refresh` when a model is configured: stale and expired entries are kept, updated
    or forgotten by the model ladder (one commit). Without a model it skips: the list is for a
    person to read (`gitmem refresh`), and a server has nobody to show it to."""
    from gitmem.consolidate.refresh import refresh
    from gitmem.models.config import load_ladder

    if not load_ladder(root).rungs:
        return "skipped: no model configured (`gitmem models add`)"
    store = open_store(root, cwd=root)
    try:
        report = refresh(store)
    finally:
        store.close()
    if report.result == "parse-failed":
        raise RuntimeError(f"the model's reply could not be used; kept in {report.failed_file}")
    if report.result == "nothing-stale":
        return "nothing stale"
    return (f"{report.result}: kept {len(report.kept)}, updated {len(report.updated)}, "
            f"forgot {len(report.forgotten)} of {len(report.candidates)} stale entr"
            f"{'y' if len(report.candidates) == 1 else 'ies'}")


def capture_job(root: Path) -> str:
    """`gitmem capture FOLDER` for every session folder on the schedule (state/capture-folders.json,
    written by `gitmem integrate codex|gemini|opencode|copilot`); fails when a summary failed (its
    material waits for the next run) or a folder could not be read."""
    from gitmem.capture.folder import capture_folder
    from gitmem.capture.scheduled import scheduled_folders

    folders = [f for f in scheduled_folders(root) if f.path.is_dir()]
    if not folders:
        return "skipped: no session folder on the schedule (`gitmem integrate codex|gemini|opencode|copilot`)"
    done, failed = _each(root, folders, lambda store, folder: (folder, capture_folder(store, folder.path)),
                         cwd=lambda _folder: root, name=lambda folder: str(folder.path))
    read = sum(len(report.reports) + report.unchanged for _folder, report in done)
    digests = sum(1 for _folder, report in done for r in report.reports if r.digest)
    failed += [f"{folder.path}: a summary failed (the material waits for the next run)"
               for folder, report in done if report.failed]
    summary = (f"{digests} digest(s) from {read} transcript(s) in {len(folders)} "
               f"folder{'' if len(folders) == 1 else 's'}")
    return _result(summary, failed, label="")


def native_job(root: Path) -> str:
    """The native-memory pass for every project of this machine that turned it on (`gitmem
    integrate claude-code --native-memory`): what Claude Code wrote comes in, what the store holds
    (a sync brought, say) reaches MEMORY.md. Fails when any project's pass failed."""
    from gitmem import caller
    from gitmem.imports.native import enabled_projects, run_pass

    projects = [p for p in enabled_projects(root) if p.is_dir()]
    if not projects:
        return "skipped: no project keeps its auto memory in step (`gitmem integrate claude-code --native-memory`)"
    done, failed = _each(root, projects, lambda store, project: run_pass(store, project, Path(caller.home())),
                         cwd=lambda project: project, name=lambda project: project.name)
    return _result(f"{len(done)} project(s) in step", failed)
