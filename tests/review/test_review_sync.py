"""The review queue on two machines sharing one bare remote: queued on one, reviewed on the
other; the same item accepted on both at once; rejections and queues of both kept."""

from __future__ import annotations

import json
from pathlib import Path

from sync.machines import ok, sh_git, two_machines

from gitmem.githooks.install import install as install_hooks
from reviewsupport import HALF_SURE, SURE, UNSURE, make_digest, use_model
from support import Cli, git


def queue_of(root: Path) -> dict:
    return json.loads((root / "review.json").read_text())


def items(gm: Cli) -> dict[str, str]:
    """text -> item id of what waits on this machine."""
    return {i["text"]: i["id"] for i in gm.json("review")["items"]}


def entries_with(gm: Cli, text: str) -> list[str]:
    """Ids of the live entries holding exactly `text`, in any layer or scope."""
    hits = gm.json("search", text, "--limit", "50", workspace="acme-api")
    ids = [h["id"] for h in (hits["results"] if isinstance(hits, dict) else hits)]
    return [i for i in ids if gm.json("show", i)["body"] == text]


def queued_on(gm: Cli, root: Path, folder: Path, n: int, setting: str = "0.6") -> None:
    ok(gm, "config", "set", "consolidate.review", setting)
    use_model(root, folder)
    make_digest(root, n)
    ok(gm, "consolidate")


def test_queued_on_one_machine_reviewed_on_the_other(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    queued_on(a, a.root, tmp_path, 1)
    assert set(items(a)) == {UNSURE, HALF_SURE}
    ok(a, "sync")
    ok(b, "sync")
    waiting = items(b)
    assert set(waiting) == {UNSURE, HALF_SURE}  # the queue is committed: any machine reviews it
    accepted = b.json("review", "accept", waiting[UNSURE])
    ok(b, "review", "reject", waiting[HALF_SURE], "--reason", "the port changed")
    ok(b, "sync")
    ok(a, "sync")
    assert a.json("show", accepted["id"])["body"] == UNSURE
    assert a.json("review")["items"] == [] and a.json("status")["reviewQueue"] == 0
    assert [r["reason"] for r in queue_of(a.root)["rejected"]] == ["the port changed"]
    make_digest(a.root, 2)  # proposed again on the machine that did not review them
    report = a.json("consolidate")
    reasons = {d["text"]: d["reason"] for d in report["dropped"]}
    assert reasons == {HALF_SURE: "rejected in review before", UNSURE: f"already recorded as {accepted['id']}"}
    assert report["queued"] == []
    assert git(a.root, "status", "--porcelain").strip() == ""


def test_the_same_item_accepted_on_both_machines_is_one_entry(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    queued_on(a, a.root, tmp_path, 1)
    ok(a, "sync")
    ok(b, "sync")
    item = items(a)[UNSURE]
    first = a.json("review", "accept", item)
    second = b.json("review", "accept", item)
    ok(a, "sync")
    ok(b, "sync")
    ok(a, "sync")
    for gm in (a, b):
        assert entries_with(gm, UNSURE) == [first["id"]] == [second["id"]]
        assert set(items(gm)) == {HALF_SURE}
        assert gm.json("status")["conflicts"] == []
    assert git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")


def test_both_machines_queue_and_reject_at_once(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    queued_on(a, a.root, tmp_path, 1, "everything")
    ok(a, "sync")
    ok(b, "sync")
    shared = items(a)
    ok(a, "review", "reject", shared[SURE], "--reason", "from a")
    ok(b, "review", "reject", shared[SURE], "--reason", "from b")  # the same item, both machines
    use_model(b.root, tmp_path)
    make_digest(b.root, 7)
    ok(b, "consolidate")  # b's own digest proposes the facts that wait already
    ok(a, "sync")
    ok(b, "sync")
    ok(a, "sync")
    for gm in (a, b):
        queue = queue_of(gm.root)
        assert [r["id"] for r in queue["rejected"]] == [queue["rejected"][0]["id"]]  # one per fact
        texts = [i["text"] for i in queue["items"]]
        assert sorted(texts) == sorted(set(shared) - {SURE})  # each fact waits once
    assert queue_of(a.root) == queue_of(b.root)


def accepted_on_both_under_two_ids(tmp_path: Path, bare_remote: Path) -> tuple[Cli, Cli, str, dict, dict]:
    """One item queued on a, accepted on a and on b (which wrote an entry first, so its copy
    takes the next Id); a synced. Returns a, b, the item and the two accepts."""
    a, b = two_machines(tmp_path, bare_remote)
    queued_on(a, a.root, tmp_path, 1)
    ok(a, "sync")
    ok(b, "sync")
    item = items(a)[UNSURE]
    first = a.json("review", "accept", item)
    ok(b, "remember", "Retries back off exponentially up to one minute.", "-l", "learnings", "-t", "retries")
    second = b.json("review", "accept", item)
    assert first["id"] != second["id"]
    ok(a, "sync")
    return a, b, item, first, second


def test_the_same_item_accepted_on_both_machines_under_different_ids_is_one_entry(
        tmp_path: Path, bare_remote: Path) -> None:
    a, b, item, first, second = accepted_on_both_under_two_ids(tmp_path, bare_remote)
    merged = b("sync")
    assert merged.exit_code == 0 and f"kept {first['id']}" in merged.output
    ok(a, "sync")
    for gm in (a, b):
        assert entries_with(gm, UNSURE) == [first["id"]]
        assert [r["entry"] for r in queue_of(gm.root)["accepted"]] == [first["id"]]
        assert gm.json("status")["conflicts"] == [] and gm("check").exit_code == 0
    assert git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")
    again = b("review", "accept", item)  # told what it became, on either machine
    assert again.exit_code == 0 and f"it is {first['id']}" in again.stdout


def test_the_same_item_accepted_on_both_machines_and_pulled_with_plain_git_is_one_entry(
        tmp_path: Path, bare_remote: Path) -> None:
    """The post-merge hook folds the two copies as `gitmem sync` does: a person who runs
    `git pull` gets one entry too."""
    a, b, _item, first, second = accepted_on_both_under_two_ids(tmp_path, bare_remote)
    install_hooks(b.root)
    pulled = sh_git(b.root, "pull", "-q", "--no-rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert f"kept {first['id']}, dropped this machine's copy {second['id']}" in pulled.stderr
    assert entries_with(b, UNSURE) == [first["id"]]
    assert [r["entry"] for r in queue_of(b.root)["accepted"]] == [first["id"]]
    assert git(b.root, "log", "-1", "--format=%s").startswith("merge: review item")
    assert b("check").exit_code == 0 and git(b.root, "status", "--porcelain") == ""
    ok(b, "sync")
    ok(a, "sync")
    assert entries_with(a, UNSURE) == [first["id"]]
    assert git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")


def test_a_runtime_merge_queued_on_one_machine_is_accepted_on_the_other(tmp_path: Path, bare_remote: Path) -> None:
    a, b = two_machines(tmp_path, bare_remote)
    for text in ("Prefers tabs over spaces in Python code.", "Prefers tabs over spaces in all Python code"):
        ok(a, "runtime", "add", "-t", "user", text)
    use_model(a.root, tmp_path, "maintain")
    [item] = a.json("runtime", "maintain", "--queue")["queued"]
    ok(a, "sync")
    ok(b, "sync")
    done = b.json("review", "accept", item)
    ok(b, "sync")
    ok(a, "sync")
    for gm in (a, b):
        assert (gm.root / "global/runtime/USER.md").read_text() == "Prefers tabs over spaces in all Python code\n"
        assert items(gm) == {}
    assert done["items"] and git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")


def test_the_same_item_accepted_on_both_machines_and_pulled_with_rebase_is_one_entry(
        tmp_path: Path, bare_remote: Path) -> None:
    """`git pull --rebase` replays this machine's accept on top of the other's: the post-rewrite
    hook folds the two copies as the post-merge hook does after a merge."""
    a, b, _item, first, second = accepted_on_both_under_two_ids(tmp_path, bare_remote)
    install_hooks(b.root)
    pulled = sh_git(b.root, "pull", "-q", "--rebase", "origin", "main")
    assert pulled.returncode == 0, pulled.stderr
    assert f"kept {first['id']}, dropped this machine's copy {second['id']}" in pulled.stderr
    assert entries_with(b, UNSURE) == [first["id"]]
    assert [r["entry"] for r in queue_of(b.root)["accepted"]] == [first["id"]]
    assert b("check").exit_code == 0 and git(b.root, "status", "--porcelain") == ""
    ok(b, "sync")
    ok(a, "sync")
    assert entries_with(a, UNSURE) == [first["id"]]
    assert git(a.root, "rev-parse", "HEAD^{tree}") == git(b.root, "rev-parse", "HEAD^{tree}")
