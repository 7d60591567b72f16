"""The consolidation reply protocol. One line per fact,

    - [<digest> | global|workspace:<key> | <layer> | <importance>] <topic> :: <text>

(optional further fields in the brackets: the volatility, and the model's confidence in the fact,
0 to 1 or a percentage; a fact without one counts as confident), and `DONE <digest>` per digest
handled. Lines are read one at a time: prose, reasoning and an echoed prompt are ignored, a bad
line is rejected with its reason and the rest still count. A reply with no protocol line at all
may be JSON, read with escalating recovery."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gitmem.consolidate.jsonrecover import records, recover
from gitmem.format.entry import IMPORTANCE_VALUES, VOLATILITY_VALUES
from gitmem.models.reply import fresh_lines
from gitmem.secrets.mask import clip

LAYERS = ("semantic", "episodic", "procedural", "learnings", "decisions", "codebase")
_SYNONYMS = {"learning": "learnings", "lesson": "learnings", "lessons": "learnings",
             "decision": "decisions", "fact": "semantic", "facts": "semantic",
             "procedure": "procedural", "event": "episodic", "events": "episodic"}
_FACT = re.compile(r"^\s*(?:[-*•]\s*)?\[(?P<fields>[^\[\]]*)\]\s*(?P<topic>.*?)\s*::\s*(?P<text>.*?)\s*$")
_DONE = re.compile(r"^\s*[-*•]?\s*\**DONE\**:?\s+`?(?P<id>[A-Za-z0-9._-]+)`?\s*\.?\s*$")
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_CONFIDENCE = re.compile(r"^(?:conf(?:idence)?\s*[:=]?\s*)?(?P<n>\d+(?:\.\d+)?|\.\d+)\s*(?P<pct>%?)$", re.I)


@dataclass
class Proposal:
    """One fact the model proposes, attributed to a digest."""

    digest: str
    scope: str  # "global" or a workspace key
    layer: str
    importance: str
    topic: str
    text: str
    volatility: str | None = None
    confidence: float | None = None  # None: the model gave none, which counts as confident


@dataclass
class ParsedReply:
    proposals: list[Proposal] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (line, reason)
    recovery: str = "lines"  # lines | exact | repaired | salvaged | none

    @property
    def attributed(self) -> set[str]:
        return self.done | {p.digest for p in self.proposals}


def _clean(value: Any) -> str:
    return " ".join(str(value or "").split()).strip("`*\"' ")


def _scope(raw: str, workspace: str) -> str | None:
    """'global', the digest's workspace key, or None when a workspace is asked for but unknown."""
    value = raw.strip().lower()
    if value == "global":
        return "global"
    if value.startswith("workspace"):
        key = value.partition(":")[2].strip()
        if workspace:
            return workspace  # the key resolved from the session's own folder wins
        return key if _KEY.match(key) and key != "global" else None
    return None


def check_proposal(raw: dict[str, Any], digests: dict[str, str]) -> Proposal | str:
    """A proposal from its fields, or the reason it is rejected. `digests`: id -> workspace key."""
    digest = _clean(raw.get("digest"))
    if digest not in digests:
        return f"unknown digest {digest!r}" if digest else "no digest named"
    layer = _clean(raw.get("layer")).lower()
    layer = _SYNONYMS.get(layer, layer)
    if layer not in LAYERS:
        return f"unknown layer {layer!r}"
    topic, text = _clean(raw.get("topic")), str(raw.get("text") or "").strip()
    if not topic or not text or topic.startswith("<") or text.startswith("<"):
        return "topic or text missing"
    workspace = digests[digest]
    scope = _scope(_clean(raw.get("scope") or "global"), workspace) or "global"
    if layer == "codebase" and scope == "global":
        if not workspace:
            return "a codebase entry needs the digest's workspace, and it has none"
        scope = workspace
    importance = _clean(raw.get("importance")).lower()
    volatility = _clean(raw.get("volatility")).lower()
    return Proposal(digest, scope, layer, importance if importance in IMPORTANCE_VALUES else "normal",
                    topic[:120], text, volatility if volatility in VOLATILITY_VALUES else None,
                    confidence_of(raw.get("confidence")))


def confidence_of(value: Any) -> float | None:
    """The model's confidence as 0..1 ("0.7", "70%", 0.7, "confidence: 0.7"); None when it gave
    none or none that reads (the fact then counts as confident)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
        return number / 100 if 1 < number <= 100 else number if 0 <= number <= 1 else None
    match = _CONFIDENCE.match(_clean(value))
    if match is None:
        return None
    number = float(match["n"])
    if match["pct"] or number > 1:
        number /= 100
    return number if 0 <= number <= 1 else None


def parse_line(line: str) -> dict[str, Any] | None:
    match = _FACT.match(line)
    if not match:
        return None
    fields = [f.strip() for f in match.group("fields").split("|")]
    names = ("digest", "scope", "layer", "importance")
    raw: dict[str, Any] = dict(zip(names, fields, strict=False))
    for extra in fields[len(names):]:  # the volatility and the confidence, in either order
        raw["confidence" if confidence_of(extra) is not None else "volatility"] = extra
    raw.update(topic=match.group("topic"), text=match.group("text"))
    return raw


def parse_reply(reply: str, prompt: str, digests: dict[str, str]) -> ParsedReply:
    """Read a consolidation reply (see the module docstring)."""
    parsed = ParsedReply()
    seen_protocol = False
    for line in fresh_lines(reply, prompt):
        done = _DONE.match(line)
        if done:
            seen_protocol = True
            if done.group("id") in digests:
                parsed.done.add(done.group("id"))
            else:
                parsed.rejected.append((line.strip(), f"DONE for unknown digest {done.group('id')!r}"))
            continue
        raw = parse_line(line)
        if raw is None:
            continue  # prose, reasoning, headings: not part of the protocol
        seen_protocol = True
        _add(parsed, raw, digests, line.strip())
    if not seen_protocol and _nothing_durable(reply, prompt):
        parsed.done = set(digests)  # one answer for the whole batch: nothing worth keeping
    elif not seen_protocol:
        _from_json(parsed, reply, digests)
    return parsed


def _nothing_durable(reply: str, prompt: str) -> bool:
    """The reply is only NO_DURABLE_CONTENT (the summarizer's word, which models carry over)."""
    lines = [line.strip().strip(".*`'\" ") for line in fresh_lines(reply, prompt)]
    return lines == ["NO_DURABLE_CONTENT"]


def _add(parsed: ParsedReply, raw: dict[str, Any], digests: dict[str, str], source: str) -> None:
    checked = check_proposal(raw, digests)
    if isinstance(checked, str):
        parsed.rejected.append((clip(source, 300), checked))
    else:
        parsed.proposals.append(checked)


def _from_json(parsed: ParsedReply, reply: str, digests: dict[str, str]) -> None:
    value, level = recover(reply)
    if value is None:
        parsed.recovery = "none"
        return
    items, done = records(value)
    parsed.recovery = level
    for digest in done:
        if digest in digests:
            parsed.done.add(digest)
    for item in items:
        if item.get("done") is True and _clean(item.get("digest")) in digests:
            parsed.done.add(_clean(item.get("digest")))
        elif "text" in item or "topic" in item:
            _add(parsed, item, digests, str(item)[:300])
