"""Legacy stores kept entries directly in a layer file; they move into topic files (idempotent)."""

from __future__ import annotations

from gitmem.errors import ParseError
from gitmem.format import layers as L
from gitmem.format.entry import TopicFile
from gitmem.format.markdown import entry_lines, new_topic_file
from gitmem.store.paths import topic_slug
from gitmem.store.store import Store, WriteTxn
from gitmem.store.tree import read_memory_text


def migrate_legacy_layer(store: Store, txn: WriteTxn, key: str, layer: str) -> list[str]:
    """Move entries still kept directly in a layer file into topic files (idempotent)."""
    if L.layer_spec(layer).shape != "topics":
        return []
    relpath = L.layer_index_path(key, layer)
    try:
        text = read_memory_text(store.root, relpath)
    except FileNotFoundError:
        return []
    except ParseError:
        return []  # nothing to move that can be read; `gitmem check` reports the file
    if not entry_lines(text):
        return []  # a generated index has no entry headings: no need to parse it
    legacy = store.read_file(relpath)
    if legacy is None or not legacy.entries:
        return []
    moved: dict[str, TopicFile] = {}
    numbers = [parsed.number for e in legacy.entries if e.id and (parsed := L.parse_id(e.id))]
    next_number = max([store.catalog.max_number(key, layer), *numbers])
    for entry in legacy.entries:
        topic_name = entry.get("Topic") or "general"
        if "Topic" in entry.fields:
            entry = entry.with_fields(Topic=None)
        if not entry.id:
            next_number += 1
            entry = entry.with_fields(Id=L.format_id(key, layer, next_number))
        elif entry.raw is not None and not entry.raw.endswith(("\n", "\r")):
            entry = entry.with_fields()  # the file's last line had no newline: render canonically
        target = L.topic_path(key, layer, topic_slug(topic_name))
        if target not in moved:
            moved[target] = store.read_file(target) or new_topic_file(
                {"topic": topic_name, "layer": layer, "scope": key}, topic_name)
        moved[target].entries.append(entry)
    for target, document in moved.items():
        store.write_topic(txn, target, document)
    # The layer file becomes the generated index once the catalog sees the topic files.
    store.write_file(txn, relpath, "")
    store.catalog.refresh(list(moved), store.read_file)
    return list(moved)
