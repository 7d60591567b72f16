"""The page as a Starlette application: routes, one store opened per request, errors as pages.

The views other than the overview and search are imported on their first request: the first page
answers sooner after `gitmem web` starts.

A store is opened for each request, so a hand edit, a `git pull` or a CLI write shows on the next
request without a restart (the index follows the files as it does for the CLI). Endpoints are
plain functions: Starlette runs them in its thread pool, so reads go on side by side; writes take
the store's lock as every gitmem write does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from gitmem import caller
from gitmem.errors import ConflictError, GitmemError, NotFoundError
from gitmem.store import warm
from gitmem.store.store import Store, open_store
from gitmem.web import actions, views
from gitmem.web.access import Access, Guard
from gitmem.web.html import notice, page
from gitmem.web.timing import ServerTiming, with_cpu

ASSETS = Path(__file__).parent / "assets"
ASSET_TYPES = {".css": "text/css", ".js": "text/javascript"}
MAX_FORM_BYTES = 64 * 1024
View = Callable[[Store, Request], tuple[int, str, str]]


def _status_of(exc: GitmemError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConflictError):
        return 409
    return 400


class Page:
    """The store the page serves and the access secrets of this start."""

    def __init__(self, root: Path, workspace: str | None, cwd: Path, access: Access) -> None:
        self.root, self.workspace, self.cwd, self.access = root, workspace, cwd, access

    def open(self) -> Store:
        """A store for one request; it borrows the parts kept open by the last one (store.warm)."""
        store = open_store(self.root, workspace=self.workspace, cwd=self.cwd)
        warm.lend(store)
        return store

    @staticmethod
    def close(store: Store) -> None:
        warm.give_back(store)

    def render(self, request: Request, view: View) -> Response:
        """Run one view on a freshly opened store; a gitmem error becomes a page with a 4xx."""
        return with_cpu(lambda: self._render(request, view))

    def _render(self, request: Request, view: View) -> Response:
        query = request.query_params.get("q", "")
        try:
            store = self.open()
        except GitmemError as exc:
            return HTMLResponse(page("Error", notice(str(exc), "error")), status_code=503)
        try:
            with store.git.one_status():  # the parts of one page see one git status
                status, title, body = view(store, request)
        except GitmemError as exc:
            status, title, body = _status_of(exc), "Error", notice(str(exc), "error")
        finally:
            self.close(store)
        done = request.query_params.get("done")
        if done:
            body = notice(done) + body
        return HTMLResponse(page(title, body, current=request.url.path, query=query,
                                 csrf=self.access.csrf),
                            status_code=status, background=_first_look_after())


def _first_look_after() -> BackgroundTask | None:
    """The first look at the store, begun once this answer is sent (views.FirstLook)."""
    return BackgroundTask(views.FIRST_LOOK.begin) if views.FIRST_LOOK.pending() else None


def _filters(request: Request) -> dict[str, str]:
    return {k: request.query_params.get(k, "") for k in ("layer", "scope", "workspace", "space", "freshness")}


def routes(app: Page) -> list[Route]:
    csrf = app.access.csrf

    def alive(request: Request) -> Response:
        """The open page's keep-alive (static/app.js): a request, so the server counts it as use."""
        return Response(status_code=204)

    def overview(request: Request) -> Response:
        return app.render(request, lambda s, r: (200, "Overview", views.overview(s, csrf)))

    def problems(request: Request) -> Response:
        return app.render(request, lambda s, r: (200, "Problems", views.problems(s, csrf)))

    def suspects(request: Request) -> Response:
        return app.render(request, lambda s, r: (200, "Suspect entries", views.suspects(s, csrf)))

    def browse(request: Request) -> Response:
        return app.render(request, lambda s, r: (200, "Browse", views.browse(
            s, csrf, r.query_params.get("scope", ""), r.query_params.get("layer", ""))))

    def topic(request: Request) -> Response:
        def view(s: Store, r: Request) -> tuple[int, str, str]:
            status, body = views.topic(s, csrf, r.query_params.get("path", ""))
            return status, r.query_params.get("path", "Topic"), body
        return app.render(request, view)

    def search(request: Request) -> Response:
        query, filters = request.query_params.get("q", ""), _filters(request)
        if request.query_params.get("partial"):  # the live search asks for the results alone
            return with_cpu(lambda: _results_part(app, query, filters))
        return app.render(request, lambda s, r: (200, "Search", views.search_form(query, filters)
                                                 + views.search_results(s, query, filters)))

    def entry(request: Request) -> Response:
        entry_id, when = request.query_params.get("id", ""), request.query_params.get("as_of", "")
        from gitmem.web import entry_view

        return app.render(request, lambda s, r: (200, f"Entry {entry_id}",
                                                 entry_view.entry(s, csrf, entry_id, when)))

    def conflicts(request: Request) -> Response:
        from gitmem.web import conflict_view

        return app.render(request, lambda s, r: (200, "Conflicts", conflict_view.conflicts(s, csrf)))

    def hot(request: Request) -> Response:
        from gitmem.web import hot_view

        return app.render(request, lambda s, r: (200, "Hot memory", hot_view.hot(s, csrf)))

    def review(request: Request) -> Response:
        from gitmem.web import review_view

        return app.render(request, lambda s, r: (200, "Capture and review", review_view.review(s, csrf)))

    def settings(request: Request) -> Response:
        from gitmem.web import settings_view

        return app.render(request, lambda s, r: (200, "Settings", settings_view.settings(s, csrf)))

    def document(request: Request) -> Response:
        from gitmem.web import hot_view

        doc_id = request.query_params.get("id", "")
        return app.render(request, lambda s, r: (200, f"Document {doc_id}", hot_view.document(s, csrf, doc_id)))

    async def post(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return HTMLResponse(page("Error", notice("the form is too large", "error")), status_code=413)
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        if not app.access.write_ok(request.headers.get("origin"), form.get("csrf")):
            return HTMLResponse(page("Refused", notice("refused: a write must come from this page", "error")),
                                status_code=403)
        return await _run_action(app, request.url.path, form)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        path = ASSETS / name
        if "/" in name or path.suffix not in ASSET_TYPES or not path.is_file():
            return Response("not found", status_code=404)
        return FileResponse(path, media_type=ASSET_TYPES[path.suffix])

    return [
        Route("/alive", alive), Route("/", overview), Route("/problems", problems), Route("/suspects", suspects), Route("/browse", browse), Route("/topic", topic),
        Route("/search", search), Route("/entry", entry), Route("/conflicts", conflicts),
        Route("/hot", hot), Route("/doc", document), Route("/settings", settings), Route("/review", review), Route("/static/{name}", asset),
        *[Route(path, post, methods=["POST"]) for path in actions.PATHS],
    ]


def _results_part(app: Page, query: str, filters: dict[str, str]) -> Response:
    """The results of a search alone, as the search as you type fetches them."""
    try:
        store = app.open()
        try:
            with store.git.one_status():
                return HTMLResponse(views.search_results(store, query, filters, live=True))
        finally:
            app.close(store)
    except GitmemError as exc:
        return HTMLResponse(notice(str(exc), "error"), status_code=_status_of(exc))


async def _run_action(app: Page, path: str, form: dict[str, str]) -> Response:
    from starlette.concurrency import run_in_threadpool

    def work() -> Response:
        try:
            store = app.open()
        except GitmemError as exc:
            return HTMLResponse(page("Error", notice(str(exc), "error")), status_code=503)
        try:
            target, message = actions.run(store, path, form)
        except GitmemError as exc:
            body = notice(str(exc), "error") + actions.after_refusal(store, path, form)
            return HTMLResponse(page("Not done", body), status_code=_status_of(exc))
        finally:
            app.close(store)
        return RedirectResponse(f"{target}{'&' if '?' in target else '?'}done={_quote(message)}",
                                status_code=303)

    return await run_in_threadpool(work)


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def build(root: Path, *, port: int, workspace: str | None = None, cwd: Path | None = None,
          access: Access | None = None) -> tuple[Any, Access]:
    """The guarded application for the store at `root`, and its access secrets."""
    access = access or Access(port)
    warm.enable()  # this process serves many requests: keep what each would open again
    app = Page(root, workspace, cwd or Path(caller.cwd()), access)
    views.FIRST_LOOK.start(app.open, app.close)
    return ServerTiming(Guard(Starlette(routes=routes(app)), access)), access
