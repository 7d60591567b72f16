"""The page in a real browser (Debian's chromium driven by playwright): two machines, a conflict
settled through the page, search as you type in English and Chinese, an edit saved, screenshots."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from gitmem.store.serverstate import read
from servers import QUIET, start_server, stop
from support import git, run_gitmem
from webpage import WebPage, commits, start_web, stop_web

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOPIC = "global/semantic/staging.md"


def _browser_or_reason() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM} (.ci/run installs Debian's chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (it is in the test extra)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    reason = _browser_or_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)  # CI installs both: a missing browser there is a broken set-up
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def gm(root: Path, machine: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_gitmem("--root", str(root), *args, env={"GITMEM_SERVE": "off", "GITMEM_MACHINE": machine})


@pytest.fixture
def two_machines(tmp_path: Path, bare_remote: Path) -> Iterator[tuple[Path, Path, WebPage]]:
    """laptop-a and laptop-b edited one entry differently; b's sync left a conflict; b's page runs."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert gm(a, "laptop-a", "init", "--remote", str(bare_remote)).returncode == 0
    for text, topic in (("The staging host is 10.0.0.7", "staging"),
                        ("部署使用蓝绿发布，先切流量再下线旧版本", "deploy")):
        assert gm(a, "laptop-a", "remember", text, "-l", "semantic", "-t", topic).returncode == 0
    assert gm(a, "laptop-a", "sync").returncode == 0
    assert gm(b, "laptop-b", "init", "--remote", str(bare_remote)).returncode == 0
    for root, value in ((a, "10.0.0.8"), (b, "10.0.0.9")):
        path = root / TOPIC
        path.write_text(path.read_text().replace("10.0.0.7", value))
    assert gm(a, "laptop-a", "sync").returncode == 0
    assert gm(b, "laptop-b", "sync").returncode == 3
    page = start_web(b, env={"GITMEM_MACHINE": "laptop-b"})
    try:
        yield a, b, page
    finally:
        stop_web(page)


def _shot(tab: object, path: Path) -> None:
    tab.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    assert path.stat().st_size > 8_000, path  # a blank page compresses to a few hundred bytes


def test_the_page_in_a_browser(browser: object, two_machines: tuple[Path, Path, WebPage],
                               tmp_path: Path) -> None:
    a, b, page = two_machines
    context = browser.new_context(viewport={"width": 1100, "height": 800})  # type: ignore[attr-defined]
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)

    tab.goto(page.start_url)
    assert tab.url == f"{page.origin}/"  # the token left the address bar
    assert tab.get_by_role("heading", name="Overview").is_visible()
    assert tab.locator("svg.bar").count() >= 1
    _shot(tab, tmp_path / "overview.png")

    # Search as you type, English then Chinese; the address follows the query.
    tab.goto(f"{page.origin}/search")
    box = tab.get_by_role("searchbox", name="Search memory").first
    tab.locator("#q").fill("staging host")
    tab.wait_for_selector("li.hit >> text=staging.md")
    assert "q=staging+host" in tab.url
    _shot(tab, tmp_path / "search.png")
    tab.locator("#q").fill("蓝绿发布")
    tab.wait_for_selector("li.hit >> text=部署使用蓝绿发布")
    assert box.is_visible()

    # The conflict: the common base beside both sides with their machines, a word diff; then
    # settled with a button.
    tab.goto(f"{page.origin}/conflicts")
    card = tab.locator("article.conflict").first
    assert "laptop-a" in card.inner_text() and "laptop-b" in card.inner_text()
    assert "10.0.0.8" in card.inner_text() and "10.0.0.9" in card.inner_text()
    assert "10.0.0.7" in card.locator(".side.base").inner_text()
    changed = {t for t in card.locator("pre.worddiff del, pre.worddiff ins").all_inner_texts()}
    assert changed == {"10.0.0.8", "10.0.0.9"}  # the heading and the body: one word each
    card.get_by_text("Edit and keep").click()
    assert "10.0.0.9" in card.get_by_label("The text to keep (starts as ours)").input_value()
    _shot(tab, tmp_path / "conflicts.png")
    card.get_by_role("button", name="Keep theirs").click()
    tab.wait_for_load_state()
    _shot(tab, tmp_path / "settled.png")
    assert tab.locator(".notice").first.inner_text().startswith("settled global-sem-0001"), tab.content()[:3000]
    assert tab.get_by_text("no conflicts").is_visible()
    assert gm(b, "laptop-b", "conflicts").returncode == 1  # gone for the CLI too
    assert commits(b)[0].startswith("resolve")
    text = (b / TOPIC).read_text()
    assert "10.0.0.8" in text and "10.0.0.9" not in text and "<<<<<<<" not in text

    # An edit through the form, by keyboard: one commit, Id kept.
    tab.goto(f"{page.origin}/entry?id=global-sem-0001")
    tab.get_by_label("Title", exact=True).fill("Staging host")
    tab.get_by_label("Body", exact=True).fill("The staging host is 10.0.0.10 since the move.")
    tab.get_by_role("button", name="Save").focus()
    tab.keyboard.press("Enter")
    tab.wait_for_selector("text=edited global-sem-0001")
    newest = tab.locator("li.version").first
    assert "edit: global-sem-0001" in newest.inner_text()
    assert newest.locator("pre.diff .add").first.inner_text().startswith("+")
    tab.get_by_label("Show this entry as it was on").fill(date.today().isoformat())
    tab.get_by_role("button", name="Show").click()
    tab.wait_for_selector(".asof-result")
    assert "10.0.0.10" in tab.locator(".asof-result").inner_text()
    _shot(tab, tmp_path / "entry.png")
    assert commits(b)[0] == "edit: global-sem-0001"
    assert "10.0.0.10" in (b / TOPIC).read_text() and "**Id:** global-sem-0001" in (b / TOPIC).read_text()
    assert git(b, "status", "--porcelain").strip() == ""

    # The hot tier: an item added through its form, with the budget bar.
    tab.goto(f"{page.origin}/hot")
    tab.get_by_label("Add to global/runtime/MEMORY.md").fill("Deploys need the VPN up")
    tab.locator("section.hotfile", has_text="MEMORY.md").get_by_role("button", name="Add").click()
    tab.wait_for_selector("li.item:has-text('Deploys need the VPN up')")
    assert commits(b)[0].startswith("runtime add: rt-")
    _shot(tab, tmp_path / "hot.png")
    tab.goto(f"{page.origin}/settings")
    assert tab.get_by_label("Token (write-only", exact=False).input_value() == ""
    _shot(tab, tmp_path / "settings.png")
    assert not errors, errors
    if os.environ.get("GITMEM_WEB_SHOTS"):  # refresh the README's pictures on demand
        out = Path(os.environ["GITMEM_WEB_SHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        for name in ("overview", "search", "conflicts", "entry", "hot", "settings"):
            shutil.copy(tmp_path / f"{name}.png", out / f"web-{name}.png")
    context.close()


def test_an_open_tab_keeps_the_server_that_serves_it_until_it_is_closed(
        browser: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that leaves after three seconds without use stays while a tab shows its page and
    nobody clicks (the page's own keep-alive, fired here by the browser's clock), then leaves
    once the tab is closed."""
    root = tmp_path / "store"
    assert gm(root, "laptop", "init").returncode == 0
    monkeypatch.delenv("GITMEM_SERVE")  # `gitmem web` finds the server and has it serve the page
    idle_minutes = 0.05  # three seconds: a loaded machine's slow request stays well inside it
    server = start_server(root, *QUIET, "--idle-minutes", str(idle_minutes))
    try:
        web = subprocess.run([sys.executable, "-m", "gitmem", "--root", str(root), "web", "--no-open"],
                             capture_output=True, text=True, timeout=90, env={**os.environ})
        assert web.returncode == 0, web.stderr
        context = browser.new_context()  # type: ignore[attr-defined]
        tab = context.new_page()
        tab.clock.install()
        tab.goto(web.stdout.strip())
        assert tab.get_by_role("heading", name="Overview").is_visible()
        until = time.monotonic() + idle_minutes * 60 * 2
        while time.monotonic() < until:  # well past the idle time; only the page's timer asks
            with tab.expect_request("**/alive") as alive:
                tab.clock.run_for(61_000)
            assert alive.value.response().status == 204  # type: ignore[union-attr]
            assert server.poll() is None
            time.sleep(0.5)
        context.close()
        server.wait(timeout=idle_minutes * 60 + 30)  # no tab, no request: it leaves when idle
        assert (read(root) or {}).get("reason") == "idle"
    finally:
        stop(server)
