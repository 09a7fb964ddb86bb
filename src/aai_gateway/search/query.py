"""A query as weighted term ids: its own terms, words the index knows for its misspelt words, and
the concepts of the lexicon it names.

Caps (hostile input): the query is cut to MAX_QUERY_CHARACTERS (normalize.py) and to MAX_TERMS
distinct terms, in order of appearance; at most MAX_TYPO_WORDS words are looked up for typos or
compounds (spelling.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .lexicon import CONCEPT_PREFIX, Lexicon
from .normalize import MAX_QUERY_CHARACTERS, clip_query
from .tokens import analyze, stem

if TYPE_CHECKING:
    from .spelling import Loanwords, Speller

MAX_TERMS = 128
MAX_TYPO_WORDS = 4
TYPO_WEIGHT = 0.7
"""A word the index knows, found for a query word it does not know (1 edit away; 2 for long
words), weighs this much of a word typed right."""
COMPOUND_WEIGHT = 0.9
"""A part of a compound word the index does not know (`Zugverbindung`: `Zug`, `Verbindung`)."""
CONCEPT_WEIGHT = 0.8
"""A concept's term, relative to a word of the query."""


@dataclass(frozen=True, slots=True)
class WeightedQuery:
    """`weights`: term id -> weight, empty when nothing in the query is known to the index.
    `words`: the ids of terms that come from the query's own words (typed, corrected or split),
    not from the lexicon: what an app's names must all have for the query to name that app."""

    weights: dict[int, float]
    words: frozenset[int]


# Stopwords: words that say nothing about what a query wants (`the`, `of`, `ich`), left out of
# a query's terms unless nothing else is left. Descriptors keep them (IDF weighs them down; and
# `to do` must still become `todo`, which happens before this list applies). European languages
# only: a Chinese character such as 给 is a function word in one place and part of a word in
# another (发给), and Japanese particles of one kana are never terms at all (tokens.py).
_WORDS = (
    # English
    "a an the to of in on at for with by from and or is are was be been it its this that these those "
    "i me my mine we our us you your he she they them their please can could would will shall should "
    "what which who whom how when where why do does did some any just also into about there here "
    "have has had am so if then than very too up out as "
    # German
    "der die das den dem des ein eine einen einem einer und oder ich mich mir mein meine meinen du "
    "dich dein wir uns unser ist sind war im am an auf aus bei für mit nach von vom zu zum zur bitte "
    "wie was welche welcher welches wo wann ob es sie er nicht kein keine noch "
    # French
    "le la les un une des de du et ou je me moi mon ma mes tu te toi ton ta tes nous notre vous votre "
    "est sont en dans pour avec sur au aux ce cette ces qui que quoi comment où il elle ils elles "
    "ne pas s'il stp svp "
    # Spanish
    "el los las unos unas y o del para con por mi mis tu tus nos nuestro es son al que qué cómo "
    "donde dónde cuando cuándo se su sus lo le les favor"
)
STOPWORDS: frozenset[str] = frozenset(_WORDS.split())


def stop_terms(stem: Callable[[str], str]) -> frozenset[str]:
    """The stopwords as query terms (stemmed like every word)."""
    return frozenset(stem(word) for word in STOPWORDS)


_ARITHMETIC = re.compile(r"\d\s*[-+*/×÷^%=]|[-+*/×÷^=]\s*\d|√\s*\d")
"""A number next to an arithmetic sign (`17.5% of 2340`, `3*7`): a calculation, whatever the words."""
MATH_CONCEPT = CONCEPT_PREFIX + "math"
_stops: frozenset[str] | None = None


def _stop_terms() -> frozenset[str]:
    global _stops  # noqa: PLW0603 (computed once: it needs the stemmer, loaded with the first index)
    if _stops is None:
        _stops = stop_terms(stem)
    return _stops


def query_weights(
    text: str,
    vocabulary: Mapping[str, int],
    lexicon: Lexicon | None,
    speller: Speller | None,
    loanwords: Loanwords | None = None,
) -> WeightedQuery:
    """The weighted terms of the query `text`."""
    analyzed = analyze(clip_query(text), pairs=True)
    weights: dict[int, float] = {}
    stop = _stop_terms()
    terms = [term for term in analyzed.terms if term not in stop] or analyzed.terms
    for term in terms:
        if len(weights) >= MAX_TERMS:
            break
        term_id = vocabulary.get(term)
        if term_id is not None:
            weights[term_id] = 1.0
    corrected: list[str] = []
    if speller is not None:
        unknown = [
            surface
            for surface, term in zip(analyzed.surfaces, analyzed.words, strict=True)
            if term not in vocabulary
            and term not in stop
            and surface.isalpha()
            and not (lexicon and lexicon.knows(surface))
        ]
        for surface in list(dict.fromkeys(unknown))[:MAX_TYPO_WORDS]:
            parts = speller.compound_parts(surface)
            found = parts or speller.corrections(surface)
            weight = COMPOUND_WEIGHT if parts else TYPO_WEIGHT
            for word in found:
                corrected.append(word)
                term_id = vocabulary.get(stem(word))
                if term_id is not None:
                    weights.setdefault(term_id, weight)
    if loanwords is not None:
        for kana in dict.fromkeys(analyzed.kana):
            if kana not in vocabulary:
                for word in loanwords.match(kana):
                    term_id = vocabulary.get(stem(word))
                    if term_id is not None:
                        weights.setdefault(term_id, TYPO_WEIGHT)
    words = frozenset(weights)
    if lexicon is not None:
        concepts = lexicon.concepts(analyzed) + lexicon.concepts_of_words(corrected)
        if _ARITHMETIC.search(text[:MAX_QUERY_CHARACTERS]):
            concepts.append(MATH_CONCEPT)
        for concept in concepts:
            term_id = vocabulary.get(concept)
            if term_id is not None:
                weights[term_id] = max(weights.get(term_id, 0.0), CONCEPT_WEIGHT)
    return WeightedQuery(weights, words)
