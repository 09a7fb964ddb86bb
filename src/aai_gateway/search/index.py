"""The search index: what `aai_search` answers, built from apps' cards and their operations'
texts (`IndexedApp`). Each query is read twice, with the concept lexicon and literally, and the
two rankings are fused (`SearchIndex._ranked`; docs/decisions.md, "Two readings of a query")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..bulk import without_cyclic_gc
from ..descriptor.card import AppCard
from . import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from .corpus import Corpus, IndexedApp, short_forms
from .language import language_of
from .lexicon import READING_CONCEPTS, Lexicon, default_lexicon
from .query import query_weights

LOOKING_LEAD = 1.15
"""How much an operation that only looks (its name says list, get, search, track, or its app says
it changes nothing: `OperationText.reads_only`) gains over the others when the query is a question
(language.py, `is_question`)."""
LOCAL_LEAD = 1.1
"""How much an app described in the query's language (not English) and its operations gain: people
use the apps of their country (language.py)."""
LANGUAGES = ("de", "fr", "es", "zh", "ja")
GUESSES_ONLY_SHARE = 0.5
"""What an entry that matches only the query's guesses (the corrections of words the index does
not know) keeps of its score beside a word the query surely says, when the query is in one of
LANGUAGES: there, a word the index does not know is most often a word of that language that no
descriptor writes (`Stell`, `Kiste`), not a typo, and its corrections (`star`) are far guesses.
(In English, the catalog's language, it is more often a typo of a name: `letterbox app`.)"""
NAMED_APP_LEAD = 1.05
"""How far an app that the query names leads the best of its operations."""
FUSED_DEPTH = 20
"""Results of each reading of a query that the fusion ranks (`SearchIndex._ranked`); those after
follow in each reading's order, so that every page of a query's results comes from one order."""
RANK_OFFSET = 1.0
"""Reciprocal rank fusion: a result at rank r (0 first) of a reading scores share / (this + r)."""
LITERAL_SHARE = 0.3
"""The literal reading's share in the fusion, beside the lexicon's 1. Below 1 / (RANK_OFFSET + 1),
the lexicon's first result stays first (1 / RANK_OFFSET against at most 1 / (RANK_OFFSET + 1) +
LITERAL_SHARE / RANK_OFFSET for any other): the literal reading reorders the places after it. Its
first result, even one the lexicon ranks nowhere, scores as much as a place between the lexicon's
third and fourth."""
MAX_LANGUAGE_TEXT = 300
"""Characters of a query or an app's description read to tell its language."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: an app (`tool` None) or one of its operations, with its score (higher is
    better) and a one-line description."""

    app: AppCard
    tool: str | None
    score: float
    description: str


@dataclass(frozen=True, slots=True)
class SearchPage:
    """A page of results, and whether more follow it."""

    hits: list[SearchHit]
    more: bool


class SearchIndex:
    """Every app of `apps` and each of its operations, searchable by `search`.

    `concepts=False` leaves the cross-language concept lexicon out (for measuring what it adds).
    Building costs about 0.1 ms per operation; the first build of a process also loads the
    libraries (about 0.3 s).
    """

    def __init__(self, apps: Iterable[IndexedApp], *, concepts: bool = True) -> None:
        from .scoring import FieldScorer  # noqa: PLC0415 (numpy: with the first index)
        from .spelling import Speller  # noqa: PLC0415 (rapidfuzz: with the first index)

        self._lexicon: Lexicon | None = default_lexicon() if concepts else None
        self._concepts = concepts
        with without_cyclic_gc():
            self._corpus = Corpus(apps, self._lexicon)
            corpus = self._corpus
            self._scorer = FieldScorer(corpus.fields, len(corpus.vocabulary), corpus.owner)
            self._looking = self._looking_entries(corpus)
            self._languages: Any = None  # per entry, its app's language (an index in LANGUAGES, -1)
            corpus.drop_fields()
            lexicon_words = self._lexicon.surfaces if self._lexicon else []
            self._speller = Speller(
                [*corpus.surfaces, *lexicon_words],
                names=corpus.name_words,
                acronyms=short_forms(corpus, self._lexicon),
                whole_names=corpus.whole_names,
                also_known=self._lexicon.knows if self._lexicon else None,
            )

    @staticmethod
    def _looking_entries(corpus: Corpus) -> Any:
        """Per entry, whether it is an operation that only looks: its name (or title) says so, or
        its app does (`readOnlyHint`, an HTTP GET)."""
        import numpy as np  # noqa: PLC0415

        looking = {corpus.vocabulary[c] for c in READING_CONCEPTS if c in corpus.vocabulary}
        names = corpus.fields["name"]
        ids = np.frombuffer(names.ids, dtype=np.int32)
        counts = np.frombuffer(names.counts, dtype=np.int32)
        entry_of = np.repeat(np.arange(len(names), dtype=np.int32), counts)
        flags = np.frombuffer(corpus.reads_only, dtype=np.uint8).astype(bool)
        flags[entry_of[np.isin(ids, list(looking))]] = True
        flags &= np.frombuffer(corpus.entry_tool, dtype=np.int32) >= 0
        return flags

    def _entry_languages(self) -> Any:
        """Per entry, the index in LANGUAGES of its app's language (-1: English or unclear),
        computed with the first query that has a language to match."""
        import numpy as np  # noqa: PLC0415

        if self._languages is None:
            corpus = self._corpus
            per_app = np.array(
                [
                    LANGUAGES.index(found)
                    if (found := language_of(app.description[:MAX_LANGUAGE_TEXT])) in LANGUAGES
                    else -1
                    for app in corpus.cards
                ],
                dtype=np.int8,
            )
            self._languages = per_app[np.frombuffer(corpus.entry_app, dtype=np.int32)]
        return self._languages

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, *, app: IndexedApp | None = None
    ) -> list[SearchHit]:
        """The best matches for `query`, best first, at most `limit` (`page`'s first)."""
        return self.page(query, limit, app=app).hits

    def page(
        self, query: str, limit: int = DEFAULT_LIMIT, *, offset: int = 0, app: IndexedApp | None = None
    ) -> SearchPage:
        """The matches for `query` from the `offset`-th best on, at most `limit` (capped at
        MAX_LIMIT, `offset` at MAX_OFFSET; a limit of 0 or less: none). With `app`, only that app's
        operations, those the query names exactly (`list_issues`, or `get_issue list_issues`)
        first; with `app` and a blank query, all of them in descriptor order.

        Hostile input is bounded: the query is cut to 1,000 characters and 128 distinct terms;
        characters that are neither letters nor digits (controls, emoji, lone surrogates,
        punctuation) only separate words."""
        limit = max(0, min(int(limit), MAX_LIMIT))
        offset = max(0, min(int(offset), MAX_OFFSET))
        if limit == 0:
            return SearchPage([], more=False)
        if app is not None:
            return self._page_of_app(query, limit, offset, app)
        return self._paged(self._ranked(query, offset + limit + 1, None), limit, offset)

    def _page_of_app(self, query: str, limit: int, offset: int, app: IndexedApp) -> SearchPage:
        number = self._corpus.app_numbers.get(app.card.key)
        if number is None:
            # an app this index was not built with (e.g. discovered since): its own small index
            return SearchIndex([app], concepts=self._concepts).page(query, limit, offset=offset, app=app)
        span = self._corpus.entries_of(number)
        operations = range(span.start + 1, span.stop)
        if not query.strip():
            return self._paged([(i, 0.0) for i in operations[: offset + limit + 1]], limit, offset)
        named = self._named_operations(query, operations)
        count = offset + limit + 1 + len(named)
        ranked = [(i, score) for i, score in self._ranked(query, count, operations) if i not in named]
        top = ranked[0][1] if ranked else 1.0
        return self._paged([*((i, top) for i in named), *ranked], limit, offset)

    def _named_operations(self, query: str, operations: range) -> list[int]:
        """The entries of `operations` the query names: the whole query, or every word of it
        (a guide asks for details so: `get_issue list_issues`), in its order. Only then: a word
        that is also an operation's name (`set a hash field` for `set` and `hset`) is a word.
        A name is matched exactly, else ignoring case."""
        names: dict[str, int] = {}
        folded: dict[str, int] = {}
        for i in operations:  # of names alike, the first
            name = str(self._corpus.entry(i).tool)
            names.setdefault(name, i)
            folded.setdefault(name.casefold(), i)

        def named(word: str) -> int | None:
            return names.get(word, folded.get(word.casefold()))

        whole = named(query.strip())
        if whole is not None:
            return [whole]
        found = [named(word) for word in query.replace(",", " ").split()]
        return list(dict.fromkeys(i for i in found if i is not None)) if None not in found else []

    def _paged(self, ordered: list[tuple[int, float]], limit: int, offset: int) -> SearchPage:
        """The page of `ordered` (entries with their scores, best first) at `offset`."""
        hits = []
        for i, score in ordered[offset : offset + limit]:
            entry = self._corpus.entry(i)
            hits.append(SearchHit(entry.app, entry.tool, round(score, 4), entry.description))
        return SearchPage(hits, more=len(ordered) > offset + limit)

    def _ranked(self, query: str, count: int, within: range | None) -> list[tuple[int, float]]:
        """The first `count` entries (with their scores) for `query`, best first.

        The query is read twice: with the lexicon (the concepts its words name) and literally
        (its words alone). The lexicon finds what people mean in other words, and also reads
        words as what they do not mean here (`night` as lodging, `trace` as a parcel): on the
        thirteenth query set, each reading alone found two fifths of what the other missed. The
        two rankings' first FUSED_DEPTH are fused by reciprocal rank, the lexicon's weighing more:
        what both rank high leads, and what only one finds still has its place near the top. The
        rest follow, the lexicon's reading's first."""
        read, looks = self._scores(query, self._lexicon, within)
        if read is None:
            return []
        readings = [(1.0, read)]
        if self._lexicon is not None:  # without one (`concepts=False`), the literal reading is all
            readings.append((LITERAL_SHARE, self._scores(query, None, within, looks=looks)[0]))
        best = [
            (share, self._best(scores, max(count, FUSED_DEPTH) + FUSED_DEPTH)) for share, scores in readings
        ]
        fused: dict[int, float] = {}
        for share, ranked in best:
            for rank, i in enumerate(ranked[:FUSED_DEPTH]):
                fused[i] = fused.get(i, 0.0) + share / (RANK_OFFSET + rank)
        order = sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
        last = order[-1][1] if order else 0.0
        for share, ranked in best:
            for rank, i in enumerate(ranked[FUSED_DEPTH:], start=FUSED_DEPTH):
                if len(order) >= count:
                    break
                if i not in fused:
                    fused[i] = last = min(last, share / (RANK_OFFSET + rank))
                    order.append((i, last))
        start = within.start if within is not None else 0
        return [(i + start, score) for i, score in order[:count]]

    @staticmethod
    def _best(scores: Any | None, count: int) -> list[int]:
        """The positions of the `count` highest positive scores, best first (ties: lower first):
        the first `count` of one order, whatever `count`."""
        import numpy as np  # noqa: PLC0415

        if scores is None:
            return []
        positive = np.flatnonzero(scores > 0)
        if len(positive) > count:  # those tied with the count-th best too: which of them come first
            # must not depend on `count`, or pages of one query would not follow one order
            threshold = np.partition(scores[positive], len(positive) - count)[len(positive) - count]
            positive = positive[scores[positive] >= threshold]
        best = positive[np.lexsort((positive, -scores[positive]))][:count]  # by score, then position
        return [int(i) for i in best]

    def _scores(
        self, query: str, lexicon: Lexicon | None, within: range | None, *, looks: bool = False
    ) -> tuple[Any, bool]:
        """Every entry's score for `query` read with `lexicon` (None: literally), as a numpy array
        (only the entries of `within`, when given), or None when no word of it counts; and
        whether the query asks to look (a question: what tells it needs the lexicon's languages,
        so a literal reading is told `looks` by the other)."""
        corpus = self._corpus
        weighted = query_weights(
            query,
            corpus.vocabulary,
            lexicon,
            self._speller,
            loanwords=corpus.loanwords,
            surfaces=corpus.surfaces,
            names=corpus.name_sounds,
        )
        looks = looks or weighted.looks
        if not weighted.units:
            return None, looks
        language = language_of(query[:MAX_LANGUAGE_TEXT], lexicon.languages if lexicon else None)
        scores = self._scorer.unit_scores(
            weighted.units,
            weighted.words,
            guesses_only=GUESSES_ONLY_SHARE if language in LANGUAGES else 1.0,
        )
        if looks:
            scores[self._looking] *= LOOKING_LEAD
        if language in LANGUAGES:
            scores[self._entry_languages() == LANGUAGES.index(language)] *= LOCAL_LEAD
        if within is None:
            self._put_named_apps_first(scores, weighted.words)
        return (scores[within.start : within.stop] if within is not None else scores), looks

    def _put_named_apps_first(self, scores: Any, words: frozenset[int]) -> None:
        """An app whose names hold every word of the query (`github`, `微信`, `google calendar`) is
        what the query names: it ranks above its own operations, which a word of their descriptions
        may have lifted. A query with a word more (`github issues`) leaves the ranking alone."""
        named: set[int] | None = None
        for term in words:
            apps = self._scorer.apps_named(term)
            if not apps:
                return
            named = set(apps) if named is None else named & set(apps)
            if not named:
                return
        corpus = self._corpus
        for start in named or ():
            span = corpus.entries_of(corpus.entry_app[start])
            if len(span) > 1:
                best = float(scores[span.start + 1 : span.stop].max())
                scores[start] = max(float(scores[start]), best * NAMED_APP_LEAD)
