"""The page's read views: overview, browse, a topic file, search (the entry, conflicts, hot tier,
settings and review views have modules of their own).

Each view is parse → library call → render; the library functions are the ones the CLI calls.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from html import escape

from gitmem.store.store import Store
from gitmem.web.html import (
    GRADES,
    attr,
    badge,
    entry_card,
    freshness_chart,
    notice,
    shown,
    table,
    url,
)


def _signature(store: Store) -> tuple[object, ...]:
    """What the check's answer depends on: HEAD, the files that differ from it (with their
    stat), today. The same signature means the same files: the last check still holds."""
    dirty = store.git.dirty_paths()
    stats = []
    for relpath in dirty:
        try:
            info = store.path(relpath).stat()
            stats.append((relpath, info.st_mtime_ns, info.st_size))
        except OSError:
            stats.append((relpath, 0, -1))
    return (store.git.head_oid(), tuple(stats), store.today().isoformat())


class CheckedProblems:
    """The errors of `gitmem check` (verbs.check through verbs.status), kept per store with the
    signature of the files they were read from: the overview shows them while nothing changed,
    and links to the problems page (which runs the check) when something did."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[tuple[object, ...], list[str], str]] = {}

    def known(self, store: Store) -> tuple[list[str], str] | None:
        last = self._last.get(str(store.root))
        if last is None or last[0] != _signature(store):
            return None
        return last[1], last[2]

    def check(self, store: Store) -> list[str]:
        from datetime import datetime

        from gitmem.verbs.status import status

        signature = _signature(store)
        problems = status(store)["problems"] or []
        self._last[str(store.root)] = (signature, problems, datetime.now().strftime("%H:%M:%S"))
        return list(problems)


CHECKED = CheckedProblems()


class FirstCount:
    """The summaries the freshness bars are counted from are built once per store, when a file
    is first read (seconds for a large store never summarized). The page starts that count in
    the background at start; the overview waits for it a moment, then shows the rest without
    the bars rather than keep the first page waiting."""

    WAIT_SECONDS = 1.5

    def __init__(self) -> None:
        import threading

        self.done = threading.Event()
        self.done.set()  # nothing to wait for until start() begins a count

    def start(self, open_store: Callable[[], Store], close: Callable[[Store], None]) -> None:
        import threading

        def run() -> None:
            from gitmem.verbs.reads import freshness_counts

            try:
                store = open_store()
                try:
                    freshness_counts(store)
                finally:
                    close(store)
            except Exception:  # noqa: BLE001 - the overview counts again and reports what fails
                pass
            finally:
                self.done.set()

        self.done.clear()
        threading.Thread(target=run, name="gitmem-web-first-count", daemon=True).start()

    def ready(self) -> bool:
        return self.done.wait(self.WAIT_SECONDS)


FIRST_COUNT = FirstCount()


def overview(store: Store, csrf: str) -> str:
    """The store at a glance, without reading every file: counts from the catalog, freshness
    from the summaries, the errors of the last check while the files are as they were."""
    from gitmem.sync.conflicts import list_conflicts
    from gitmem.verbs.reads import freshness_counts
    from gitmem.verbs.status import status

    data = status(store, check=False)
    scopes = table(("Scope", "Layer", "Topics", "Entries"), [
        (f'<a href="{url("/browse", scope=scope)}">{escape(scope)}</a>',
         f'<a href="{url("/browse", scope=scope, layer=layer)}">{escape(layer)}</a>',
         str(n["topics"]), str(n["entries"]))
        for scope, layers in data["layers"].items() for layer, n in layers.items()
    ], "Scopes and layers")
    conflicts = list_conflicts(store)
    sync = data.get("sync") or {}
    known = CHECKED.known(store)
    problems = (f'<a href="/problems">{len(known[0])}</a> (checked at {escape(known[1])})' if known
                else '<a href="/problems">check the store</a> (files changed since the last check)')
    facts = [
        ("Entries", str(data["entries"])),
        ("Branch", escape(str(data["branch"]))),
        ("Remote", shown(data.get("remote") or "none")),
        ("Last sync", shown(sync.get("lastSuccess") or sync.get("lastAttempt") or "never")),
        ("Sync outcome", shown(sync.get("outcome") or sync.get("error") or "—")),
        ("Conflicts", f'<a href="/conflicts">{len(conflicts)}</a>'),
        ("Problems", problems),
        ("Pending digests", f'<a href="/review">{escape(str(data.get("pending", 0)))}</a>'),
        ("Uncommitted files", str(len(data["dirty"]))),
    ]
    facts_html = "<dl class=\"facts\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
    chart = (freshness_chart(freshness_counts(store)) if FIRST_COUNT.ready() else
             notice("the entries' freshness is being counted for the first time in this store:"
                    " reload in a moment"))
    return f"{facts_html}<h2>Freshness</h2>{chart}<h2>Where it lives</h2>{scopes}"


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
    return 200, f"<p><code>{shown(path)}</code></p>" + "".join(
        entry_card(r, csrf) for r in records)


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


def search_results(store: Store, query: str, filters: dict[str, str]) -> str:
    """The hits of `gitmem search`, same ranking, with path:line and freshness."""
    from gitmem.verbs.search import search

    if not query.strip():
        return '<div id="results" aria-live="polite"></div>'
    hits = search(store, query, scope=filters.get("scope") or None,
                  workspace=filters.get("workspace") or None, layer=filters.get("layer") or None,
                  space=filters.get("space") or None, limit=50)
    wanted = filters.get("freshness")
    hits = [h for h in hits if not wanted or h.get("freshness") == wanted]
    if not hits:
        return '<div id="results" aria-live="polite"><p>No matches.</p></div>'
    items = []
    for hit in hits:
        ref = hit.get("ref") or hit.get("id") or ""
        title = escape(hit["title"])  # the search verb masked title and snippet already
        link = f'<a href="{url("/entry", id=ref)}">{title}</a>' if ref else title
        items.append(
            f'<li class="hit"><h2>{link} {badge(hit.get("freshness", "fresh"))}</h2>'
            f'<p class="where"><code>{shown(hit["path"])}:{hit["line"]}</code>'
            f' {escape(hit["scope"])}/{escape(hit["layer"])}</p>'
            f'<p class="snippet">{escape(hit.get("snippet", ""))}</p></li>'
        )
    return (f'<div id="results" aria-live="polite"><p>{len(hits)} results</p>'
            f'<ol class="hits">{"".join(items)}</ol></div>')
