"""The agent's configuration files as integrate sees them: read, changed in memory, written only
when different. Nothing of the person's is dropped: a file that cannot be read as what it should
be is refused, never overwritten."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem import caller
from gitmem.errors import InvalidInputError
from gitmem.fsio import read_text, remove_file, write_text_atomic

SERVER_NAME = "gitmem"


@dataclass(frozen=True)
class Change:
    """One file: what it holds now (None: absent) and what it will hold (None: removed)."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def action(self) -> str:
        if self.before is None:
            return "create"
        return "remove" if self.after is None else "update"

    def apply(self) -> None:
        if not self.changed:
            return
        if self.after is None:
            remove_file(self.path)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, self.after)


def apply_all(changes: list[Change], *, dry_run: bool = False) -> list[Change]:
    """The changes that change something, written unless `dry_run` (every file was planned,
    and so checked, before the first is written)."""
    todo = [c for c in changes if c.changed]
    if not dry_run:
        for change in todo:
            change.apply()
    return todo


def current(path: Path) -> str | None:
    try:
        return read_text(path)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path} ({exc}); fix or move it, then run again") from None


class _Unkept(ValueError):
    """What a JSON file holds that writing it back would change: a repeated key, a number out
    of a float's range, NaN or Infinity."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _value in pairs]
    if len(set(keys)) != len(keys):
        raise _Unkept(f"the key {next(k for k in keys if keys.count(k) > 1)!r} twice in one object")
    return dict(pairs)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Unkept(f"the number {text}, past what JSON tools read back")
    return value


def _constant(name: str) -> Any:
    raise _Unkept(f"{name}, which JSON does not allow")


def load_json(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON object a settings file holds ({} when absent or empty). One that writing back
    would change in more than its layout is refused, never rewritten."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_float=_finite,
                          parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}); fix it "
                                "by hand first: gitmem does not overwrite it") from None
    except _Unkept as exc:
        raise InvalidInputError(f"{path} holds {exc}: writing it back would change it; fix it by "
                                "hand first: gitmem does not overwrite it") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} does not hold a JSON object; gitmem does not overwrite it")
    return data


def dump_json(data: dict[str, Any], like: str | None = None) -> str:
    """The object as JSON, indented as the file it came from was (two spaces for a new one)."""
    found = re.search(r"^([ \t]+)\"", like or "", re.MULTILINE)
    indent: str | int = found.group(1) if found else 2
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def json_change(path: Path, edit: Any) -> Change:
    """The change `edit(data)` makes to the JSON object in `path` (removed when it leaves the
    object empty and gitmem's entries were all it held)."""
    before = current(path)
    data = load_json(path, before)
    original = json.loads(json.dumps(data))
    edit(data)
    if data == original:
        return Change(path, before, before)
    return Change(path, before, dump_json(data, before) if data else None)


# -- the gitmem command as the agent will run it ---------------------------------------------------
def gitmem_command(root: str | None, *, shared: bool = False) -> list[str]:
    """The gitmem executable running now (else this Python with -m gitmem), and --root when one
    was given: what an agent should run to reach this same store. For `shared` files (a
    project's, which teams commit) the program is plain `gitmem` when that is the command that
    runs now and PATH finds that same file, so no path of this machine is written."""
    launched = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if launched is not None and launched.name == "gitmem" and launched.exists():
        words = ["gitmem" if shared and _on_path(launched) else str(launched.absolute())]
    else:
        words = [sys.executable, "-m", "gitmem"]
    if root:
        words += ["--root", caller.absolute(caller.expanduser(str(root)))]
    return words


def _on_path(program: Path) -> bool:
    """True when a PATH lookup of `gitmem` finds this same program."""
    found = shutil.which("gitmem")
    try:
        return found is not None and Path(found).samefile(program)
    except OSError:
        return False


def machine_paths(words: list[str]) -> list[str]:
    """The words of a command that are paths of this machine (absolute paths)."""
    return [word for word in words if Path(word).is_absolute()]


def shell_line(words: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def gitmem_words(words: list[str]) -> list[str] | None:
    """What follows the gitmem program in a command (its options and verb), or None when the
    command does not run gitmem."""
    for index, word in enumerate(words):
        if Path(word).name == "gitmem":
            return words[index + 1:]
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "gitmem":
            return words[index + 2:]
    return None


def split_command(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


# -- a marked section in a rules file (AGENTS.md, GEMINI.md) ---------------------------------------
def rules_change(path: Path, begin: str, end: str, section: str, *, remove: bool) -> Change:
    """`path` with gitmem's section between the markers `begin` and `end` added (at the end),
    updated where it stands, or removed; everything around it is kept as it is."""
    before = current(path)
    text = before or ""
    block = f"{begin}\n{section}{end}\n"
    start = text.find(begin)
    if start >= 0:
        stop = text.find(end, start)
        if stop < 0:
            raise InvalidInputError(f"{path}: gitmem's section has lost its end marker ({end}); put it "
                                    "back or delete the section by hand")
        head, tail = text[:start], text[stop + len(end):].removeprefix("\n")
        if remove:
            rest = unjoined(head) + tail
            return Change(path, before, rest if rest.strip() else None)
        return Change(path, before, head + block + tail)
    if remove:
        return Change(path, before, before)
    return Change(path, before, joined(text, block))


def joined(text: str, block: str) -> str:
    """gitmem's block added after a person's text: one line break joins them, after a blank line
    when the text ended its last line, so that `unjoined` gives the text back byte for byte."""
    return f"{text}\n{block}" if text else block


def unjoined(head: str) -> str:
    """The person's text before gitmem's block, as it was before `joined`."""
    return head[:-1] if head.endswith("\n") else head


# -- a session folder the warm server captures on its schedule -------------------------------------
def schedule_change(root: Path, folder: Path, agent: str, *, remove: bool,
                    replaces: tuple[Path, ...] = ()) -> Change | None:
    """The store's list of scheduled session folders with `folder` added (or removed); None when
    there is no store at `root` to hold it. `replaces`: folders an earlier gitmem scheduled for
    the agent instead, taken out either way."""
    from gitmem.capture.scheduled import SCHEDULE_FILE

    if not (root / "memory.json").is_file():
        return None

    def edit(data: dict[str, Any]) -> None:
        for old in replaces:
            if isinstance(data.get(str(old)), dict) and data[str(old)].get("agent") == agent:
                data.pop(str(old))
        key = str(folder)
        if remove:
            if isinstance(data.get(key), dict) and data[key].get("agent") == agent:
                data.pop(key)
        else:
            known = data.get(key)
            data[key] = {**(known if isinstance(known, dict) else {}), "agent": agent}

    return json_change(root / SCHEDULE_FILE, edit)


def place_server(data: dict[str, Any], key: str, path: Path, entry: dict[str, Any] | None,
                 ours: Callable[[Any], bool]) -> None:
    """Put (or with None, take out) the "gitmem" MCP server in the object `data[key]`, keeping
    the fields the person added to it; a server of that name that `ours` does not recognise is
    someone else's and is never changed."""
    servers = data.get(key)
    if servers is None:
        if entry is None:
            return
        servers = data[key] = {}
    if not isinstance(servers, dict):
        raise InvalidInputError(f"{path}: {key} is not an object; gitmem does not overwrite it")
    existing = servers.get(SERVER_NAME)
    if existing is not None and not ours(existing):
        if entry is None:
            return  # someone else's server of that name: not ours to remove
        raise InvalidInputError(f"{path}: an MCP server named {SERVER_NAME!r} that does not run "
                                "gitmem is already there; rename or remove it first")
    if entry is None:
        servers.pop(SERVER_NAME, None)
        if not servers:
            data.pop(key)
    elif existing is None or {**existing, **entry} != existing:
        servers[SERVER_NAME] = {**(existing or {}), **entry}
