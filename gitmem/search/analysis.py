"""Text analysis for the search index: words, identifiers and n-grams for unspaced scripts.

One pass over the text yields index terms:
- words of spaced scripts, lower-cased and Porter-stemmed (English stopwords dropped);
- identifiers (`deploy_review`, `parseEntries`, `src/gitmem/store.py`, `v3.14`) whole, plus
  their parts (`deploy`, `review`, `parse`, `entri`, `store.py`, `store`, ...);
- runs of CJK and other unspaced scripts as single characters and overlapping bigrams, so
  one- and two-character queries match anywhere inside a run.

The query side (`query_groups`) analyses a query the same way and returns one group per
query word. Only the Porter stemmer comes from whoosh; no query parser is involved.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from whoosh.lang.porter import stem as _porter_stem

# Scripts written without spaces between words: CJK ideographs, kana, Hangul, Thai, Lao,
# Khmer, Myanmar, Tibetan. Runs of these are indexed as 1-grams and 2-grams.
_UNSPACED = (
    "\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff"
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f"
    "\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_JOINERS = r"._/\-:+#@\\"
_WORD = rf"[^\W{_UNSPACED}]"
_TOKEN_RE = re.compile(
    rf"(?P<run>[{_UNSPACED}]+)|(?P<word>{_WORD}+(?:[{_JOINERS}]+{_WORD}+)*)"
)
_SPLIT_RE = re.compile(rf"[{_JOINERS}]+")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")

# Dropped at index and query time: too common to carry meaning.
INDEX_STOPWORDS: frozenset[str] = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "with"]
)
# Also dropped from queries: question words and filler of natural-language questions.
QUERY_STOPWORDS: frozenset[str] = INDEX_STOPWORDS | frozenset(
    ["about", "after", "again", "all", "am", "any", "anything", "before", "being", "but", "can", "could", "did", "do", "does", "doing", "done", "during", "each", "else", "ever", "find", "get", "got", "had", "how", "i", "if", "into", "know", "last", "let", "me", "more", "most", "my", "need", "not", "now", "our", "ours", "out", "please", "remind", "should", "show", "so", "some", "tell", "than", "them", "then", "there", "these", "they", "those", "through", "us", "use", "used", "using", "very", "want", "what", "when", "where", "whether", "which", "while", "who", "whom", "why", "will", "would", "you", "your", "we"]
)
# Filler of spoken questions, dropped like the question words unless nothing else is left.
FILLER: frozenset[str] = frozenset(
    ["say", "said", "says", "tell", "told", "talk", "talked", "mention", "mentioned", "think",
     "thought", "happened", "happen", "going", "thing", "things", "something", "anything",
     "ever", "also", "just", "really", "other", "both", "each", "time", "times", "now", "new"]
)
# Function words cut out of CJK queries before bigramming (question words, pronouns, particles).
CJK_QUERY_STOPWORDS: tuple[str, ...] = tuple(
    sorted(
        ["我们", "你们", "他们", "什么时候", "什么", "怎么样", "怎么", "怎样", "如何", "为什么", "哪里", "哪个", "是不是", "是否", "有没有", "这个", "那个", "一下", "请问", "告诉我", "的", "了", "吗", "呢", "吧", "啊", "把", "被", "の", "は", "が", "を", "に", "で", "と", "も", "か"],
        key=len,
        reverse=True,
    )
)
_CJK_STOP_RE = re.compile("|".join(map(re.escape, CJK_QUERY_STOPWORDS)))


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of an ASCII word; other scripts are returned unchanged."""
    if not word.isascii() or not word.isalpha() or len(word) < 3:
        return word
    return _porter_stem(word)


def normalize(text: str) -> str:
    """NFKC-fold non-ASCII text (full-width letters, compatibility forms)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def _run_grams(run: str) -> Iterator[str]:
    """Unigrams and overlapping bigrams of an unspaced-script run."""
    yield from run
    for index in range(len(run) - 1):
        yield run[index : index + 2]


def _camel_parts(segment: str) -> list[str]:
    """`parseEntries` -> [parse, Entries]; other segments stay whole."""
    if segment.isascii() and _HAS_CAMEL.search(segment):
        return _CAMEL_RE.findall(segment)
    return [segment]


def identifier_parts(word: str) -> list[str]:
    """Lower-cased pieces of an identifier: path segments, then words split at joiners and case."""
    pieces: list[str] = []
    if "/" in word or "\\" in word:
        pieces.extend(seg.lower() for seg in re.split(r"[/\\]+", word) if _SPLIT_RE.search(seg))
    for segment in _SPLIT_RE.split(word):
        pieces.extend(part.lower() for part in _camel_parts(segment) if part)
    return pieces


def is_compound(word: str) -> bool:
    """True when a word is an identifier with joiners or camel case."""
    return bool(_SPLIT_RE.search(word)) or (word.isascii() and bool(_HAS_CAMEL.search(word)))


# Prose repeats its words: a document's few thousand tokens are a few hundred distinct words.
@lru_cache(maxsize=100_000)
def word_terms(word: str) -> tuple[str, ...]:
    """Index terms of one word token: stem, or whole identifier plus stemmed parts."""
    lower = word.lower()
    if not is_compound(word):
        return () if lower in INDEX_STOPWORDS else (stem(lower),)
    terms = [lower]
    for part in identifier_parts(word):
        if part not in INDEX_STOPWORDS:
            terms.append(part if _SPLIT_RE.search(part) else stem(part))
    return tuple(terms)


def index_terms(text: str) -> list[str]:
    """All index terms of a text, in order (duplicates kept: they are term frequencies)."""
    out: list[str] = []
    for match in _TOKEN_RE.finditer(normalize(text)):
        run = match.group("run")
        if run is not None:
            out.extend(_run_grams(run))
        else:
            out.extend(word_terms(match.group("word")))
    return out


@dataclass(frozen=True)
class QueryGroup:
    """One query word: its term alternatives and how to match them."""

    raw: str  # the word as typed, lower-cased (prefix retry and snippets use it)
    terms: tuple[str, ...]  # whole-word alternatives; any one matches
    parts: tuple[str, ...] = ()  # identifier parts; all of them together also match
    prefixable: bool = False  # a word that may be retried as part of longer index terms
    weight: float = 1.0  # how much a whole match counts (names and numbers count more)


def _bigram_groups(piece: str) -> list[QueryGroup]:
    """A piece of one character is a unigram; longer pieces are their bigrams."""
    if len(piece) == 1:
        return [QueryGroup(piece, (piece,))]
    return [QueryGroup(piece[i : i + 2], (piece[i : i + 2],)) for i in range(len(piece) - 1)]


def _cjk_groups(run: str) -> list[QueryGroup]:
    """Groups of an unspaced-script run, with function words cut out first."""
    pieces = [p for p in _CJK_STOP_RE.split(run) if p] or [run]
    return [group for piece in pieces for group in _bigram_groups(piece)]


def _word_group(word: str) -> QueryGroup | None:
    lower = word.lower()
    if not is_compound(word):
        if lower in QUERY_STOPWORDS:
            return None
        return QueryGroup(lower, (stem(lower),), prefixable=lower.isalpha() and len(lower) >= 3)
    parts = tuple(
        p if _SPLIT_RE.search(p) else stem(p)
        for p in identifier_parts(word)
        if p not in INDEX_STOPWORDS and not _SPLIT_RE.search(p)
    )
    # A compound typed in part (`abbitMQ`, `dead-let`) is retried whole as a prefix or infix of
    # the identifiers indexed whole (`rabbitmq`, `dead-letter`), as a plain word is.
    return QueryGroup(lower, (lower,), parts=tuple(dict.fromkeys(parts)), prefixable=len(lower) >= 3)


def query_groups(text: str) -> list[QueryGroup]:
    """Analyse a query into groups; stopwords drop out unless nothing else is left."""
    groups: list[QueryGroup] = []
    fallback: list[QueryGroup] = []
    for match in _TOKEN_RE.finditer(normalize(text)):
        run = match.group("run")
        if run is not None:
            groups.extend(_cjk_groups(run))
            continue
        word = match.group("word")
        group = _word_group(word)
        if group is not None:
            groups.append(group)
        elif word.lower() not in INDEX_STOPWORDS:
            fallback.append(QueryGroup(word.lower(), (stem(word.lower()),)))
    unique = {(g.terms, g.parts): g for g in (groups or fallback)}
    return list(unique.values())


def highlight_words(groups: list[QueryGroup]) -> list[str]:
    """Surface forms to look for when cutting a snippet, longest first."""
    words: set[str] = set()
    for group in groups:
        words.add(group.raw)
        words.update(t for t in group.terms if len(t) > 1 or not t.isascii())
        words.update(p for p in group.parts if len(p) > 2)
    return sorted(words, key=len, reverse=True)
