"""Escalating recovery of JSON a model volunteered: exact, then repaired (trailing commas, Python
literals, unquoted placeholders, fences), then salvaged (every complete object the text holds),
so a truncated or sloppy reply degrades instead of failing the whole pass."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)(?:```|\Z)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PLACEHOLDER = re.compile(r"(:\s*)<[^<>\"\n]{1,40}>")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_PY_LITERAL = re.compile(r"(:\s*)(True|False|None)\b")
_DONE_LIST = re.compile(r"\"done\"\s*:\s*\[([^\]]*)\]", re.IGNORECASE)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _repair(text: str) -> str:
    text = _TRAILING_COMMA.sub(r"\1", text)
    text = _PLACEHOLDER.sub(r"\1null", text)
    return _PY_LITERAL.sub(lambda m: m.group(1) + _PY_LITERALS[m.group(2)], text)


def _span(text: str) -> str:
    """From the first opening bracket to the last closing one."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    ends = [i for i in (text.rfind("}"), text.rfind("]")) if i >= 0]
    if not starts or not ends or max(ends) < min(starts):
        return ""
    return text[min(starts): max(ends) + 1]


def complete_objects(text: str) -> list[dict[str, Any]]:
    """Every {...} in the text that parses (after repair), innermost first; strings respected."""
    found: list[dict[str, Any]] = []
    stack: list[int] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            stack.append(index)
        elif char == "}" and stack:
            start = stack.pop()
            value = _loads(text[start: index + 1]) or _loads(_repair(text[start: index + 1]))
            if isinstance(value, dict):
                found.append(value)
    return found


def recover(text: str) -> tuple[Any, str]:
    """(the JSON value, how it was recovered: exact | repaired | salvaged), or (None, '')."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        value = _loads(candidate)
        if isinstance(value, dict | list):
            return value, "exact"
    for candidate in candidates:
        span = _span(candidate)
        value = _loads(_repair(span)) if span else None
        if isinstance(value, dict | list):
            return value, "repaired"
    objects = complete_objects(text)
    done = [item for m in _DONE_LIST.finditer(text) for item in re.findall(r'"([^"]+)"', m.group(1))]
    if objects or done:
        return {"items": objects, "done": done}, "salvaged"
    return None, ""


def records(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Flatten a recovered value into (records, done ids): a list, or an object holding lists
    under entries / facts / items / actions / results, plus an optional "done" list."""
    items: list[dict[str, Any]] = []
    done: list[str] = []
    if isinstance(value, list):
        items = [v for v in value if isinstance(v, dict)]
    elif isinstance(value, dict):
        for key in ("entries", "facts", "items", "actions", "results", "memories"):
            if isinstance(value.get(key), list):
                items += [v for v in value[key] if isinstance(v, dict)]
        if not items and not isinstance(value.get("done"), list):
            items = [value]
        if isinstance(value.get("done"), list):
            done = [str(d) for d in value["done"] if isinstance(d, str | int)]
    return items, done
