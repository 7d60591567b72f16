"""`gitmem check [--fix]`: the hook's normalization rules applied to the whole working tree.

Errors (exit 2) are what breaks the store: a malformed or duplicate Id, a file that cannot be
read, conflict markers, entries in a generated layer index, a folder or file name that cannot
be a workspace or be checked out everywhere. The rest are hints. `--fix` gives entries their
Ids, moves text appended after the fields above them, closes fences, and dates entries from
git history: Created is the day the entry's Id line (else its heading) was first committed;
Verified is never invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError, ParseError
from gitmem.format import layers as L
from gitmem.format.normalize import Outcome, Problem
from gitmem.store import integrity, tree
from gitmem.store.recovery import store_problems
from gitmem.verbs.globalworking import global_working_problem, retire_global_working
from gitmem.verbs.legacy import migrate_legacy_layer

if TYPE_CHECKING:
    from gitmem.store.store import Store


@dataclass
class CheckReport:
    problems: list[Problem] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)
    commit: str | None = None
    ran_fix: bool = False
    renumbered: dict[str, str] = field(default_factory=dict)  # Ids two machines both used
    notes: list[str] = field(default_factory=list)  # how each duplicate Id was settled

    @property
    def remaining(self) -> list[Problem]:
        """Problems still present after the run (fixable ones are gone when --fix ran)."""
        return [p for p in self.problems if not (self.ran_fix and p.fixable)]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.remaining if p.is_error]

    @property
    def hints(self) -> list[Problem]:
        return [p for p in self.remaining if not p.is_error]


def legacy_layers(store: Store) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(scope, layer) pairs whose layer file still holds entries, and layer files unreadable."""
    found, problems = [], []
    for scope in store.scope_keys():
        for layer in L.TOPIC_LAYERS:
            relpath = L.layer_index_path(scope, layer)
            try:
                document = store.read_file(relpath)
            except ParseError as exc:
                problems.append(Problem(relpath, exc.line, exc.reason))
                continue
            if document is not None and document.entries:
                found.append((scope, layer))
    return found, problems


def settle_duplicates(store: Store, report: CheckReport) -> None:
    """An Id in two topic files, one of them published (a plain `git pull` brought it): this
    machine's entry is renumbered. Any other duplicate (both copies published, or none): the
    copy committed first keeps the Id, a later identical copy goes, a different one is
    renumbered. One commit of its own (githooks/collisions.py)."""
    from gitmem.githooks.collisions import published_ref, settle_collisions

    settled = settle_collisions(store, published_ref(store), absorb=False, every=True)
    report.renumbered = settled.renumbered
    report.notes = settled.notes


@dataclass
class Findings:
    """What one look over the store found: every problem (errors and hints), and what a fix
    works from (the normalization outcomes, the legacy layer files holding entries)."""

    problems: list[Problem]
    outcomes: list[Outcome]
    legacy: list[tuple[str, str]]


def find_problems(store: Store, *, fix: bool = False) -> Findings:
    """Every problem in the store, read from every file gitmem reads: the memory files (the
    normalization rules), its JSON files and document copies, the folders, the leftovers of
    crashes, links, relations. `check` prints these; `status` lists the errors among them.
    The caller holds the store lock (or reads without one, see Store.reading)."""
    outcomes = store.normalize_paths(store.all_memory_files(), fix=fix, dates_from_history=fix)
    problems = tree.invalid_scope_folders(store.root) + tree.layer_index_folders(store.root)
    for outcome in outcomes:
        problems.extend(outcome.problems)
    problems.extend(integrity.problems(store.root))  # JSON files, document copies
    problems.extend(store_problems(store))  # leftovers of crashes, links, temp files
    legacy, unreadable = legacy_layers(store)
    problems.extend(unreadable)
    for scope, layer in legacy:
        problems.append(Problem(L.layer_index_path(scope, layer), 1,
                                "legacy layer file holds entries: they belong in topic files",
                                fixable=True))
    problems.extend(_runtime_problems(store))
    problems.extend(_hand_edit_secrets(store))
    retired = global_working_problem(store)
    if retired is not None:
        problems.append(retired)
    from gitmem.verbs.relations import relation_report

    errors, hints = relation_report(store)
    problems.extend(errors + hints)
    return Findings(integrity.with_stand_ins(store.git, _unique(problems)), outcomes, legacy)


def _hand_edit_secrets(store: Store) -> list[Problem]:
    """Likely secrets in lines uncommitted hand edits add: what the next write, `--fix` or a
    plain commit would refuse to commit (none with GITMEM_ALLOW_SECRET=1, which commits them)."""
    from gitmem.fsio import is_temp_name
    from gitmem.secrets.scan import allowed_by_environment, hand_edit_findings

    if allowed_by_environment():
        return []
    dirty = [p for p in store.git.dirty_paths() if not is_temp_name(p)]
    found = hand_edit_findings(store.root, dirty, lambda path: store.git.read_file_at("HEAD", path))
    return [Problem(f.path, f.line, f"holds a likely secret ({f.kind}); remove it, or commit it "
                    "knowingly with GITMEM_ALLOW_SECRET=1") for f in found]


def _runtime_problems(store: Store) -> list[Problem]:
    """Lines of USER.md / MEMORY.md that break the runtime rules (a write would refuse them)."""
    from gitmem.runtime.tier import limits_of, projection_problems

    try:
        limits = limits_of(store)
    except GitmemError:
        return []  # memory.json or settings.runtime cannot be read: reported on their own
    return projection_problems(store, limits)


def _unique(problems: list[Problem]) -> list[Problem]:
    """Each finding once (a file can be reached by two of the looks), in the order found."""
    seen: set[str] = set()
    found = []
    for problem in problems:
        if (key := f"{problem.severity} {problem}") not in seen:
            seen.add(key)
            found.append(problem)
    return found


def check_tree(store: Store, *, fix: bool = False) -> CheckReport:
    """Report every problem; with fix, apply the safe fixes and commit them once."""
    store.require()
    report = CheckReport()
    with store.locked() if fix else store.reading():
        if fix:
            settle_duplicates(store, report)
        findings = find_problems(store, fix=fix)
        report.problems.extend(findings.problems)
        if not fix:
            return report
        secret = {p.path for p in findings.problems if "likely secret" in p.reason}
        with store.writing("check --fix", absorb=False) as txn:
            for outcome in findings.outcomes:
                # A file with an error is never committed, its fixable entries neither.
                if outcome.changed and not outcome.blocking and outcome.path not in secret and \
                        store.write_file(txn, outcome.path, outcome.text):
                    report.fixed.append(outcome.path)
                    report.assigned.extend(outcome.assigned)
            for scope, layer in findings.legacy:
                report.fixed.extend(migrate_legacy_layer(store, txn, scope, layer))
            report.fixed.extend(retire_global_working(store, txn))
            txn.message = f"check --fix: {len(report.fixed)} file(s) normalized"
        report.commit = store.git.head_oid() if report.fixed else None
        report.ran_fix = True
    return report
