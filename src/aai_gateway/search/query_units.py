"""The units of a query (query.py) and how they are built: weighted term ids, literal and
alternative, and the weights of each kind of term.

A unit has two kinds of terms. Its `literal` terms are what the query says, added up: the words
of a phrase, the characters of a CJK word. Its `alternatives` stand for the same piece in other
words, and compete: the concepts the piece names, their broader and narrower terms, the words the
index knows for a misspelt word. The piece scores the better of the two (scoring.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .concept_files import CONCEPT_PREFIX, narrower_term
from .lexicon import Lexicon

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


class UnitBuilder:
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
