"""A reply read as text only. Reasoning models may wrap their thinking in tags before the answer,
and some command-line tools echo the prompt back: neither may reach a parser."""

from __future__ import annotations

import re

_REASONING_BLOCK = re.compile(
    r"<(think|thinking|reasoning|reflection|scratchpad)>.*?</\1>", re.IGNORECASE | re.DOTALL
)
_OPEN_TAG = re.compile(r"<(think|thinking|reasoning|reflection|scratchpad)>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</(think|thinking|reasoning|reflection|scratchpad)>", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def clean_reply(text: str, prompt: str = "") -> str:
    """The answer part of a reply: no reasoning blocks, no echoed prompt, no terminal colours."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _REASONING_BLOCK.sub("", text)
    closes = list(_CLOSE_TAG.finditer(text))
    if closes:
        close = closes[-1]
        text = text[close.end():]  # a closing tag whose opener was cut: the answer follows it
    opened = _OPEN_TAG.search(text)
    if opened is not None:
        text = text[: opened.start()]  # reasoning that never closed: a truncated reply
    echo = prompt.strip()
    if echo and echo in text:
        text = text.replace(echo, "")
    return text.strip()


def fresh_lines(reply: str, prompt: str) -> list[str]:
    """The reply's lines, without those that repeat a line of the prompt word for word.

    A partly echoed prompt (its instructions, its examples) would otherwise read as an answer.
    """
    echoed = {line.strip() for line in prompt.splitlines() if line.strip()}
    return [line for line in reply.splitlines() if line.strip() and line.strip() not in echoed]
