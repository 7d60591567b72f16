"""Partial words (half-typed and mid-word) and the store's freshness windows in search ranking,
on real index files."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pytest

from gitmem.search import partial
from gitmem.search.index import SearchHit, SearchIndex
from gitmem.search.rank import EntryFacts, window_days
from gitmem.search.segments import TermDictionary

NOW = date(2026, 12, 2)


def entry(title: str, body: str, entry_id: str, verified: int = 5, **fields: str) -> str:
    lines = [f"## {title}", body, "", f"**Id:** {entry_id}", f"**Verified:** {NOW - timedelta(verified)}"]
    lines += [f"**{name.capitalize()}:** {value}" for name, value in fields.items()]
    return "\n".join(lines) + "\n"


def write(root: Path, relpath: str, *entries: str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Topic\n\n" + "\n".join(entries), "utf-8")


def ids(hits: list[SearchHit]) -> list[str | None]:
    return [hit.id for hit in hits]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    write(root, "global/episodic/staging.md",
          entry("Moved staging Postgres to port 5433", "The staging database moved on 2026-11-20.",
                "global-epi-0001"))
    write(root, "global/semantic/exporter.md",
          entry("Node exporter listens on 9100", "Prometheus scrapes every host.", "global-sem-0001"))
    write(root, "global/semantic/search.md",
          entry("The search index lives under index/", "Run reindex after a restore.",
                "global-sem-0002"),
          entry("whoosh-ng is the search library", "It keeps the segment design.",
                "global-sem-0003"))
    return root


@pytest.fixture
def index(root: Path) -> Iterator[SearchIndex]:
    idx = SearchIndex(root)
    yield idx
    idx.close()


def search(idx: SearchIndex, query: str, **kwargs: object) -> list[SearchHit]:
    return idx.search(query, now=NOW, **kwargs)  # type: ignore[arg-type]


# -- finding partial words ------------------------------------------------------------------


@pytest.mark.parametrize(("query", "expected"), [
    ("stag", "global-epi-0001"), ("stagi", "global-epi-0001"), ("stagin", "global-epi-0001"),
    ("isten", "global-sem-0001"), ("istens", "global-sem-0001"), ("ndex", "global-sem-0002"),
    ("whoos", "global-sem-0003"), ("oosh", "global-sem-0003"), ("rometheu", "global-sem-0001"),
])
def test_half_typed_and_mid_word_queries_find_their_entry(index: SearchIndex, query: str,
                                                          expected: str) -> None:
    assert ids(search(index, query))[:1] == [expected]


def test_partial_word_combines_with_whole_words(index: SearchIndex) -> None:
    assert ids(search(index, "postgres stagin"))[0] == "global-epi-0001"
    assert ids(search(index, "exporter isten")) == ["global-sem-0001"]


def test_short_fragments_and_non_words_match_nothing_partially(index: SearchIndex) -> None:
    assert search(index, "nde") == []  # infix needs four letters
    assert search(index, "zzzz") == []


def test_snippet_centres_on_the_partial_word(root: Path, index: SearchIndex) -> None:
    long_body = "Filler words about nothing in particular. " * 10 + "Then the agent listens here."
    write(root, "global/semantic/long.md", entry("Agent notes", long_body, "global-sem-0100"))
    hit = next(hit for hit in search(index, "isten") if hit.id == "global-sem-0100")
    assert hit.snippet.startswith("…") and "listens" in hit.snippet


# -- ranking: whole words first, then prefixes, then infixes ----------------------------------


def test_whole_word_matches_rank_above_partial_ones(root: Path, index: SearchIndex) -> None:
    # A stale, low-importance entry holding the word itself still comes before a fresh,
    # critical one that only holds a longer word starting with it.
    write(root, "global/semantic/logo.md",
          entry("The stag logo", "Our logo is a stag.", "global-sem-0200", verified=400,
                importance="low"))
    write(root, "global/semantic/staging-box.md",
          entry("Staging staging staging", "Staging box.", "global-sem-0201", importance="critical"))
    hits = search(index, "stag")
    assert ids(hits)[0] == "global-sem-0200"
    assert {"global-epi-0001", "global-sem-0201"} <= set(ids(hits)[1:])


def test_prefix_matches_rank_above_infix_matches(root: Path, index: SearchIndex) -> None:
    write(root, "global/semantic/crews.md",
          entry("Backstage crew", "Notes.", "global-sem-0300"),
          entry("Stagehand crew", "Notes.", "global-sem-0301"))
    found = ids(search(index, "stag"))
    assert found.index("global-sem-0301") < found.index("global-sem-0300")  # stagehand, backstage
    assert ids(search(index, "stag crew"))[:2] == ["global-sem-0301", "global-sem-0300"]


def test_entries_matching_only_partially_come_after_whole_word_matches(
        root: Path, index: SearchIndex) -> None:
    write(root, "global/semantic/other.md",
          entry("Postgres vacuum runs nightly", "Autovacuum settings.", "global-sem-0400"),
          entry("Staging staging", "Staging deploys go first.", "global-sem-0401"))
    found = ids(search(index, "postgres stagin"))
    assert found[0] == "global-epi-0001"  # both words
    assert found.index("global-sem-0400") < found.index("global-sem-0401")


def test_a_word_with_whole_matches_in_a_longer_query_is_not_expanded(
        root: Path, index: SearchIndex) -> None:
    write(root, "global/semantic/report.md",
          entry("Monthly report", "The report job runs monthly.", "global-sem-0500"))
    # "port" is a whole word of the staging entry: "report" must not join in as a partial match.
    assert "global-sem-0500" not in ids(search(index, "port postgres"))


# -- bounds ---------------------------------------------------------------------------------


def _letters(n: int) -> str:
    """A distinct run of letters for a number (0 -> 'aa', 1 -> 'ab', ...)."""
    return chr(97 + n // 26) + chr(97 + n % 26)


def test_partial_fan_out_is_bounded_on_a_real_index(root: Path, index: SearchIndex) -> None:
    # 60 distinct words contain "quux"; the query stands for at most MAX_TERMS of them, the
    # shortest first.
    entries = [entry(f"Note {n}", f"The {_letters(n)}quux{'z' * (n % 5)} value.", f"global-sem-{n + 600:04d}")
               for n in range(60)]
    write(root, "global/semantic/notes.md", *entries)
    hits = search(index, "quux", limit=100)
    assert len(hits) == partial.MAX_TERMS == 12
    assert not any("quuxz" in hit.snippet for hit in hits)  # the 12 shortest words were chosen


@dataclass
class FakeLexicon:
    """A term dictionary of many terms sharing a fragment, recording what was asked."""

    frequencies: dict[str, int]
    asked: list[tuple[str, int]] = field(default_factory=list)

    def doc_frequency(self, term: str) -> int:
        return self.frequencies.get(term, 0)

    def prefixed(self, prefix: str, limit: int) -> list[str]:
        self.asked.append((prefix, limit))
        return sorted(t for t in self.frequencies if t.startswith(prefix))[:limit]

    def containing(self, fragment: str, limit: int) -> list[str]:
        self.asked.append((fragment, limit))
        return sorted(t for t in self.frequencies if fragment in t)[:limit]


def test_candidate_scans_terms_and_postings_are_bounded() -> None:
    # 5,000 terms contain "tion" (as many as a large store may hold), each in 900 entries.
    terms = {f"{_letters(n % 676)}{_letters(n // 676)}tion": 900 for n in range(5000)}
    lexicon = FakeLexicon(terms)
    chosen = partial.partial_alternatives("tion", lexicon)
    assert all(limit <= max(partial.PREFIX_SCAN, partial.INFIX_SCAN) for _f, limit in lexicon.asked)
    assert len(chosen) == partial.POSTINGS_BUDGET // 900 <= partial.MAX_TERMS
    assert all(weight == partial.INFIX_WEIGHT for _t, weight in chosen)


def test_first_candidate_always_counts_and_order_is_kind_then_length() -> None:
    lexicon = FakeLexicon({"stage": 50_000, "staging.md": 3, "stagecoach": 2, "backstag": 4})
    chosen = partial.partial_alternatives("stagin", lexicon)
    assert chosen == [("stage", partial.PREFIX_WEIGHT)]  # over budget alone: still used
    lexicon = FakeLexicon({"stage": 40, "staging.md": 3, "backstag": 4, "stagi": 0})
    assert [t for t, _w in partial.partial_alternatives("stag", lexicon)] == \
        ["stage", "staging.md", "backstag"]


def test_completions_finish_a_partly_typed_ending() -> None:
    assert "stage" in partial.completions("stagin")
    assert "stage" in partial.completions("stagi")
    assert "deployment" in partial.completions("deploym")
    assert "consolid" in partial.completions("consolida")


def test_dictionary_scan_matches_the_generic_lexicon_walk(root: Path, index: SearchIndex) -> None:
    search(index, "staging")
    write(root, "global/semantic/more.md",
          entry("Staging listeners", "Reindexing staging is listed.", "global-sem-0700"))
    search(index, "staging")  # a second segment
    view = index._current_view()
    assert len(view.leaves()) >= 2
    for leaf, _offset in view.leaves():
        dictionary = TermDictionary(leaf)
        for fragment in ("stag", "isten", "ndex", "glob", "5433", "zzzz", "e"):
            fast = dictionary.containing(leaf, fragment, 1000)
            assert fast == TermDictionary._walk(leaf, fragment, 1000), fragment
        assert len(dictionary.containing(leaf, "e", 2)) == 2


# -- freshness windows from the store's settings --------------------------------------------


def test_configured_windows_change_grade_and_ranking(root: Path, index: SearchIndex) -> None:
    twin = ("Kafka retention is seven days", "Topics keep seven days of kafka messages.")
    write(root, "global/semantic/a-kafka.md", entry(*twin, "global-sem-0800", verified=40))
    write(root, "global/semantic/b-kafka.md", entry(*twin, "global-sem-0801", verified=5))
    default = search(index, "kafka retention")
    assert ids(default) == ["global-sem-0800", "global-sem-0801"]  # both fresh: path order
    assert [hit.freshness for hit in default] == ["fresh", "fresh"]
    configured = search(index, "kafka retention", windows={"normal": 30})
    assert ids(configured) == ["global-sem-0801", "global-sem-0800"]
    assert [hit.freshness for hit in configured] == ["fresh", "stale"]
    assert configured[1].score < default[0].score


def test_window_days_fill_missing_volatilities_with_defaults() -> None:
    assert window_days({"volatile": 1}) == (365, 90, 1, 90)
    facts = EntryFacts("normal", "volatile", (NOW - timedelta(2)).toordinal(), 0)
    assert facts.freshness(NOW).grade == "aging"
    assert facts.freshness(NOW, window_days({"volatile": 1})).grade == "stale"


def test_retrieval_suite_finds_every_mid_word_query(tmp_path: Path) -> None:
    from fixtures.retrieval.evaluate import evaluate
    from fixtures.retrieval.store import build

    idx = SearchIndex(tmp_path)
    report = evaluate(idx, build(tmp_path))
    idx.close()
    hit, total = report.by_category()["partial-infix"]
    assert total >= 7 and hit == total, report.misses()
