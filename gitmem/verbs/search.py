"""Search and reindex over the store: scope resolution on top of the search index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from gitmem.errors import InvalidInputError, StoreStateError
from gitmem.format import layers as L
from gitmem.secrets.mask import hide_all, hide_secrets

if TYPE_CHECKING:
    from gitmem.store.store import Store

MAX_LIMIT = 200
DOCUMENTS = "documents"  # project documents are searched like a layer


def search_scopes(store: Store, scope: str | None, workspace: str | None) -> list[str] | None:
    """None = every scope; a workspace search covers that workspace plus global."""
    if scope == "global":
        return [L.GLOBAL]
    if scope == "workspace" or workspace is not None or store.workspace_flag:
        return [store.resolve_workspace(workspace), L.GLOBAL]
    return None


def freshness_windows(store: Store) -> dict[str, int]:
    """The store's freshness windows (memory.json settings.freshness), days by volatility."""
    try:
        return store.registry.freshness_windows()
    except (TypeError, ValueError) as exc:
        raise StoreStateError(
            f"memory.json settings.freshness must give whole days per volatility ({exc}); fix it by hand"
        ) from exc


def search(
    store: Store,
    query: str,
    *,
    scope: str | None = None,
    workspace: str | None = None,
    layer: str | None = None,
    limit: int = 10,
    include_all: bool = False,
    space: str | None = None,
    explain: bool = False,
) -> list[dict[str, Any]]:
    """Ranked hits as JSON-ready dicts over the store and its active spaces (or the one `space`
    names), each labelled with its space; the index absorbs out-of-band edits first.
    `explain`: each hit carries why it ranked where it did."""
    if not query.strip():
        raise InvalidInputError("query must not be empty")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"--limit must be between 1 and {MAX_LIMIT}")
    if layer is not None and layer != DOCUMENTS:
        L.layer_spec(layer)
    store.require()
    scopes = search_scopes(store, scope, workspace)
    def run(target: Store, count: int) -> list[dict[str, Any]]:
        # Each space grades freshness with its own configured windows.
        # The stored texts are masked whole (and kept masked: hide_all), then the snippet cut.
        hits = target.search_index().search(query, scopes=scopes, layer=layer, limit=count,
                                            include_all=include_all, now=store.today(),
                                            windows=freshness_windows(target), explain=explain,
                                            shown=hide_all)
        found = [hit.id for hit in hits if hit.layer == DOCUMENTS and hit.id]
        if found:  # machine-local: a search never makes a commit
            from gitmem.documents.access import access_stamp, record_access

            record_access(target.root, found, access_stamp(store.now()))
        # A shallow copy: the hit's fields are plain values, and asdict's deep copy was a fifth
        # of a search's time.
        return _shown([{f.name: getattr(hit, f.name) for f in fields(hit)} for hit in hits])

    from gitmem.spaces.search import search_spaces
    from gitmem.verbs.suspects import mark_hits

    results = search_spaces(store, run, limit, space=space)
    mark_hits(store, results)
    return results


def _shown(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits as printed: title, snippet and source came masked from the index (search's `shown`);
    so is what an explanation quotes."""
    for hit in hits:
        if hit.get("explain") is None:
            hit.pop("explain", None)
        else:
            hit["explain"] = _masked(hit["explain"])
    return hits


def _masked(value: Any) -> Any:
    """Every string inside an explanation with its credentials hidden (terms come from text)."""
    if isinstance(value, str):
        return hide_secrets(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


def skipped_files(store: Store, scope: str | None = None, workspace: str | None = None) -> list[str]:
    """Files in the scopes searched that the index could not read (after a search refreshed it)."""
    scopes = search_scopes(store, scope, workspace)
    return sorted(p for p in store.search_index().unreadable()
                  if scopes is None or L.classify_path(p).scope in scopes)


def reindex(store: Store, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild the search index from the files; returns the number of entries indexed."""
    store.require()
    return store.search_index().rebuild(progress)
