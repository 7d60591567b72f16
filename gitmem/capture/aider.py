"""Aider's chat history, `.aider.chat.history.md` at the root of the project, appended to as
sessions go on:

    # aider chat started at 2026-11-30 09:00:00       <- a session starts (local time)
    > Aider v0.86.1 ...                                <- aider's own output: dropped
    #### The invoices round twice; fix it.            <- the person's input, a line each
    The rounding happens in both ...                  <- the model's reply, until the next block
    > Applied edit to billing/invoice.py              <- an edit: its file is kept as a path

The whole file is one transcript (the session key comes from its path), read by byte offset like
the JSONL formats; the offset only ever stops between blocks, so a reply is never split."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from gitmem.capture.formats import Event, SessionMeta
from gitmem.capture.source import Delta, Transcript

HISTORY_NAME = ".aider.chat.history.md"
HEADER = b"# aider chat started at "
LOOKBACK_BYTES = 4 * 1024 * 1024  # how far back a delta looks for the session header it falls in
_EDIT = re.compile(r"^(?:Applied edit to|Added|Creating empty file|Committing) (\S+?)(?: to the chat\.?)?$")
_TEXT_COMMANDS = ("/ask", "/code", "/architect", "/context")


def detect(path: Path, head: bytes) -> str | None:
    return "aider" if path.name.endswith(HISTORY_NAME) or head.lstrip().startswith(HEADER) else None


def _header_time(line: bytes) -> str:
    stamp = line[len(HEADER):].decode("utf-8", "replace").strip()
    return stamp.replace(" ", "T", 1) if re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", stamp) else ""


class AiderHistory(Transcript):
    """`.aider.chat.history.md`: blocks of input, reply and aider's output."""

    def delta(self, start: int) -> Delta:
        delta = Delta(self.format, self.meta, start=start, end=start)
        delta.events = self._blocks(delta)
        return delta

    def _session_time(self, start: int) -> str:
        """The time of the session header that `start` falls in ('' when none is near)."""
        if start <= 0:
            return ""
        with open(self.path, "rb") as handle:
            begin = max(0, start - LOOKBACK_BYTES)
            handle.seek(begin)
            before = handle.read(start - begin)
        at = before.rfind(b"\n" + HEADER)
        if at < 0 and before.startswith(HEADER):
            at = -1
        elif at < 0:
            return ""
        return _header_time(before[at + 1:].split(b"\n", 1)[0])

    def _blocks(self, delta: Delta) -> Iterator[Event]:
        ts = self._session_time(delta.start)
        role, block = "", list[str]()
        pos, fenced = delta.start, False
        with open(self.path, "rb") as handle:
            handle.seek(delta.start)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    return  # aider is mid-line: this block waits for the next capture
                line = raw.decode("utf-8", "replace").rstrip("\n").rstrip()
                kind = "assistant" if fenced and role == "assistant" else _kind(raw, line)
                if kind == "assistant" and line.lstrip().startswith("```"):
                    fenced = not fenced  # an edit block's `>>>>>>> REPLACE` is the reply's, not aider's
                if kind == "blank" and role != "user":
                    if role == "assistant":
                        block.append("")  # a paragraph break inside the reply
                elif kind != role or kind == "header":
                    yield from self._flush(role, block, ts)
                    delta.end, role, block = pos, ("" if kind in ("blank", "header") else kind), []
                pos += len(raw)
                delta.lines += 1
                if kind == "header":
                    ts = _header_time(raw.rstrip()) or ts
                elif role and kind != "blank":
                    block.append(line)
        yield from self._flush(role, block, ts)
        delta.end = pos

    def _flush(self, role: str, block: list[str], ts: str) -> Iterator[Event]:
        if role == "user":
            yield from _user(block, ts)
        elif role == "assistant":
            text = "\n".join(block).strip()
            if text:
                yield Event("assistant", text, ts)
        elif role == "tool":
            for line in block:
                found = _EDIT.match(line[1:].strip())
                if found:
                    yield Event("tool", ts=ts, tool="edit", args={"path": found.group(1)})
                else:
                    self.meta.drop("tool output")


def _kind(raw: bytes, line: str) -> str:
    if raw.startswith(HEADER):
        return "header"
    if line.startswith("#### ") or line == "####":
        return "user"
    if line.startswith(">"):
        return "tool"
    return "assistant" if line else "blank"


def _user(block: list[str], ts: str) -> Iterator[Event]:
    lines = [line[5:] if line.startswith("#### ") else "" for line in block]
    text = "\n".join(lines).strip()
    if not text or text == "<blank>":
        return
    if text.startswith("/"):
        command, _, rest = text.partition(" ")
        if command in _TEXT_COMMANDS and rest.strip():
            yield Event("user", rest.strip(), ts)
        else:
            yield Event("tool", ts=ts, tool=command, args={"command": rest})
        return
    yield Event("user", text, ts)


def open_history(path: Path) -> AiderHistory:
    meta = SessionMeta()
    meta.session = "aider-" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    meta.cwd = str(path.resolve().parent)
    return AiderHistory(path, "aider", meta)
