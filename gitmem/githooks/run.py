"""What each git hook does when git runs it: `python -P -m gitmem.githooks NAME [ARGS]`.

The pre-commit path speaks to the git binary (gitmem.git.binary), never pygit2, to stay fast.
Each hook imports what it uses when it runs: commit-msg, run on every commit, needs only the
secret check.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gitmem import caller
from gitmem.errors import GitmemError, InvalidInputError
from gitmem.githooks import HOOK_NAMES
from gitmem.githooks.output import say


# -- post-commit, post-merge, post-checkout, post-rewrite -----------------------------------
def changed_files(root: Path, name: str, args: list[str], stdin_text: str = "") -> list[str]:
    """The files a commit, merge, checkout or rewrite changed."""
    from gitmem.git import binary as gitcli
    from gitmem.githooks.precommit import changed_between

    head = gitcli.rev_parse(root, "HEAD")
    if head is None:
        return []
    if name in ("post-commit", "post-merge"):
        before = gitcli.rev_parse(root, "HEAD^" if name == "post-commit" else "ORIG_HEAD")
        return changed_between(root, before, head)
    if name == "post-checkout":
        previous, new, branch_switch = (args + ["", "", ""])[:3]
        if branch_switch != "1" or previous == new:
            return []  # a file checkout: search notices those files by its own freshness check
        return changed_between(root, None if previous == gitcli.NULL_OID else previous, new)
    found: dict[str, None] = {}
    for line in stdin_text.splitlines()[:500]:  # post-rewrite: "<old> <new> [extra]" per line
        parts = line.split()
        if len(parts) >= 2:
            found.update(dict.fromkeys(changed_between(root, parts[0], parts[1])))
    return list(found)


def settle_after(root: Path, name: str, args: list[str]) -> None:
    """After a plain `git merge`/`git pull` made a merge commit, or a rebase replayed this
    machine's commits: an Id both machines gave to new entries in different topic files is
    settled as `gitmem sync` would (githooks/collisions.py). The published side is the commit
    merged in, or for a rebase the remote-tracking branch."""
    if not (root / "memory.json").is_file():
        return
    from gitmem.git import binary as gitcli

    other = mine = None
    if name == "post-merge":
        other, mine = gitcli.rev_parse(root, "HEAD^2"), gitcli.rev_parse(root, "HEAD^1")
        if other is None or mine is None or mine != gitcli.rev_parse(root, "ORIG_HEAD"):
            return  # a fast-forward brings no entry of this machine's
    elif name != "post-rewrite" or args[:1] != ["rebase"]:
        return
    from gitmem.githooks.collisions import published_ref, settle_collisions
    from gitmem.store.store import Store

    store = Store(root, cwd=root)
    try:
        published = other or published_ref(store)
        settled = settle_collisions(store, published, merged=(mine, other) if mine and other else None)
        if other is None and published is not None:  # a rebase: this machine's side is its old tip
            mine, other = gitcli.rev_parse(root, "ORIG_HEAD"), gitcli.rev_parse(root, published)
        if mine and other:  # one review item accepted on both machines: one entry
            from gitmem.githooks.accepts import fold_accepts_after_merge

            settled.notes += fold_accepts_after_merge(store, mine, other, dict(settled.copies))
    finally:
        store.close()
    for note in settled.notes:
        say(f"{name}: {note}")
    if settled.left:
        say(f"{name}: {', '.join(settled.left)} in several topic files and no way to tell "
            "which is this machine's: `gitmem check` lists them")


def post_hook(root: Path, name: str, args: list[str], stdin_text: str = "") -> int:
    """Update an existing search index for the changed files; never fails the git operation."""
    from gitmem.eventlog import log_event
    from gitmem.format import layers as L

    if name in ("post-merge", "post-rewrite"):
        try:
            settle_after(root, name, args)
        except Exception as exc:  # noqa: BLE001 - a post hook must never fail git
            log_event(root, {"event": "hook-failed", "hook": name,
                             "error": f"{type(exc).__name__}: {exc}"})
            say(f"{name}: could not settle Ids used on both machines ({type(exc).__name__}: "
                f"{exc}); `gitmem check --fix` does it")
    try:
        if not (root / "memory.json").is_file() or not (root / "index").is_dir():
            return 0
        changed = changed_files(root, name, args, stdin_text)
        if any(L.is_memory_file(p) or p.startswith("documents/") for p in changed):
            from gitmem.store.store import Store

            store = Store(root, cwd=root)
            # Unlike a one-shot gitmem write (Store.update_search_index), a hook keeps the index
            # current itself: the search after a plain git command finds what it brought ready.
            store.search_index()
            store.update_search_index(changed)
    except Exception as exc:  # noqa: BLE001 - a post hook must never fail git
        log_event(root, {"event": "hook-failed", "hook": name, "error": f"{type(exc).__name__}: {exc}"})
        say(f"{name}: could not update the search index ({type(exc).__name__}); "
             "the next search rebuilds what it needs")
    return 0


# -- commit-msg ------------------------------------------------------------------------------
def commit_msg(args: list[str]) -> int:
    """Refuse a commit whose message (the file git names) holds a likely secret."""
    from gitmem.githooks.secretcheck import message_secret_problems

    if not args:
        say("commit-msg: git named no message file")
        return 1
    try:
        message = Path(caller.absolute(args[0])).read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        say(f"commit-msg: cannot read the commit message ({exc.strerror or exc})")
        return 1
    problems = message_secret_problems(message)
    for problem in problems:
        say(f"commit-msg: {problem}")
    if problems:
        say("commit refused; `git commit --no-verify` skips the check")
    return 1 if problems else 0


# -- entry point ----------------------------------------------------------------------------
def run_hook(name: str, args: list[str], root: Path | None = None) -> int:
    """Run one hook in `root` (default: the current folder, where git runs hooks)."""
    if name not in HOOK_NAMES:
        raise InvalidInputError(f"unknown hook {name!r} (known: {', '.join(HOOK_NAMES)})")
    if caller.env("GITMEM_HOOKS") == "0":
        return 0
    root = Path(caller.absolute(str(root or '.')))
    if name == "commit-msg":
        return _recorded(root, name, commit_msg(args))
    if name != "pre-commit":
        stdin_text = sys.stdin.read() if name == "post-rewrite" else ""
        return _recorded(root, name, post_hook(root, name, args, stdin_text))
    from gitmem.eventlog import log_event
    from gitmem.githooks.precommit import pre_commit

    _add_new_hooks(root)
    try:
        return _recorded(root, name, pre_commit(root))
    except GitmemError as exc:
        say(f"pre-commit: {exc}")
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        log_event(root, {"event": "hook-failed", "hook": name, "error": f"{type(exc).__name__}: {exc}"})
        say(f"pre-commit: internal error: {type(exc).__name__}: {exc}")
    say("commit refused; `git commit --no-verify` skips the check")
    return _recorded(root, name, 1)


def _add_new_hooks(root: Path) -> None:
    """Before the commit's later hooks run: install those an upgrade of gitmem brought (git looks
    a hook up when it runs it, so a commit-msg hook added here checks this very commit)."""
    from gitmem.githooks.install import add_new_hooks

    try:
        added = add_new_hooks(root)
    except (OSError, GitmemError) as exc:  # never fails the commit: `hooks install` says more
        say(f"pre-commit: could not add gitmem's newer hooks ({exc}); run `gitmem hooks install`")
        return
    if added:
        say(f"pre-commit: installed gitmem's {', '.join(added)} hook (new since `gitmem hooks "
            "install` ran here)")


def _recorded(root: Path, name: str, code: int) -> int:
    """Log and count one hook run in a store (not in a folder that is none)."""
    if (root / "memory.json").is_file():
        from gitmem.observe.record import record

        counts = ["hooks.total", f"hooks.{name}"] + (["failures.hook"] if code else [])
        record(root, "hook", count=counts, hook=name, exit=code)
    return code


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in HOOK_NAMES:
        say(f"usage: python -m gitmem.githooks {{{'|'.join(HOOK_NAMES)}}} [ARGS...]")
        return 2
    return run_hook(args[0], args[1:])
