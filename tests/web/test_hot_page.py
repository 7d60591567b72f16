"""The hot tier through a real `gitmem web`: add, replace, remove and archive a runtime item into
the layers, the budget bars; a document opened, archived and restored. Each one commit with the
message the CLI writes (archive has no CLI command: its message follows the others)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support import git, run_gitmem
from webpage import WebPage, commits

RECORDS = "global/runtime/memories.json"


def _items(web: WebPage) -> dict[str, str]:
    data = json.loads((web.root / RECORDS).read_text(encoding="utf-8"))
    return {i["content"]: i["id"] for i in data["items"]}


def _hidden(page: str, name: str, after: str) -> str:
    part = page.split(after, 1)[1]
    return re.search(rf'name="{name}" value="([^"]*)"', part).group(1)  # type: ignore[union-attr]


def test_add_replace_remove_with_budget_bars(web: WebPage) -> None:
    page = web.get("/hot").text
    assert page.count('class="budget"') == page.count('class="card hotfile"') >= 2  # USER.md, MEMORY.md
    assert re.search(r'aria-label="0 of \d+ bytes"', page)
    done = web.post("/runtime/add", {"scope": "global", "target": "memory", "text": "CI runs on the big runner",
                                     "importance": "critical"})
    assert done.status == 303, done.text[:300]
    item = _items(web)["CI runs on the big runner"]
    assert commits(web.root)[0] == f"runtime add: {item} (memory, global)"
    assert "CI runs on the big runner" in (web.root / "global/runtime/MEMORY.md").read_text()
    page = web.get("/hot").text
    used = re.search(r"(\d+) of (\d+) bytes", page.split("MEMORY.md", 1)[1])
    assert used and int(used.group(1)) == len(b"CI runs on the big runner")
    done = web.post("/runtime/replace", {"scope": "global", "target": "memory", "item": item,
                                         "text": "CI runs on the small runner"})
    assert done.status == 303 and commits(web.root)[0] == f"runtime replace: {item} (memory, global)"
    assert _items(web) == {"CI runs on the small runner": item}
    done = web.post("/runtime/remove", {"scope": "global", "target": "memory", "item": item})
    assert done.status == 303 and commits(web.root)[0] == f"runtime remove: {item} (memory, global)"
    assert _items(web) == {}
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_an_item_changed_since_the_page_showed_it_is_not_replaced_removed_or_archived(
        web: WebPage) -> None:
    """Each form carries a fingerprint of the text it showed (never the text: it may hold a
    secret let through): an item an agent changed meanwhile is refused (409), nothing written."""
    web.post("/runtime/add", {"scope": "global", "target": "memory", "text": "Project uses uv"})
    item = _items(web)["Project uses uv"]
    page = web.get("/hot").text
    seen = _hidden(page, "seen", "Project uses uv")
    assert "Project uses uv" not in seen
    changed = run_gitmem("--root", str(web.root), "runtime", "replace", item,
                         "Project uses uv; CI runs ruff and mypy", env={"GITMEM_SERVE": "off"})
    assert changed.returncode == 0, changed.stderr
    before = commits(web.root)
    form = {"scope": "global", "target": "memory", "item": item, "seen": seen}
    for action, extra in (("replace", {"text": "Project uses uv and pytest"}), ("remove", {}), ("archive", {})):
        refused = web.post(f"/runtime/{action}", {**form, **extra})
        assert refused.status == 409 and "changed since it was shown" in refused.text, action
    assert commits(web.root) == before
    assert _items(web) == {"Project uses uv; CI runs ruff and mypy": item}
    fresh = _hidden(web.get("/hot").text, "seen", "ruff and mypy")
    done = web.post("/runtime/replace", {**form, "seen": fresh, "text": "Project uses uv and pytest"})
    assert done.status == 303 and _items(web) == {"Project uses uv and pytest": item}


def test_an_item_holding_a_secret_is_shown_masked_and_offers_no_replace_form(web: WebPage) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    done = run_gitmem("--root", str(web.root), "runtime", "add", f"CI pushes with {token}", "--allow-secret",
                      env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    page = web.get("/hot").text
    assert token not in page and "CI pushes with ***" in page and "does not edit it here" in page


def test_archive_moves_an_item_into_the_layers(web: WebPage) -> None:
    web.post("/runtime/add", {"scope": "global", "target": "memory",
                              "text": "Lesson learned: never deploy on Fridays"})
    item = _items(web)["Lesson learned: never deploy on Fridays"]
    page = web.get("/hot").text
    assert _hidden(page, "item", "Lesson learned") == item
    done = web.post("/runtime/archive", {"scope": "global", "target": "memory", "item": item})
    assert done.status == 303, done.text[:300]
    assert commits(web.root)[0] == (f"runtime archive: {item} (memory, global) - moved {item} ->"
                                    " global-lrn-0001 (global/learnings/runtime-memory.md)")
    assert _items(web) == {}
    layer = (web.root / "global/learnings/runtime-memory.md").read_text()
    assert "never deploy on Fridays" in layer and f"**Source:** runtime:{item}" in layer
    found = run_gitmem("--root", str(web.root), "search", "deploy Fridays", env={"GITMEM_SERVE": "off"})
    assert "global-lrn-0001" in found.stdout


def test_bad_runtime_input_is_refused(web: WebPage) -> None:
    before = commits(web.root)
    key = "AKIA" + "QWERTYUIOPASDFGH"
    cases = [web.post("/runtime/add", {"scope": "global", "target": "memory", "text": f"key {key}"}),
             web.post("/runtime/add", {"scope": "global", "target": "nope", "text": "x"}),
             web.post("/runtime/add", {"scope": "global", "target": "memory", "text": "x" * 20000}),
             web.post("/runtime/remove", {"scope": "global", "target": "memory", "item": "rt-00000000"}),
             web.post("/runtime/archive", {"scope": "global", "target": "memory", "item": ""})]
    for answer in cases:
        assert 400 <= answer.status < 500, answer.text[:300]
        assert 'class="notice error"' in answer.text and key not in answer.text
    assert commits(web.root) == before


def test_a_document_opened_archived_and_restored(web: WebPage, tmp_path: Path) -> None:
    source = tmp_path / "runbook.md"
    source.write_text("# Runbook\n\nRestart the **queue** first.\n")
    done = run_gitmem("--root", str(web.root), "doc", "add", str(source), "--title", "Runbook",
                      "--json", env={"GITMEM_SERVE": "off"})
    assert done.returncode == 0, done.stderr
    doc_id = json.loads(done.stdout)["id"]
    hot = web.get("/hot").text
    assert f'/doc?id={doc_id}' in hot
    page = web.get(f"/doc?id={doc_id}")
    assert page.status == 200 and "<strong>queue</strong>" in page.text and "Archive" in page.text
    done = web.post("/doc/archive", {"id": doc_id})
    assert done.status == 303 and commits(web.root)[0] == f"doc archive: {doc_id} (Runbook)"
    listed = run_gitmem("--root", str(web.root), "doc", "list", "--all", "--json", env={"GITMEM_SERVE": "off"})
    assert json.loads(listed.stdout)[0]["status"] == "archived"
    assert "Restore" in web.get(f"/doc?id={doc_id}").text
    done = web.post("/doc/restore", {"id": doc_id})
    assert done.status == 303 and commits(web.root)[0] == f"doc restore: {doc_id} (Runbook)"
    assert web.get("/doc?id=global-doc-9999").status == 404
    assert git(web.root, "status", "--porcelain").strip() == ""


def test_every_scope_s_hot_files_are_shown_wherever_the_page_was_started(web: WebPage) -> None:
    for key in ("shop", "blog"):
        done = run_gitmem("--root", str(web.root), "-w", key, "runtime", "add", f"{key} deploys on Fridays",
                          "--scope", "workspace", env={"GITMEM_SERVE": "off"})
        assert done.returncode == 0, done.stderr
    page = web.get("/hot").text
    for key in ("shop", "blog"):
        assert f"workspaces/{key}/runtime/MEMORY.md" in page and f"{key} deploys on Fridays" in page


def test_a_line_typed_by_hand_can_be_acted_on_before_it_is_imported(web: WebPage) -> None:
    """A line typed into MEMORY.md shows with the id its import will give it (made from its
    text), so its Remove works (it carried `(new)`, which no write could find)."""
    web.post("/runtime/add", {"scope": "global", "target": "memory", "text": "Build with make all"})
    path = web.root / "global/runtime/MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8") + "§\nredis runs on port 6380\n", encoding="utf-8")
    page = web.get("/hot").text
    item = _hidden(page, "item", "redis runs on port 6380")
    assert item.startswith("rt-")
    seen = _hidden(page, "seen", "redis runs on port 6380")
    done = web.post("/runtime/remove", {"scope": "global", "target": "memory", "item": item, "seen": seen})
    assert done.status == 303, done.text[:300]
    assert _items(web) == {"Build with make all": _items(web)["Build with make all"]}
    assert "redis" not in path.read_text(encoding="utf-8")
