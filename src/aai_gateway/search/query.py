"""A query as units of weighted term ids, one unit per piece of the query: a word, a phrase of
the lexicon (`pull request`), a CJK word of the lexicon (`构建`), a joined form (`to do`:
`todo`), a CJK character or pair outside any lexicon word.

A unit has two kinds of terms. Its `literal` terms are what the query says, added up: the words
of a phrase, the characters of a CJK word. Its `alternatives` stand for the same piece in other
words, and compete: the concepts the piece names, their broader and narrower terms, the words the
index knows for a misspelt word. The piece scores the better of the two (scoring.py). So `job`
meets an English `job` or a Chinese `作业` about as well, instead of `job` counting twice where the
descriptor's language is the query's, and a broader concept never adds to the concept it widens.

Caps (hostile input): the query is cut to MAX_QUERY_CHARACTERS (normalize.py), to MAX_TERMS
distinct terms and MAX_UNITS units, in order of appearance; at most MAX_TYPO_WORDS words are
looked up for typos or compounds (spelling.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .compounds import parts_say_the_same
from .concept_files import CONCEPT_PREFIX, narrower_term
from .language import QUESTION_WORDS, is_question, language_of
from .lexicon import Lexicon
from .normalize import MAX_QUERY_CHARACTERS, clip_query, is_cjk
from .query_forms import concepts_of_form, person_names
from .stopwords import CJK_STOPWORDS, query_stop_terms
from .tokens import Analyzed, analyze, stem

if TYPE_CHECKING:
    from .cjk_names import NameSounds
    from .spelling import Loanwords, Speller

MAX_TERMS = 128
MAX_UNITS = 32
"""Pieces of a query scored (in order); a query is a sentence or two, and each piece costs a pass
over every entry."""
MAX_TYPO_WORDS = 4
TYPO_WEIGHT = 0.7
"""A word the index knows, found for a query word it does not know (1 edit away; 2 for long
words), weighs this much of a word typed right."""
COMPOUND_WEIGHT = 0.9
"""A part of a compound word the index does not know (`Zugverbindung`: `Zug`, `Verbindung`)."""
CONCEPT_WEIGHT = 0.8
"""A concept's term, relative to a word of the query."""
NARROWER_WEIGHT = 0.3
"""A text with a concept narrower than one the query names (`§<payment`: a refund, for `payment`)."""
BROADER_WEIGHT = 0.3
"""A broader concept of one the query names (`payment` for `refund`)."""
SIBLING_WEIGHT = 0.2
"""A text with another concept under the same broader one (an invoice, for `refund`)."""
OTHER_LANGUAGE_WEIGHT = 0.5
"""The concepts a query's word names in another language than the query's (`leer` is Spanish
for reading, German for empty), relative to those it names in the query's language."""
PERSON_CONCEPT = CONCEPT_PREFIX + "person"
PERSON_WEIGHT = 0.4
"""A capitalized word the index does not know, after the first (`pay Paul back`): a guess that it
is a person, weighed as a guess."""
_NAME_WITH_NUMBER = re.compile(r"[^\W\d_]{4,}\d{1,4}")
"""A word of letters then digits (`imoscout24`): a name, corrected as a typo like a word."""


@dataclass(slots=True)
class Unit:
    """One piece of the query: `literal` term ids (added up) and `alternatives` (the best counts).
    `home`: the unit this one was merged into (two pieces that name the same concept are one)."""

    literal: dict[int, float] = field(default_factory=dict)
    alternatives: dict[int, float] = field(default_factory=dict)
    home: Unit | None = None
    guessed: bool = True
    """Only a guess at what the piece says (the words a typo may stand for): a result that does
    not match it is not counted short of a piece (scoring.py, coordination)."""

    def resolved(self) -> Unit:
        unit = self
        while unit.home is not None:
            unit = unit.home
        return unit


@dataclass(frozen=True, slots=True)
class WeightedQuery:
    """`units`: the pieces of the query, empty when nothing in it is known to the index.
    `words`: what an app's names must all have for the query to name that app: the ids of terms
    that come from the query's own words (typed, corrected or split) and of the concepts those
    words name (not their broader ones): `jenkins 查看构建日志` asks for builds and logs, not for
    the Jenkins app."""

    units: list[Unit]
    words: frozenset[int]
    looks: bool = False
    """The query asks to see something, not to do it: a question (`is the car locked?`,
    `山手線遅れてる？`). (A query that names no action was tried too: too many actions are said
    in words the lexicon has as things, `e-mail my boss`, `Musik lauter`.)"""


class _Builder:
    """Collects units; a term goes to the unit that weighs it most, up to MAX_TERMS terms."""

    def __init__(self, vocabulary: Mapping[str, int], lexicon: Lexicon | None) -> None:
        self.vocabulary = vocabulary
        self.lexicon = lexicon
        self.units: list[Unit] = []
        self.words: set[int] = set()
        self._placed: dict[int, tuple[dict[int, float], float, Unit]] = {}

    def unit(self) -> Unit:
        unit = Unit()
        self.units.append(unit)
        return unit

    def literal(self, unit: Unit, term: str, weight: float = 1.0, *, named: bool = True) -> None:
        unit = unit.resolved()
        if self._put(unit.literal, term, weight, named=named):
            unit.guessed = False

    def alternative(
        self, unit: Unit, term: str, weight: float, *, named: bool = False, sure: bool = True
    ) -> None:
        unit = unit.resolved()
        if self._put(unit.alternatives, term, weight, named=named) and sure:
            unit.guessed = False

    def concepts(
        self, unit: Unit, concepts: Iterable[str], scale: float = 1.0, *, sure: bool | None = None
    ) -> None:
        """A piece's concepts, with their narrower, broader and sibling terms; `scale`: less for
        the concepts of a word the query only may have meant (a typo's correction); `sure`: the
        query says them (by default when `scale` is 1), else its unit is out of coordination
        (scoring.py). A piece that names a concept another piece named already joins that piece's
        unit (`全員` and `一斉送信` both say broadcast: one unit, its terms counted once)."""
        concepts = list(concepts)
        if not concepts or self.lexicon is None:
            return
        unit = unit.resolved()
        for concept in concepts:
            placed = self._placed.get(self.vocabulary.get(concept, -1))
            owner = placed[2] if placed is not None and placed[1] >= CONCEPT_WEIGHT * scale else None
            if owner is not None and owner.resolved() is not unit:
                self._merge(unit, owner.resolved())
                unit = unit.resolved()
        wider = self.lexicon.broader(concepts)
        says = scale == 1.0 if sure is None else sure
        for terms, weight in (
            (concepts, CONCEPT_WEIGHT),
            ([narrower_term(concept) for concept in concepts], NARROWER_WEIGHT),
            (wider, BROADER_WEIGHT),
            ([narrower_term(concept) for concept in wider], SIBLING_WEIGHT),
        ):
            for term in terms:
                self.alternative(unit, term, weight * scale, named=weight == CONCEPT_WEIGHT, sure=says)

    def phrase(self, unit: Unit, concepts: Iterable[str], *, sure: bool = True) -> None:
        """The concepts of a phrase or CJK word of the lexicon: one that says both what is done and
        to what (`jot down`: write a note; `メモを取る`; `开发票`: an invoice, issued) names the
        action in a unit of its own, so that the operation with both (`create_note`) leads the
        ones with the thing only (`delete_note`). A single word stays one unit (`order` is a
        purchase and the thing bought, and would count twice). `sure`: as for `concepts`."""
        concepts = list(concepts)
        actions = [c for c in concepts if self.lexicon is not None and c in self.lexicon.actions]
        things = [c for c in concepts if c not in actions]
        if actions and things:
            self.concepts(unit, things, sure=sure)
            self.concepts(self.unit(), actions, sure=sure)
        else:
            self.concepts(unit, concepts, sure=sure)

    def _put(self, terms: dict[int, float], term: str, weight: float, *, named: bool) -> bool:
        """Whether `term` is now in `terms`."""
        term_id = self.vocabulary.get(term)
        if term_id is None:
            return False
        placed = self._placed.get(term_id)
        if placed is not None and placed[1] >= weight:
            return False  # a term counts once, in the unit that weighs it most
        if placed is not None:
            del placed[0][term_id]
        elif len(self._placed) >= MAX_TERMS:
            return False
        self._placed[term_id] = (terms, weight, self._unit_of(terms))
        terms[term_id] = weight
        if named:
            self.words.add(term_id)
        return True

    def _unit_of(self, terms: dict[int, float]) -> Unit:
        return next(unit for unit in self.units if unit.literal is terms or unit.alternatives is terms)

    def _merge(self, unit: Unit, into: Unit) -> None:
        for source, target in ((unit.literal, into.literal), (unit.alternatives, into.alternatives)):
            for term_id, weight in source.items():
                target[term_id] = max(weight, target.get(term_id, 0.0))
                self._placed[term_id] = (target, self._placed[term_id][1], into)
            source.clear()
        into.guessed = into.guessed and unit.guessed
        unit.home = into

    def result(self, *, question: bool = False) -> WeightedQuery:
        units = [unit for unit in self.units if unit.literal or unit.alternatives][:MAX_UNITS]
        looks = self.lexicon is not None and question
        return WeightedQuery(units, frozenset(self.words), looks)


def query_weights(
    text: str,
    vocabulary: Mapping[str, int],
    lexicon: Lexicon | None,
    speller: Speller | None,
    *,
    loanwords: Loanwords | None = None,
    surfaces: Container[str] = (),
    names: NameSounds | None = None,
) -> WeightedQuery:
    """The units of the query `text`; `surfaces` are the index's words as written; `names`
    restores app names misspelt in Chinese or kana (cjk_names.py)."""
    clipped = clip_query(text)
    analyzed = analyze(names.rewrite(clipped, vocabulary) if names is not None else clipped, pairs=True)
    build = _Builder(vocabulary, lexicon)
    language = language_of(clipped, lexicon.languages) if lexicon is not None else None
    names_of_people = person_names(clipped) if lexicon is not None and language != "de" else frozenset()
    units = _words(analyzed, build, speller, surfaces, names_of_people, language=language)
    stop = query_stop_terms()
    for index, spelt in analyzed.spellings.items():  # `Kündigung` meets `vertragKuendigen`, and back
        if analyzed.words[index] not in stop:  # a stopword's neither: `für` is no `fuer`
            build.alternative(units[index], spelt, 1.0, named=True)
    _joined_forms(analyzed, build, units)
    _cjk(analyzed, build)
    if loanwords is not None:
        for kana in dict.fromkeys(analyzed.kana):
            if kana not in vocabulary:
                unit = build.unit()
                for word in loanwords.match(kana):
                    build.alternative(unit, stem(word), TYPO_WEIGHT, named=True)
    if lexicon is not None:
        for concepts in concepts_of_form(text[:MAX_QUERY_CHARACTERS], clipped):
            build.concepts(build.unit(), concepts)
    return build.result(question=is_question(clipped))


def _words(
    analyzed: Analyzed,
    build: _Builder,
    speller: Speller | None,
    surfaces: Container[str],
    names: Container[str] = (),
    *,
    language: str | None = None,
) -> dict[int, Unit]:
    """The units of the Latin words: one per word written apart (`jobFullName` is one), or one per
    lexicon phrase for its words. Answers the unit of each word. `language`: the query's, when
    clear; a word names the concepts it names in that language or in English only."""
    lexicon = build.lexicon
    stop = query_stop_terms()
    words, written = analyzed.words, analyzed.surfaces
    only_stopwords = all(word in stop for word in words)
    spans = lexicon.phrase_spans(words, written) if lexicon is not None else []
    unit_of: dict[int, Unit] = {}
    by_span: dict[tuple[int, int], list[str]] = {}
    for start, end, token in spans:
        by_span.setdefault((start, end), []).append(token)
    for (start, end), tokens in by_span.items():
        unit = unit_of.get(start) or build.unit()
        for index in range(start, end):
            unit_of[index] = unit
        # a question's phrase (`wo ist`, `how much`, `wann kommt`) says what kind of answer is
        # wanted, which may be (tracking, a price) or not be what the question is about: a guess
        build.phrase(unit, tokens, sure=written[start] not in QUESTION_WORDS)
    phrased = set(unit_of)
    chunk_units: dict[int, Unit] = {}
    typo_words = 0
    for index, (surface, term) in enumerate(zip(written, words, strict=True)):
        in_phrase = index in phrased
        chunk = analyzed.chunk_of[index]
        unit = unit_of.get(index) or chunk_units.get(chunk) or build.unit()
        unit_of[index] = chunk_units.setdefault(chunk, unit)
        if term in stop and not only_stopwords:
            continue
        if lexicon is not None and not in_phrase:
            named = _word_concepts(lexicon, surface, term, language)
            build.concepts(unit, named)
            if language is not None:
                # what the word means in another language: a guess (`dollars` is French too)
                elsewhere = _word_concepts(lexicon, surface, term, None)
                build.concepts(unit, [c for c in elsewhere if c not in named], scale=OTHER_LANGUAGE_WEIGHT)
        # a German, French or Spanish word of the lexicon that no descriptor has as written is
        # not looked up by its English stem (`Termin` is no form of `terminate`)
        foreign = lexicon is not None and surface not in surfaces and lexicon.foreign_only(surface)
        if not foreign:
            build.literal(unit, term)
        # a word the index has as written is no typo; one it has only by stem may be (`calender`
        # stems as `calendly` does: the calendar it means is one letter away)
        if (
            speller is None
            or (term in build.vocabulary and surface in surfaces)
            or in_phrase
            or not (surface.isalpha() or _NAME_WITH_NUMBER.fullmatch(surface))
        ):
            continue
        if typo_words >= MAX_TYPO_WORDS:
            continue
        typo_words += 1
        # a compound is split even when the lexicon knows it whole (`Zugverbindung`: a train,
        # and `Zug` and `Verbindung` as a descriptor may write them); a word the lexicon knows is
        # no typo
        known = lexicon is not None and lexicon.knows(surface)
        parts = speller.compound_parts(surface)
        if (
            known
            and parts
            and lexicon is not None
            and not parts_say_the_same(lexicon, surface, term, parts, language)
        ):
            parts = []
        corrections = [] if parts or known else speller.corrections(surface)
        if not parts and not known and not corrections and lexicon is not None:
            # a compound with an unknown first part is still what its last part is (`Fernbus`)
            parts = speller.compound_head(surface, lexicon.knows)
        for part in parts:
            build.literal(unit, stem(part), COMPOUND_WEIGHT)
        for word in corrections:
            build.alternative(unit, stem(word), TYPO_WEIGHT, named=True, sure=False)
        if not parts and not corrections and not known and surface in names and lexicon is not None:
            # a name the index does not know: most often a person's, whom something is for
            build.concepts(unit, [PERSON_CONCEPT], scale=PERSON_WEIGHT / CONCEPT_WEIGHT)
        if lexicon is not None:
            # a compound's parts say what it says (`Rücksendeetikett`); a correction, what it may
            scale = COMPOUND_WEIGHT if parts else TYPO_WEIGHT
            concepts = lexicon.concepts_of_words(parts or corrections, language)
            build.concepts(unit, concepts, scale=scale, sure=bool(parts))
    return unit_of


def _word_concepts(lexicon: Lexicon, surface: str, term: str, language: str | None) -> list[str]:
    """The concepts a word of a query names (in `language` and English, or in any language when
    None): as a word of the lexicon, a query-only word, or else a verb form."""
    named = lexicon.concepts_of_word(surface, term, language)
    named += lexicon.query_concepts_of_word(surface, term, language)
    return named or lexicon.verb_form_concepts(surface, language)


def _joined_forms(analyzed: Analyzed, build: _Builder, unit_of: Mapping[int, Unit]) -> None:
    """`jobFullName`: `jobfullname`; `to-do` and a query's `to do`: `todo`. The words it joins,
    written as one: a literal term of the unit of its first word, which a descriptor that writes
    them the same way matches on top of the words."""
    seen = set(analyzed.words)
    for term, first in analyzed.joined.items():
        if term in seen:
            continue
        unit = unit_of.get(first) or build.unit()
        build.literal(unit, term)
        if build.lexicon is not None:
            build.phrase(unit, sorted(build.lexicon.concepts_of_term(term)))


def _cjk(analyzed: Analyzed, build: _Builder) -> None:
    """Chinese and Japanese: a unit per lexicon word (its characters and pairs, and its concepts),
    and one per stretch of text between them. A unit's characters and pairs stand for one word
    together, so they weigh 1/sqrt(n) each: `ファイル` (a word, a character pair three times)
    must not outweigh the verb beside it four to one."""
    regions: list[tuple[str, Unit]] = []
    for stretch in analyzed.stretches:
        spans = build.lexicon.cjk_spans(stretch) if build.lexicon is not None else []
        reach = 0
        for start, end, tokens in [*spans, (len(stretch), len(stretch), set())]:
            if start > reach:
                regions.append((stretch[reach:start], build.unit()))
            if end > start:
                unit = build.unit()
                if end - start > 1:
                    build.phrase(unit, sorted(tokens))
                else:
                    build.concepts(unit, sorted(tokens))
                regions.append((stretch[start:end], unit))
            reach = max(reach, end)
    members: dict[int, list[str]] = {}
    for term in dict.fromkeys(analyzed.terms):
        if not is_cjk(term) or term in CJK_STOPWORDS:
            continue
        home = next((i for i, (text, _unit) in enumerate(regions) if term in text), None)
        if home is None:
            # a pair across two regions, a kana word around a lexicon word: where it starts
            home = next((i for i, (text, _unit) in enumerate(regions) if term[0] in text), None)
        if home is None:
            home = len(regions)
            regions.append((term, build.unit()))
        members.setdefault(home, []).append(term)
    for home, terms in members.items():
        weight = 1 / math.sqrt(len(terms))
        for term in terms:
            build.literal(regions[home][1], term, weight)
