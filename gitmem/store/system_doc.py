"""SYSTEM.md: the store's self-description, rendered from SYSTEM.template.md."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.format import layers as L
from gitmem.fsio import read_regular_file
from gitmem.redaction import redact
from gitmem.resources import read_text as read_resource
from gitmem.store.registry import Registry

# Bump when the template or what is rendered into it changes meaning.
SYSTEM_DOC_VERSION = "7"  # 3: hot memory and documents; 4: the entry rule; 5: Related links
# and Paths; 6: rendered by every write; 7: the holdings count the runtime and document tiers
_VERSION_RE = re.compile(r"gitmem-system-doc-version:\s*([0-9A-Za-z.-]+)")
Counts = dict[tuple[str, str], tuple[int, int]]  # (scope, layer) -> (topic files, entries)
Tiers = dict[tuple[str, str], int]  # (scope, "runtime (user)" | ... | "documents (archived)") -> items
Reader = Callable[[str], bytes | None]  # a file of the tree by its path (None: absent)


def _layer_rows() -> str:
    rows = []
    for name, spec in L.LAYERS.items():
        scopes = " + ".join(s for s, ok in (("global", spec.global_ok), ("workspace", spec.workspace_ok)) if ok)
        rows.append(f"| {name} | {scopes} | {spec.description} |")
    return "\n".join(rows)


def _records(read: Reader, relpath: str, key: str) -> list[dict[str, object]]:
    """The records a runtime or document file holds; none when absent or unreadable (`gitmem
    check` reports a broken one; SYSTEM.md counts what can be read)."""
    from gitmem.format.records import load_record_list

    data = read(relpath)
    if data is None:
        return []
    try:
        raws, _extra = load_record_list(data.decode("utf-8"), relpath, key)
    except (ValueError, GitmemError):
        return []
    return [raw for raw in raws if isinstance(raw, dict)]


def tier_counts(scopes: Iterable[str], read: Reader) -> Tiers:
    """Runtime items by target and documents by status, per scope, read from the files."""
    from gitmem.store.tree import DOCUMENT_INDEX, RUNTIME_RECORDS

    tiers: Tiers = {}
    for scope in scopes:
        base = L.scope_dir(scope)
        for item in _records(read, f"{base}/{RUNTIME_RECORDS}", "items"):
            target = "user" if item.get("target") == "user" else "memory"
            tiers[(scope, f"runtime ({target})")] = tiers.get((scope, f"runtime ({target})"), 0) + 1
        for doc in _records(read, f"{base}/{DOCUMENT_INDEX}", "documents"):
            status = "archived" if doc.get("status") == "archived" else "active"
            tiers[(scope, f"documents ({status})")] = tiers.get((scope, f"documents ({status})"), 0) + 1
    return tiers


def _count_rows(counts: Counts, tiers: Tiers | None = None) -> str:
    rows = [(scope, 0, layer, str(files), entries) for (scope, layer), (files, entries) in counts.items()]
    rows += [(scope, 1, tier, "—", items) for (scope, tier), items in (tiers or {}).items()]
    rows.sort(key=lambda row: (row[0] != L.GLOBAL, row[0], row[1], row[2]))
    lines = [f"| {scope} | {what} | {files} | {entries} |" for scope, _tier, what, files, entries in rows]
    return "\n".join(lines) or "| — | — | 0 | 0 |"


@functools.cache
def _template() -> str:
    return read_resource("SYSTEM.template.md")


def render_system_doc(registry: Registry, counts: Counts, tiers: Tiers | None = None) -> str:
    """Fill the template with live configuration (no secrets) and what the store holds."""
    remote = registry.git.get("remote")
    windows = ", ".join(f"{k} {v} d" for k, v in registry.freshness_windows().items())
    values = {
        "version": SYSTEM_DOC_VERSION,
        "remote": f"`{redact(str(remote))}`" if remote else "none (local only)",
        "branch": str(registry.git.get("branch") or "main"),
        "windows": windows,
        "workspaces": ", ".join(f"`{k}`" for k in sorted(registry.workspaces)) or "none yet",
        "table": _count_rows(counts, tiers),
        "layers": _layer_rows(),
    }
    text = _template()
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def system_doc_version(text: str) -> str | None:
    match = _VERSION_RE.search(text)
    return match.group(1) if match else None


def system_doc_stale(root: Path) -> bool:
    """True when SYSTEM.md is missing or was written by another document version."""
    try:
        text = read_regular_file(root / "SYSTEM.md").decode("utf-8", errors="replace")
    except OSError:
        return True
    return system_doc_version(text) != SYSTEM_DOC_VERSION
