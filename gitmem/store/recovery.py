"""What a crash, a killed process or a hand-made link left in the store, as `check` and `status`
report it. Writes clear most of it themselves (temp files, stale git lock files, an interrupted
write) under the store lock; these reports say what is there until then, and what only a
person can decide (symbolic links, temp files an earlier version committed).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from gitmem.errors import StoreStateError
from gitmem.format.normalize import Problem, hint
from gitmem.fsio import is_temp_name, leftover_temp_files
from gitmem.store import gitgate, journal
from gitmem.store.paths import is_editor_file
from gitmem.store.registry import load_registry

if TYPE_CHECKING:
    from gitmem.store.base import StoreBase

# Folders gitmem neither reads nor writes below the root (git's own, and ones it never walks).
_SKIP_TOP = {".git"}
_WHAT_A_WRITE_CLEARS = "the next write removes it (or run `gitmem check --fix`)"


def leftovers(store: StoreBase) -> list[Problem]:
    """Cheap findings for `status`: a broken memory.json, an interrupted write, temp files of
    killed writers, git lock files nobody holds."""
    found = []
    try:
        load_registry(store.root)
    except StoreStateError as exc:
        found.append(Problem("memory.json", 1, str(exc).removeprefix("memory.json: ")))
    pending = journal.pending(store.root)
    if pending is not None:
        found.append(hint(journal.JOURNAL, 1, f"a `{pending[0]}` was interrupted; the next write "
                          "commits what it changed under its name", fixable=True))
    for relpath in leftover_temp_files(store.root):
        found.append(hint(relpath, 1, f"temp file of a killed write: {_WHAT_A_WRITE_CLEARS}",
                          fixable=True))
    for relpath in gitgate.leftover_locks(store.root, store.git.git_dir):
        found.append(hint(relpath, 1, f"git lock file left by a killed process: {_WHAT_A_WRITE_CLEARS}",
                          fixable=True))
    return found


def store_problems(store: StoreBase) -> list[Problem]:
    """Everything `check` adds to the format rules: the leftovers, every symbolic link in the
    store, and temp files of atomic writes found in the tree or committed."""
    found = leftovers(store)
    links, temps = _walk(store)
    found += [Problem(relpath, 1, "a symbolic link: gitmem neither reads nor writes through links; "
                      "replace it with the file or folder itself") for relpath in links]
    found += [hint(relpath, 1, "a temp file of an interrupted write (ignored by git): delete it")
              for relpath in temps]
    committed = [p for p in store.git.list_files_at("HEAD") if is_temp_name(p)] if store.git.head_oid() else []
    found += [hint(relpath, 1, "a temp file committed by an earlier gitmem: remove it with "
                   f"`git rm --cached {relpath}` (it holds a copy, never the only one)")
              for relpath in committed]
    return found


def _walk(store: StoreBase) -> tuple[list[str], list[str]]:
    """(symbolic links, temp files) anywhere in the store outside .git, without following links."""
    links, temps = [], []
    for folder, dirs, files in os.walk(store.root):
        rel_folder = os.path.relpath(folder, store.root)
        prefix = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        if not prefix:
            dirs[:] = [d for d in dirs if d not in _SKIP_TOP]
        for name in [*dirs, *files]:
            try:
                mode = os.lstat(os.path.join(folder, name)).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                if not is_editor_file(name):  # an editor's lock (Emacs' `.#name`): git ignores it
                    links.append(prefix + name)
            elif name in files and is_temp_name(name) and not prefix.startswith("state/"):
                temps.append(prefix + name)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return sorted(links), sorted(temps)

