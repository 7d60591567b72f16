"""A topic file renamed: its front matter and title follow the new name (pure).

One rule for `gitmem mv-topic` and for a `git mv` committed with gitmem's hooks: a `topic` gitmem
gave (the old file name, or the file's own `# title`) becomes the new name, a `layer` naming the
old layer names the new one, and a `# title` that was the old name (or the old `topic`) becomes
the new name. Anything the person wrote differently stays as it is.
"""

from __future__ import annotations

from gitmem.format.entry import TopicFile
from gitmem.format.layers import FileRole
from gitmem.format.markdown import render_frontmatter


def title_of(preamble: str) -> str | None:
    """The H1 a topic file opens with (`# deploy`), or None."""
    for line in preamble.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
        if line.strip():
            return None
    return None


def follow_rename(document: TopicFile, before: FileRole, after: FileRole, title: str) -> bool:
    """Make `document` (moved from `before` to `after`, named `title` now) say its new name and
    layer; True when anything changed."""
    heading, named = title_of(document.preamble), document.meta.get("topic")
    renamed = {**document.meta}
    if named in (before.slug, heading) and named != title:  # a title gitmem gave follows the name
        renamed["topic"] = title
    if renamed.get("layer") == before.layer:
        renamed["layer"] = after.layer
    changed = False
    if renamed != document.meta and document.frontmatter_raw:
        document.frontmatter_raw = render_frontmatter(renamed, document.newline)
        document.meta = renamed
        changed = True
    if heading is not None and heading != title and heading in (before.slug, named):
        document.preamble = document.preamble.replace(f"# {heading}", f"# {title}", 1)
        changed = True
    return changed
