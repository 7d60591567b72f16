"""Search reranked by the model ladder (`search --rerank`, setting search.rerank, MCP `rerank`).

The lexical top RERANK_DEPTH hits go to the ladder in one short prompt; the model answers with
the numbers of the helpful entries, best first, and those come first in that order, the rest
after them in lexical order. It is a quick, best-effort call (models/ladder.py `cap`): a model
that fails, times out after RERANK_SECONDS or names no entry leaves the lexical order, with a
note saying why, never an error; no rung is benched for it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gitmem.errors import ModelError

if TYPE_CHECKING:
    from gitmem.store.store import Store

RERANK_DEPTH = 30
RERANK_SECONDS = 20.0
SNIPPET_CHARS = 160

PROMPT = """You rank search results from a project's memory for one question.
Question: {query}

Entries, numbered:
{entries}

Reply with the numbers of the entries that help answer the question, most helpful first,
separated by commas, on one line. Leave out the entries that do not help. Nothing else.
"""


def rerank_wanted(store: Store, rerank: bool | None) -> bool:
    """The caller's choice, else the store's setting search.rerank (off by default)."""
    if rerank is not None:
        return rerank
    from gitmem.store.settings import search_rerank

    return search_rerank(store.registry)


def prompt_for(query: str, hits: list[dict[str, Any]]) -> str:
    """The rerank prompt: the question and each hit's title and snippet, numbered from 1."""
    lines = []
    for number, hit in enumerate(hits, 1):
        text = " ".join(str(hit.get("snippet") or "").split())[:SNIPPET_CHARS]
        lines.append(f"[{number}] {hit.get('title', '')} — {text}")
    return PROMPT.format(query=" ".join(query.split()), entries="\n".join(lines))


def order_from(reply: str, count: int) -> list[int]:
    """The entry numbers (0-based) a reply names, first mention first, valid ones only."""
    seen: dict[int, None] = {}
    for token in re.findall(r"\d+", reply):
        number = int(token)
        if 1 <= number <= count:
            seen.setdefault(number - 1, None)
    return list(seen)


def rerank(store: Store, query: str, hits: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """`hits` (lexical order) reordered by the model's answer, cut to `limit`; on any failure
    the lexical order, with a note in store.notes."""
    head, tail = hits[:RERANK_DEPTH], hits[RERANK_DEPTH:]
    if len(head) < 2:
        return hits[:limit]
    try:
        from gitmem.models.ladder import ask  # loaded only when a rerank is asked for

        reply = ask(store.root, prompt_for(query, head), purpose="rerank", cap=RERANK_SECONDS)
    except ModelError as exc:
        store.notes.append(f"rerank skipped, lexical order kept: {exc}")
        return hits[:limit]
    order = order_from(reply.text, len(head))
    if not order:
        store.notes.append(f"rerank skipped, lexical order kept: the reply of {reply.rung} named "
                           "no entry")
        return hits[:limit]
    rest = [i for i in range(len(head)) if i not in set(order)]
    return ([head[i] for i in order] + [head[i] for i in rest] + tail)[:limit]


def search(store: Store, query: str, *, rerank_hits: bool | None = None, limit: int = 10,
           **options: Any) -> list[dict[str, Any]]:
    """verbs.search.search, reranked by the model when asked (or set): the lexical top
    RERANK_DEPTH hits are fetched, reordered and cut to `limit`."""
    from gitmem.verbs.search import search as lexical

    if not rerank_wanted(store, rerank_hits):
        return lexical(store, query, limit=limit, **options)
    hits = lexical(store, query, limit=max(limit, RERANK_DEPTH), **options)
    return rerank(store, query, hits, limit)
