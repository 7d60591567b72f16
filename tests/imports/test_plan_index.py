"""The import's plan (gitmem/imports/plan.py) holds rows in memory until a group is added at
once: every look-up answers the same before and after, past any group boundary."""

from __future__ import annotations

from gitmem.imports.plan import HELD, Known, PlanIndex


def test_rows_read_back_the_same_across_groups_and_the_last_write_wins() -> None:
    count = 2 * HELD + 7
    with PlanIndex() as plan:
        for n in range(count):
            plan.set_known(f"origin-{n}", Known(f"p/{n}.md", f"id-{n}", "r", "c", n % 2 == 0, "", fresh=True))
            plan.set_seen("global", "semantic", f"digest-{n}", f"id-{n}")
            plan.add_name(f"name-{n % (count - 5)}", f"id-{n}")  # five names given twice
        plan.set_known("origin-3", Known("moved.md", "id-3", "r2", "c2", False, "entity:x"))
        assert plan.known("origin-3") == Known("moved.md", "id-3", "r2", "c2", False, "entity:x")
        for n in (0, 1, HELD - 1, HELD, count - 1):
            assert plan.known(f"origin-{n}") == Known(f"p/{n}.md", f"id-{n}", "r", "c", n % 2 == 0, "", True)
            assert plan.seen("global", "semantic", f"digest-{n}") == f"id-{n}"
        assert plan.name("name-2") == "id-2"  # the first entry to use a name keeps it
        assert plan.name(f"name-{count - 6}") == f"id-{count - 6}"
        assert plan.known("nowhere") is None and plan.seen("global", "semantic", "none") is None
        assert plan.name("nobody") is None
