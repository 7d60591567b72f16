"""Running a hook answer: payload in, (stdout, stderr, exit code) out, the same for the CLI and
for the quick path `gitmem search --hook` and `gitmem capture --hook --turn` take around the CLI.

The prompt hook runs before every prompt the person sends and the Stop hook after every turn, so
their process start matters: the quick path answers `gitmem [--root R] [--workspace K] search
--hook` (and `capture --hook --turn`) without loading the command-line layer (click and every
command module, about a third of its start-up).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gitmem import caller
from gitmem.errors import GitmemError
from gitmem.integrate.hookio import HookInput, additional_context, parse

Answer = Callable[[HookInput, "str | None", "str | None"], str]


@dataclass(frozen=True)
class HookReply:
    stdout: str
    stderr: str
    exit_code: int


def stdin_text() -> str:
    """The hook payload as sent; nothing when a person runs the command at a terminal."""
    import sys

    return "" if caller.isatty(0) else sys.stdin.read()


def answer_hook(stdin_text: str, answer: Answer, root: str | None, workspace: str | None, *,
                error_exit: int = 0, error_as_context: str | None = None) -> HookReply:
    """What the hook prints and returns. An error is one line on stderr and exit `error_exit`
    (never 2: for Claude Code exit 2 blocks the prompt or the compaction); with
    `error_as_context` (the event), the line also reaches the model, so it knows memory was not
    loaded."""
    try:
        return HookReply(answer(parse(stdin_text), root, workspace), "", 0)
    except GitmemError as exc:
        message = f"gitmem: error: {exc}"
    except Exception as exc:  # noqa: BLE001 - a bug must not block the agent either
        message = internal_error(exc)
    shown = (additional_context(error_as_context, f"gitmem memory was not loaded: {message}")
             if error_as_context else "")
    return HookReply(shown, message, error_exit)


def internal_error(exc: BaseException) -> str:
    """The CLI's line for an unexpected exception (the traceback too under GITMEM_DEBUG)."""
    import sys

    from gitmem.redaction import internal_error as line

    if caller.env("GITMEM_DEBUG"):
        import traceback

        traceback.print_exc(file=sys.stderr)
    return line(exc)


QUICK = {("search", "--hook"): "prompt", ("capture", "--hook", "--turn"): "turn"}


def quick_argv(argv: list[str]) -> tuple[str | None, str | None, str] | None:
    """(root, workspace, which hook) when `argv` is exactly `[--root R] [--workspace K] search
    --hook` or `... capture --hook --turn` (global options before the verb, as integrate writes
    it); None for anything else."""
    root = workspace = None
    rest = list(argv)
    while len(rest) > 2 and rest[0] in ("--root", "--workspace", "-w"):
        if rest[0] == "--root":
            root = rest[1]
        else:
            workspace = rest[1]
        rest = rest[2:]
    kind = QUICK.get(tuple(rest))
    return (root, workspace, kind) if kind else None


def run_quick(root: str | None, workspace: str | None, kind: str = "prompt") -> int:
    """The prompt hook (or a turn's end) without the command-line layer: read stdin, print,
    return the exit code (0 for the prompt whatever happens: the agent's prompt is never held
    back by its memory; 1 for a capture that could not start, as `capture --hook` exits)."""
    import sys

    error_exit = 1 if kind == "turn" else 0
    try:
        from functools import partial

        from gitmem.integrate.hooks import capture_hook, search_hook

        answer: Answer = partial(capture_hook, turn=True) if kind == "turn" else search_hook
        reply = answer_hook(stdin_text(), answer, root, workspace, error_exit=error_exit)
    except Exception as exc:  # noqa: BLE001 - reading stdin, an import: see answer_hook
        reply = HookReply("", internal_error(exc), error_exit)
    if reply.stdout:
        print(reply.stdout)
    if reply.stderr:
        print(reply.stderr, file=sys.stderr)
    return reply.exit_code
