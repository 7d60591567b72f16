"""SYSTEM.md: the store's self-description, rendered from SYSTEM.template.md."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from gitmem.format import layers as L
from gitmem.fsio import read_regular_file
from gitmem.redaction import redact
from gitmem.resources import read_text as read_resource
from gitmem.store.registry import Registry

# Bump when the template or what is rendered into it changes meaning.
SYSTEM_DOC_VERSION = "6"  # 3: hot memory and documents; 4: the entry rule; 5: Related links
# and Paths; 6: rendered by every write
_VERSION_RE = re.compile(r"gitmem-system-doc-version:\s*([0-9A-Za-z.-]+)")
Counts = dict[tuple[str, str], tuple[int, int]]  # (scope, layer) -> (topic files, entries)


def _layer_rows() -> str:
    rows = []
    for name, spec in L.LAYERS.items():
        scopes = " + ".join(s for s, ok in (("global", spec.global_ok), ("workspace", spec.workspace_ok)) if ok)
        rows.append(f"| {name} | {scopes} | {spec.description} |")
    return "\n".join(rows)


def _count_rows(counts: Counts) -> str:
    rows = [
        f"| {scope} | {layer} | {files} | {entries} |"
        for (scope, layer), (files, entries) in sorted(counts.items())
    ]
    return "\n".join(rows) or "| — | — | 0 | 0 |"


@functools.cache
def _template() -> str:
    return read_resource("SYSTEM.template.md")


def render_system_doc(registry: Registry, counts: Counts) -> str:
    """Fill the template with live configuration (no secrets) and what the store holds."""
    remote = registry.git.get("remote")
    windows = ", ".join(f"{k} {v} d" for k, v in registry.freshness_windows().items())
    values = {
        "version": SYSTEM_DOC_VERSION,
        "remote": f"`{redact(str(remote))}`" if remote else "none (local only)",
        "branch": str(registry.git.get("branch") or "main"),
        "windows": windows,
        "workspaces": ", ".join(f"`{k}`" for k in sorted(registry.workspaces)) or "none yet",
        "table": _count_rows(counts),
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
