"""The page's read views: overview, browse, a topic file, search (the entry, conflicts, hot tier,
settings and review views have modules of their own).

Each view is parse → library call → render; the library functions are the ones the CLI calls.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from html import escape

from gitmem.store import kept
from gitmem.store.store import Store
from gitmem.web.html import (
    GRADES,
    attr,
    badge,
    entry_cards,
    freshness_chart,
    notice,
    shown,
    shown_all,
    table,
    url,
)


class CheckedProblems:
    """The errors of `gitmem check` (verbs.check through verbs.status), kept per store with the
    signature of the files they were read from (store/kept.py): the overview shows them while
    nothing changed, and links to the problems page (which runs the check) when something did."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[tuple[object, ...], list[str], str]] = {}

    def known(self, store: Store) -> tuple[list[str], str] | None:
        last = self._last.get(str(store.root))
        if last is None or last[0] != kept.signature(store, settled_only=False):
            return None
        return last[1], last[2]

    def check(self, store: Store) -> list[str]:
        from datetime import datetime

        from gitmem.verbs.status import status

        signature = kept.signature(store, settled_only=False)
        problems = status(store)["problems"] or []
        if signature is not None:
            self._last[str(store.root)] = (signature, problems, datetime.now().strftime("%H:%M:%S"))
        return list(problems)


CHECKED = CheckedProblems()


class FirstLook:
    """A store the page has never read (or one a pull changed much) costs seconds to count: its
    catalog is brought up to HEAD and its summaries built, reading every file once. That look
    begins in the background once the page has answered its first request (it would slow that
    answer); until it is done the overview shows what needs no count (branch, sync, uncommitted
    files), and the counts after. A store whose catalog is at HEAD already is counted at once."""

    WAIT_SECONDS = 0.5

    def __init__(self) -> None:
        import threading

        self.done = threading.Event()
        self.done.set()  # nothing to wait for until start() arms a look
        self._begun = threading.Event()
        self._store: tuple[Callable[[], Store], Callable[[Store], None]] | None = None

    def start(self, open_store: Callable[[], Store], close: Callable[[Store], None]) -> None:
        """Arm the look: it begins after the first answer (begin)."""
        self._store = (open_store, close)
        self._begun.clear()
        self.done.clear()

    def pending(self) -> bool:
        """Whether the look is armed and not yet begun."""
        return self._store is not None and not self._begun.is_set()

    def begin(self) -> None:
        """Begin the armed look in the background (once)."""
        import threading

        armed = self._store
        if armed is None or self._begun.is_set():
            return
        self._begun.set()

        def run() -> None:
            from gitmem.verbs.status import totals

            open_store, close = armed
            try:
                store = open_store()
                try:
                    totals(store)
                finally:
                    close(store)
            except Exception:  # noqa: BLE001 - the overview counts again and reports what fails
                pass
            finally:
                self.done.set()

        threading.Thread(target=run, name="gitmem-web-first-look", daemon=True).start()

    def ready(self, store: Store) -> bool:
        """Whether the overview may count now: the look is done, the counts are cheap anyway,
        or the look (begun by an earlier answer) ends within WAIT_SECONDS."""
        from gitmem.verbs.status import totals_cheap

        if self.done.is_set():
            return True
        if self._begun.is_set():  # the look writes the catalog: never wait on it, only for it
            return self.done.wait(self.WAIT_SECONDS)
        return totals_cheap(store)


FIRST_LOOK = FirstLook()


def overview(store: Store, csrf: str) -> str:
    """The store at a glance, without reading every file: the counts of verbs.status.totals
    (kept while the files are as they were), the errors of the last check likewise."""
    from gitmem.store.review import queue_length
    from gitmem.verbs.status import glance, totals

    data = glance(store)
    counted = totals(store) if FIRST_LOOK.ready(store) else None
    sync = data.get("sync") or {}
    known = CHECKED.known(store)
    problems = (f'<a href="/problems">{len(known[0])}</a> (checked at {escape(known[1])})' if known
                else '<a href="/problems">check the store</a> (files changed since the last check)')
    counting = "being counted"
    facts = [
        ("Entries", str(counted["entries"]) if counted else counting),
        ("Branch", escape(str(data["branch"]))),
        ("Remote", shown(data.get("remote") or "none")),
        ("Last sync", shown(sync.get("lastSuccess") or sync.get("lastAttempt") or "never")),
        ("Sync outcome", shown(sync.get("result") or sync.get("error") or "—")),
        ("Ahead / behind", _tracking(data.get("tracking"))),
        ("Conflicts", f'<a href="/conflicts">{counted["conflicts"] if counted else counting}</a>'),
        ("Problems", problems),
        ("Pending digests", f'<a href="/review">{escape(str(data.get("pending", 0)))}</a>'),
        ("Review queue", f'<a href="/review">{queue_length(store)}</a>'),
        ("Models", _ladder(data.get("ladder") or {})),
        ("Suspect entries", '<a href="/suspects">list them</a> (code changed since they were verified)'),
        ("Uncommitted files", str(len(data["dirty"]))),
    ]
    facts_html = "<dl class=\"facts\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
    if counted is None:
        return facts_html + notice("gitmem is reading this store's files for the first time (its catalog"
                                   " and the entries' freshness): reload in a moment for the counts")
    scopes = table(("Scope", "Layer", "Topics", "Entries"), [
        (f'<a href="{url("/browse", scope=scope)}">{escape(scope)}</a>',
         f'<a href="{url("/browse", scope=scope, layer=layer)}">{escape(layer)}</a>',
         str(n["topics"]), str(n["entries"]))
        for scope, layers in counted["layers"].items() for layer, n in layers.items()
    ], "Scopes and layers")
    chart = freshness_chart(counted["freshness"])
    return f"{facts_html}<h2>Freshness</h2>{chart}<h2>Where it lives</h2>{scopes}"


def _tracking(found: dict[str, int] | None) -> str:
    if not found:
        return "— (no remote-tracking branch yet)"
    return f"{found['ahead']} to push / {found['behind']} fetched, not merged"


def _ladder(ladder: dict[str, object]) -> str:
    """The model ladder's health: each rung, benched ones with until when; a link to settings."""
    rungs = ladder.get("rungs") or []
    if not isinstance(rungs, list) or not rungs:
        return '<a href="/settings">none</a> (capture keeps clipped notes)'
    shown_rungs = [escape(str(r.get("name"))) + (f" (benched until {escape(str(r.get('benchedUntil')))})"
                                                 if r.get("benched") else " (ready)")
                   for r in rungs if isinstance(r, dict)]
    return f'<a href="/settings">{", ".join(shown_rungs)}</a>'


def suspects(store: Store, csrf: str) -> str:
    """Entries whose code changed since they were last verified, as cards with their Verify button."""
    from gitmem.verbs.reads import suspect_entries

    found = suspect_entries(store)
    if not found:
        return notice("no suspect entries: no entry's code changed since it was verified"
                      " (or no workspace's code repository is known on this machine)")
    return f"<p>{len(found)} entries whose code changed since they were verified.</p>" + entry_cards(found, csrf)


def problems(store: Store, csrf: str) -> str:
    """Every error `gitmem check` finds (it reads every file: as slow as `gitmem status`)."""
    found = CHECKED.check(store)
    if not found:
        return notice("no problems: every file reads as gitmem writes it")
    items = "".join(f"<li><code>{shown(p)}</code></li>" for p in found)
    return f"<p>{len(found)} problems; <code>gitmem check --fix</code> repairs the fixable ones.</p><ul>{items}</ul>"


def browse(store: Store, csrf: str, scope: str = "", layer: str = "") -> str:
    """Scope → layer → topic, each topic a link to its file."""
    from gitmem.verbs.reads import list_entries

    topics: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for record in list_entries(store, include_all=True):
        if (scope and record["scope"] != scope) or (layer and record["layer"] != layer):
            continue
        topics[(record["scope"], record["layer"], record["path"])][record.get("freshness", "fresh")] += 1
    if not topics:
        return notice("no entries here yet")
    rows = []
    for (s, lay, path), grades in sorted(topics.items()):
        summary = " ".join(f"{badge(g)} {grades[g]}" for g in GRADES if grades.get(g))
        rows.append((escape(s), escape(lay), f'<a href="{url("/topic", path=path)}">{shown(path)}</a>',
                     summary))
    return table(("Scope", "Layer", "Topic file", "Freshness"), rows, "Topic files")


def topic(store: Store, csrf: str, path: str) -> tuple[int, str]:
    """One topic file: its entries as cards, in file order."""
    from gitmem.verbs.reads import topic_records

    records = topic_records(store, path)
    if not records:
        return 200, notice(f"no entries in {path} yet")
    return 200, f"<p><code>{shown(path)}</code></p>" + entry_cards(records, csrf)


def search_form(query: str, filters: dict[str, str]) -> str:
    def choice(name: str, options: tuple[str, ...]) -> str:
        opts = "".join(f'<option value="{attr(o)}"{" selected" if filters.get(name) == o else ""}>'
                       f"{escape(o or 'any')}</option>" for o in options)
        return f'<label>{escape(name.capitalize())} <select name="{name}">{opts}</select></label>'

    from gitmem.format.layers import LAYERS

    layers = ("", *LAYERS, "documents")
    return (
        '<form role="search" action="/search" method="get" id="search-form" class="search">'
        '<label for="q">Search memory</label>'
        f'<input type="search" id="q" name="q" value="{attr(query)}" autofocus autocomplete="off"'
        ' data-live="/search">'
        f'{choice("layer", layers)}{choice("scope", ("", "global", "workspace"))}'
        f'<label>Workspace <input name="workspace" value="{attr(filters.get("workspace", ""))}"></label>'
        f'<label>Space <input name="space" value="{attr(filters.get("space", ""))}"></label>'
        f'{choice("freshness", ("", *GRADES))}'
        '<button type="submit">Search</button></form>'
    )


RESULTS_SHOWN = 50  # hits on the results page
LIVE_SHOWN = 20  # hits shown while a person types: the best of the same ranking


def search_results(store: Store, query: str, filters: dict[str, str], *, live: bool = False) -> str:
    """The hits of `gitmem search`, same ranking, with path:line and freshness; `live`: the
    first LIVE_SHOWN of them, as the search box shows them while a person types."""
    from gitmem.verbs.search import search

    if not query.strip():
        return '<div id="results" aria-live="polite"></div>'
    shown = LIVE_SHOWN if live else RESULTS_SHOWN
    hits = search(store, query, scope=filters.get("scope") or None,
                  workspace=filters.get("workspace") or None, layer=filters.get("layer") or None,
                  space=filters.get("space") or None, limit=shown)
    wanted = filters.get("freshness")
    hits = [h for h in hits if not wanted or h.get("freshness") == wanted]
    if not hits:
        return '<div id="results" aria-live="polite"><p>No matches.</p></div>'
    items = []
    paths = shown_all(hit["path"] for hit in hits)  # the verb masked title and snippet already
    for hit, path in zip(hits, paths, strict=True):
        ref = hit.get("ref") or hit.get("id") or ""
        title = escape(hit["title"])
        link = f'<a href="{url("/entry", id=ref)}">{title}</a>' if ref else title
        items.append(
            f'<li class="hit"><h2>{link} {badge(hit.get("freshness", "fresh"))}</h2>'
            f'<p class="where"><code>{path}:{hit["line"]}</code>'
            f' {escape(hit["scope"])}/{escape(hit["layer"])}</p>'
            f'<p class="snippet">{escape(hit.get("snippet", ""))}</p></li>'
        )
    count = (f"The best {len(hits)} results: press Enter for up to {RESULTS_SHOWN}"
             if live and len(hits) == LIVE_SHOWN and not wanted else f"{len(hits)} results")
    return (f'<div id="results" aria-live="polite"><p>{count}</p>'
            f'<ol class="hits">{"".join(items)}</ol></div>')
