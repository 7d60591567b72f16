"""A basic-memory project folder (its knowledge graph) read as notes (by `gitmem import
basic-memory` and by a basic-memory project mounted as a space).

Each note (a Markdown file with front matter `title`, `type`, `tags`, `permalink`) becomes, in
the topic of its folder (`people/ana.md` -> topic `people`; notes at the top: the project's name):
- one entry for the note itself (its prose: the text that is neither an observation nor a
  relation; the title when there is none);
- one entry per observation `- [category] text #tag (context)`, its layer from the category
  (decision -> decisions, lesson -> learnings, technique/method -> procedural, event -> episodic,
  else guessed from the wording), linked to its note as `entity`, category and tags kept as fields;
- typed links for its relations `- relation_type [[Target]]` and for `[[wiki links]]` in the
  prose, resolved by note title, permalink or file name once every note is read; a link naming
  no note is reported, not invented.
"""

from __future__ import annotations

import re
from pathlib import Path

from gitmem.notes.model import (
    Note,
    ReadContext,
    SourceFile,
    display_path,
    malformed,
    read_source_text,
    real_folder,
    real_path,
)
from gitmem.notes.sections import split_front_matter

_OBSERVATION_RE = re.compile(r"^\s*[-*]\s+\[(?P<category>[^\[\]]+)\]\s+(?P<text>.+?)\s*$")
_RELATION_RE = re.compile(r"^\s*[-*]\s+(?P<type>[A-Za-z_][\w-]*)\s+\[\[(?P<target>[^\[\]]+)\]\]\s*(?:\((?P<context>[^)]*)\))?\s*$")
_WIKI_RE = re.compile(r"\[\[([^\[\]|#]+)(?:[|#][^\[\]]*)?\]\]")
_TAG_RE = re.compile(r"(?<![\w&])#([\w/-]+)")
_CONTEXT_RE = re.compile(r"\s*\(([^()]*)\)\s*$")
_SECTION_RE = re.compile(r"^#{2,6}\s+(observations|relations)\s*$", re.IGNORECASE)
_CATEGORY_LAYERS = {
    "decision": "decisions", "decisions": "decisions", "choice": "decisions",
    "lesson": "learnings", "learning": "learnings", "mistake": "learnings", "gotcha": "learnings",
    "technique": "procedural", "method": "procedural", "procedure": "procedural", "howto": "procedural",
    "step": "procedural", "approach": "procedural", "tip": "procedural",
    "event": "episodic", "meeting": "episodic", "status": "episodic", "milestone": "episodic",
    "fact": "semantic", "requirement": "semantic", "constraint": "semantic", "preference": "semantic",
}
_RELATION_TYPES = {
    "relates_to": "semantic", "related_to": "semantic", "similar_to": "semantic", "contrasts_with": "semantic",
    "depends_on": "causal", "requires": "causal", "caused_by": "causal", "blocked_by": "causal",
    "because_of": "causal", "enables": "causal", "leads_to": "causal",
    "part_of": "entity", "implements": "entity", "belongs_to": "entity", "contains": "entity",
    "is_a": "entity", "instance_of": "entity", "member_of": "entity", "has": "entity",
    "follows": "temporal", "precedes": "temporal", "after": "temporal", "before": "temporal",
    "supersedes": "temporal", "replaces": "temporal",
}
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _observation(category: str, raw: str) -> tuple[str, list[str], str]:
    """(text, tags, context) of an observation's rest."""
    context = ""
    found = _CONTEXT_RE.search(raw)
    if found:
        context, raw = found.group(1).strip(), raw[: found.start()]
    tags = _TAG_RE.findall(raw)
    text = _TAG_RE.sub("", raw).strip() if tags and _TAG_RE.sub("", raw).strip() else raw.strip()
    return " ".join(text.split()), tags, context


def read_note(path: Path, project: Path, context: ReadContext) -> SourceFile:
    resolved = real_path(path)  # resolved once: it costs a look at the disk
    shown = display_path(path, project, context.home, resolved)
    text = read_source_text(path, shown)
    meta, rest, start = split_front_matter(text, shown)
    try:
        relative = resolved.relative_to(real_folder(project)).with_suffix("").as_posix()
    except ValueError:
        raise malformed(shown, 1, "a link to a file outside the folder") from None
    folder = relative.rpartition("/")[0] or project.name  # a folder of notes is one topic
    title = str(meta.get("title") or path.stem).strip() or path.stem
    permalink = str(meta.get("permalink") or "").strip()
    tags = meta.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    else:  # a list as the format says; a lone number or a mapping as one tag
        tags = [str(t) for t in tags] if isinstance(tags, list) else [str(tags)]
    prose: list[str] = []
    observations: list[Note] = []
    links: list[tuple[str, str]] = []
    fence = ""
    for number, line in enumerate(rest.split("\n"), start):
        opened = FENCE_RE.match(line)
        if fence or opened:
            if fence and opened and opened.group(1)[0] == fence[0]:
                fence = ""
            elif not fence and opened:
                fence = opened.group(1)
            prose.append(line)
            continue
        relation = _RELATION_RE.match(line)
        observation = _OBSERVATION_RE.match(line) if relation is None else None
        if relation is not None:
            links.append((_RELATION_TYPES.get(relation.group("type").lower(), "semantic"),
                          relation.group("target").strip()))
        elif observation is not None and observation.group("category").strip().lower() not in ("x", ""):
            category = observation.group("category").strip()
            words, own_tags, why = _observation(category, observation.group("text"))
            if not words:
                raise malformed(shown, number, "an observation without text")
            fields = {"Category": category}
            if own_tags:
                fields["Tags"] = ", ".join(own_tags)
            if why:
                fields["Context"] = why
            observations.append(Note(anchor=f"obs-{len(observations) + 1}", title=words, body=words,
                                     topic=folder, line=number,
                                     layer=_CATEGORY_LAYERS.get(category.lower()), fields=fields,
                                     links=(("entity", title),)))
        elif not _SECTION_RE.match(line) and line.strip() not in (f"# {title}",):
            prose.append(line)
    body = "\n".join(prose).strip()
    links += [("semantic", name.strip()) for name in _WIKI_RE.findall(body)]
    fields = {"Tags": ", ".join(tags)} if tags else {}
    if meta.get("type") and str(meta["type"]) != "note":
        fields["Type"] = str(meta["type"])
    aliases = tuple(a for a in (permalink, path.stem, relative) if a)
    note = Note(anchor="note", title=title, body=body or title, topic=folder, line=start,
                layer=None, fields=fields, links=tuple(links), aliases=aliases)
    return SourceFile(shown, text, project, [note, *observations])
