"""The pre-commit hook: normalize the staged memory files and refuse malformed entries.

It applies the rules of gitmem.normalize (those of `gitmem check`) to the STAGED copy of each
memory file: missing ids and dates are filled in for the entries lacking them, every other byte
stays as it was, the layer indexes of the touched layers are regenerated, and all of it is
staged again. When the working copy holds more than what was staged, only the staged copy is
rewritten and the new ids are carried over to the matching entries of the working copy.
Speaks to the git binary (gitmem.gitcli), never pygit2: a hook must start fast.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.format import layers as L
from gitmem.git import binary as gitcli
from gitmem.githooks.output import say, tell
from gitmem.githooks.renames import follow_renames
from gitmem.githooks.secretcheck import other_staged_secret_problems, staged_secret_problems

LOCK_SECONDS = 30.0


def _relevant(path: str) -> bool:
    return L.classify_path(path).kind in ("topic", "single", "layer-index")


def pre_commit(root: Path) -> int:
    """Normalize the staged memory files; 1 (commit refused) when an entry is malformed.

    The hook tells gitmem writers that this `git commit` runs (they do not move HEAD until it
    has moved HEAD itself or exited) and works while it holds the store: its lock, or the turn
    a writer waiting for this commit grants it. A commit that started just as a gitmem write
    moved HEAD is refused with a message to run it again (git's own update of HEAD would fail).
    """
    if not (root / "memory.json").is_file():
        return 0
    from gitmem.git.locks import committing_git
    from gitmem.store import gitgate

    git_pid = committing_git()
    head = gitcli.rev_parse(root, "HEAD")
    if git_pid is not None:
        gitgate.announce(root, git_pid, head)
    warming = _warm_imports()  # the parser loads while git lists what is staged
    staged = gitcli.staged_changes(root)
    changes = [c for c in staged if _relevant(c.path)]
    runtime = sorted({scope for c in staged if (scope := _runtime_scope(c.path))})
    if any(c.path == "SYSTEM.md" and c.status != "D" for c in staged):
        # Generated: the commit keeps the hand edit (it stays in history), the next write
        # renders the file again.
        say("note: SYSTEM.md is generated: this commit keeps your edit, and the next gitmem "
            "write renders it again; put lasting notes in global/INDEX.md")
    blobs = gitcli.read_blobs(root, [c.oid for c in changes if c.status != "D"])
    warming.join()  # import nothing on this thread before the warming one is done
    with gitgate.hook_turn(root, git_pid, timeout=LOCK_SECONDS):
        if gitgate.head_moved_under(root, git_pid, head, gitcli.rev_parse(root, "HEAD")):
            say("a gitmem write moved HEAD just as this commit started; nothing was committed "
                "and what you staged is unchanged: run the same `git commit` again")
            return 1
        secrets = other_staged_secret_problems(root, staged, {c.path for c in changes})
        if secrets:  # runtime memory and document copies: refused before anything is imported
            for problem in secrets:
                tell(problem)
            say("commit refused: remove the likely secrets above and commit again")
            return 1
        if runtime and _runtime_locked(root, runtime):
            return 1
        return _pre_commit_locked(root, changes, head, blobs) if changes else 0


def _runtime_scope(path: str) -> str | None:
    if "/runtime/" not in path:
        return None
    from gitmem.githooks.runtime import runtime_scope

    return runtime_scope(path)


def _runtime_locked(root: Path, scopes: list[str]) -> int:
    """Import staged hand edits of USER.md / MEMORY.md; 1 (commit refused) when a line breaks
    the rules."""
    from gitmem.githooks.runtime import import_staged, stage_runtime
    from gitmem.runtime.budget import Limits
    from gitmem.store.registry import load_registry

    try:
        limits = Limits.from_settings(load_registry(root).setting("runtime"))
        results = [import_staged(root, scope, limits) for scope in scopes]
    except GitmemError as exc:
        say(f"commit refused: {exc}")
        return 1
    problems = [problem for _result, found in results for problem in found]
    if problems:
        for problem in problems:
            tell(problem)
        say("commit refused: fix the runtime memory lines above and commit again")
        return 1
    for result, _found in results:
        whole, index_only = stage_runtime(root, result)
        _stage(root, whole)
        if index_only:
            gitcli.set_index_entries(root, index_only)
            also = _partial_commit_index(root)
            if also is not None:
                gitcli.set_index_entries(root, index_only, index_file=also)
        for note in result.notes:
            say(f"imported hand edit: {note}")
    return 0


def _warm_imports() -> threading.Thread:
    """Load the parsing and store modules in a thread while the main one waits for git."""

    def load() -> None:
        with contextlib.suppress(Exception):
            import frontmatter  # noqa: F401

            from gitmem.format import markdown  # noqa: F401
            from gitmem.store import store  # noqa: F401

    thread = threading.Thread(target=load, name="gitmem-warm-imports", daemon=True)
    thread.start()
    return thread


def changed_between(root: Path, old: str | None, new: str) -> list[str]:
    """Paths that differ between two commits (old None: every file of new)."""
    return gitcli.changed_between(root, old, new) if old else gitcli.files_in(root, new)


def _pre_commit_locked(root: Path, changes: list[gitcli.StagedChange], head: str | None,
                       blobs: dict[str, bytes]) -> int:
    from gitmem.errors import ParseError
    from gitmem.format.markdown import decode_memory_bytes, parse_topic_file
    from gitmem.format.normalize import Problem
    from gitmem.store.store import Store

    store = Store(root, cwd=root)
    try:
        store.catch_up_catalog_from(head, lambda old, new: changed_between(root, old, new))
        present = [c for c in changes if c.status != "D"]
        staged: dict[str, str] = {}
        problems: list[Problem] = []
        for change in present:
            if change.mode != "100644" and change.mode != "100755":
                kind = "a symbolic link" if change.mode == "120000" else f"mode {change.mode}"
                problems.append(Problem(change.path, 1, f"not a regular file ({kind}): gitmem "
                                                        "reads only regular files"))
                continue
            try:
                text = decode_memory_bytes(blobs[change.oid], change.path)
            except ParseError as exc:
                problems.append(Problem(change.path, exc.line, exc.reason))
                continue
            if L.classify_path(change.path).kind == "layer-index":
                problems.extend(_legacy_entries(change.path, text))
            else:
                staged[change.path] = text
        problems.extend(staged_secret_problems(root, staged, changes))
        outcomes = store.normalize_texts(staged, fix=True, gate=True,
                                         gone=[c.path for c in changes if c.status == "D"])
        problems.extend(p for o in outcomes for p in o.blocking)
        renamed = follow_renames(outcomes, changes)
        problems.extend(_relation_problems(store, outcomes, changes))
        topics = [c.path for c in changes if L.classify_path(c.path).kind == "topic"]
        index_paths = sorted({L.layer_index_path(r.scope, r.layer)
                              for r in map(L.classify_path, topics)})
        for relpath in index_paths:
            if relpath not in staged and (root / relpath).is_file():
                with contextlib.suppress(ParseError):  # not text: regenerated below all the same
                    problems.extend(_legacy_entries(relpath, decode_memory_bytes(
                        (root / relpath).read_bytes(), relpath)))
        if problems:
            for problem in problems:
                tell(problem)
            say("commit refused: fix the entries above and commit again (`gitmem check` lists them too)")
            return 1
        for hint in (p for o in outcomes for p in o.problems if not p.is_error and not p.fixable):
            say(f"hint: {hint}")
        normalized = {o.path: o.text for o in outcomes}
        whole = _write_back(root, [o for o in outcomes if o.changed], staged,
                            {c.path: c.mode for c in present})
        for outcome in outcomes:
            if outcome.assigned:
                say(f"{outcome.path}: assigned {', '.join(outcome.assigned)}")
            elif outcome.path in renamed:
                say(f"{outcome.path}: its front matter names its new place")
            elif outcome.changed:
                say(f"{outcome.path}: filled missing dates")
        if topics:
            def read(relpath: str) -> Any:
                text = normalized.get(relpath)
                return None if text is None else parse_topic_file(text, relpath)

            store.catalog.refresh(topics, read)
            store.regenerate_layer_indexes(topics)
            index_paths += _system_doc(store)
        _stage(root, whole + index_paths + _kept_marks(root, store))
        return 0
    finally:
        store.close()


def _system_doc(store: Any) -> list[str]:
    """SYSTEM.md rendered for the commit's counts, when it changes: a plain commit keeps it
    current as a gitmem write does."""
    from gitmem.fsio import read_regular_file, write_text_atomic

    target = store.root / "SYSTEM.md"
    text = store.render_system_doc()
    try:
        if read_regular_file(target) == text.encode("utf-8"):
            return []
    except FileNotFoundError:
        pass
    except OSError:
        return []  # not a regular file: left as it is (gitmem status reports it)
    write_text_atomic(target, text, durable=False)
    return ["SYSTEM.md"]


def _kept_marks(root: Path, store: Any) -> list[str]:
    """ids.json, when this commit takes the highest entry of a layer out of the files."""
    from gitmem.format.idmarks import MARKS_PATH
    from gitmem.fsio import write_text_atomic
    from gitmem.store import marks

    text = marks.wanted(store.catalog, store.marks_text())
    if text is None or MARKS_PATH in store.stand_ins:
        return []
    write_text_atomic(root / MARKS_PATH, text)
    return [MARKS_PATH]


def _relation_problems(store: Any, outcomes: list[Any], changes: list[gitcli.StagedChange]) -> list[Any]:
    """Typed links of the staged files must name existing entries; legacy values are hints."""
    from gitmem.store.relcheck import relation_findings

    problems, hints = relation_findings(store.catalog, {o.path: o.text for o in outcomes},
                                        [c.path for c in changes if c.status == "D"])
    for hint in hints:
        say(f"hint: {hint}")
    return problems


def _legacy_entries(relpath: str, text: str) -> list[Any]:
    """A generated layer file must not hold entries (they would be lost when it is regenerated)."""
    if "##" not in text:  # every entry heading holds it (`##` alone and `##\t` too)
        return []
    from gitmem.format.markdown import parse_topic_file
    from gitmem.format.normalize import Problem

    try:
        document = parse_topic_file(text, relpath)
    except GitmemError:
        return []
    return [Problem(relpath, entry.line,
                    "entry in a generated layer index: move it to a topic file under "
                    f"{L.classify_path(relpath).layer}/ (or run `gitmem check --fix`)")
            for entry in document.entries]


def _partial_commit_index(root: Path) -> Path | None:
    """`git commit -- paths` commits a temporary index; the real one must follow our changes."""
    current = caller.env("GIT_INDEX_FILE", "") or ""
    if not Path(current).name.startswith("next-index"):
        return None
    real = gitcli.git_dir(root) / "index.lock"
    return real if real.exists() else None


def _stage(root: Path, paths: list[str]) -> None:
    if not paths:
        return
    gitcli.add(root, paths)
    also = _partial_commit_index(root)
    if also is not None:
        gitcli.add(root, paths, index_file=also)


def _write_back(root: Path, outcomes: list[Any], staged: dict[str, str],
                modes: dict[str, str]) -> list[str]:
    """Normalized texts into the index; the working copy follows when it held exactly what was
    staged (those paths are returned, for the caller to stage with the layer indexes)."""
    from gitmem.fsio import read_regular_file, write_text_atomic

    whole, index_only = [], []
    for outcome in outcomes:
        target = root / outcome.path
        try:
            current: bytes | None = read_regular_file(target)
        except FileNotFoundError:
            current = None
        except OSError:  # a FIFO or folder where the file was: the staged copy only
            index_only.append((modes.get(outcome.path) or "100644",
                               gitcli.write_blob(root, outcome.text.encode("utf-8")), outcome.path))
            say(f"{outcome.path} is not a regular file in the working tree: normalized the staged"
                " copy only")
            continue
        if current == staged[outcome.path].encode("utf-8"):
            mode = target.stat().st_mode & 0o7777
            write_text_atomic(target, outcome.text)
            target.chmod(mode)
            whole.append(outcome.path)
            continue
        oid = gitcli.write_blob(root, outcome.text.encode("utf-8"))
        index_only.append((modes.get(outcome.path) or "100644", oid, outcome.path))
        carried = current is not None and _carry_over(target, current, staged[outcome.path], outcome.text)
        say(f"{outcome.path} has unstaged changes: normalized the staged copy only; "
             + ("the new ids were added to your working copy too" if carried
                else "your working copy was left as it is"))
    if index_only:
        gitcli.set_index_entries(root, index_only)
        also = _partial_commit_index(root)
        if also is not None:
            gitcli.set_index_entries(root, index_only, index_file=also)
    return whole


def _carry_over(target: Path, current: bytes, before: str, after: str) -> bool:
    """Give entries of the working copy the ids and dates their staged twins just received."""
    from gitmem.format.markdown import parse_topic_file, render_topic_file
    from gitmem.fsio import write_text_atomic

    try:
        text = current.decode("utf-8")
        old, new = parse_topic_file(before), parse_topic_file(after)
        work = parse_topic_file(text)
    except (UnicodeDecodeError, GitmemError):
        return False
    added = {}
    for was, now in zip(old.entries, new.entries, strict=False):
        if was.fields != now.fields:
            key = (was.title, was.body, tuple(sorted(was.fields.items())))
            added[key] = {k: v for k, v in now.fields.items() if k not in was.fields}
    keys = [(e.title, e.body, tuple(sorted(e.fields.items()))) for e in work.entries]
    changed = False
    for index, key in enumerate(keys):
        if key in added and keys.count(key) == 1:
            work.entries[index] = work.entries[index].with_fields(**added[key])
            changed = True
    if changed:
        mode = target.stat().st_mode & 0o7777
        write_text_atomic(target, render_topic_file(work))
        target.chmod(mode)
    return changed
