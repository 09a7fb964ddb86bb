"""A query as units of weighted term ids, one unit per piece of the query: a word, a phrase of
the lexicon (`pull request`), a CJK word of the lexicon (`构建`), a joined form (`to do`:
`todo`), a CJK character or pair outside any lexicon word.

A unit has two kinds of terms. Its `literal` terms are what the query says, added up: the words
of a phrase, the characters of a CJK word. Its `alternatives` stand for the same piece in other
words, and compete: the concepts the piece names, their broader and narrower terms, the words the
index knows for a misspelt word. The piece scores the better of the two (scoring.py; units,
their weights and how they are built are in query_units.py). So `job`
meets an English `job` or a Chinese `作业` about as well, instead of `job` counting twice where the
descriptor's language is the query's, and a broader concept never adds to the concept it widens.

Caps (hostile input): the query is cut to MAX_QUERY_CHARACTERS (normalize.py), to MAX_TERMS
distinct terms and MAX_UNITS units, in order of appearance; at most MAX_TYPO_WORDS words are
looked up for typos or compounds (spelling.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Mapping
from typing import TYPE_CHECKING

from .compounds import parts_say_the_same
from .language import QUESTION_WORDS, is_question, language_of
from .lexicon import Lexicon
from .normalize import MAX_QUERY_CHARACTERS, clip_query, is_cjk
from .query_forms import concepts_of_form, initials, person_names
from .query_units import (
    COMPOUND_WEIGHT,
    CONCEPT_WEIGHT,
    MAX_TYPO_WORDS,
    OTHER_LANGUAGE_WEIGHT,
    PERSON_CONCEPT,
    PERSON_WEIGHT,
    TYPO_WEIGHT,
    Unit,
    UnitBuilder,
    WeightedQuery,
)
from .stopwords import CJK_STOPWORDS, query_stop_terms
from .tokens import NAME_WITH_NUMBER, Analyzed, analyze, fold_word, stem

if TYPE_CHECKING:
    from .cjk_names import NameSounds
    from .spelling import Loanwords, Speller


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
    build = UnitBuilder(vocabulary, lexicon)
    language = language_of(clipped, lexicon.languages) if lexicon is not None else None
    names_of_people = person_names(clipped) if lexicon is not None and language != "de" else frozenset()
    exact = _identifiers(clipped, analyzed, build)
    literal_chunks = frozenset(analyzed.chunk_of[first] for first in exact.values())
    units = _words(
        analyzed, build, speller, surfaces, names_of_people, language=language, literal_chunks=literal_chunks
    )
    stop = query_stop_terms()
    for index, spelt in analyzed.spellings.items():  # `Kündigung` meets `vertragKuendigen`, and back
        # a stopword's neither (`für` is no `fuer`), nor a word of an identifier
        if analyzed.words[index] not in stop and analyzed.chunk_of[index] not in literal_chunks:
            build.alternative(units[index], spelt, 1.0, named=True)
    _joined_forms(analyzed, build, units, speller, surfaces)
    for (term, parts), first in exact.items():
        build.literal(units[first], term, float(parts))  # the identifier weighs as its words
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
    short = initials(clipped)
    if short is not None and speller is not None and speller.is_acronym(short):
        # the query is the name spelt out: the name stands for all its words
        build.literal(build.unit(), stem(short), float(len(short)))
    return build.result(question=is_question(clipped))


def _words(
    analyzed: Analyzed,
    build: UnitBuilder,
    speller: Speller | None,
    surfaces: Container[str],
    names: Container[str] = (),
    *,
    language: str | None = None,
    literal_chunks: Container[int] = (),
) -> dict[int, Unit]:
    """The units of the Latin words: one per word written apart (`jobFullName` is one), or one per
    lexicon phrase for its words. Answers the unit of each word. `language`: the query's, when
    clear; a word names the concepts it names in that language or in English only. The words of
    `literal_chunks` (identifiers, `_identifiers`) are their literal terms only."""
    lexicon = build.lexicon
    stop = query_stop_terms()
    words, written = analyzed.words, analyzed.surfaces
    only_stopwords = all(word in stop for word in words)
    spans = [
        span
        for span in (lexicon.phrase_spans(words, written) if lexicon is not None else [])
        if not any(analyzed.chunk_of[index] in literal_chunks for index in range(span[0], span[1]))
    ]
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
        if chunk in literal_chunks:
            build.literal(unit, term)
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
            or not (surface.isalpha() or NAME_WITH_NUMBER.fullmatch(surface))
        ):
            continue
        if typo_words >= MAX_TYPO_WORDS:
            continue
        typo_words += 1
        _misspelt(build, unit, speller, (surface, term), names=names, language=language)
    return unit_of


def _misspelt(
    build: UnitBuilder,
    unit: Unit,
    speller: Speller,
    written: tuple[str, str],
    *,
    names: Container[str],
    language: str | None,
) -> None:
    """What a query word the index does not know as written may be (`written`: the word as
    written, and its term): an app name misspelt, a compound of known words, a typo of a known
    word, or a person's name."""
    lexicon = build.lexicon
    surface, term = written
    # a compound is split even when the lexicon knows it whole (`Zugverbindung`: a train,
    # and `Zug` and `Verbindung` as a descriptor may write them); a word the lexicon knows is
    # no typo
    known = lexicon is not None and lexicon.knows(surface)
    named = [] if known else speller.near_names(surface)
    parts = [] if named else speller.compound_parts(surface)
    if (
        known
        and parts
        and lexicon is not None
        and not parts_say_the_same(lexicon, surface, term, parts, language)
    ):
        parts = []
    corrections = named or ([] if parts or known else speller.corrections(surface))
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


def _word_concepts(lexicon: Lexicon, surface: str, term: str, language: str | None) -> list[str]:
    """The concepts a word of a query names (in `language` and English, or in any language when
    None): as a word of the lexicon, a query-only word, or else a verb form."""
    named = lexicon.concepts_of_word(surface, term, language)
    named += lexicon.query_concepts_of_word(surface, term, language)
    return named or lexicon.verb_form_concepts(surface, language)


def _joined_forms(
    analyzed: Analyzed,
    build: UnitBuilder,
    unit_of: Mapping[int, Unit],
    speller: Speller | None,
    surfaces: Container[str],
) -> None:
    """`jobFullName`: `jobfullname`; `to-do` and a query's `to do`: `todo`. The words it joins,
    written as one: a literal term of the unit of its first word, which a descriptor that writes
    them the same way matches on top of the words. Two words joined, one of which neither the index
    nor the lexicon knows, that are an app name misspelt (`Nora auto`: norauto) are that name, a
    guess (at most MAX_TYPO_WORDS pairs are tried)."""
    seen = set(analyzed.words)
    tries = 0
    for term, first in analyzed.joined.items():
        if term in seen:
            continue
        unit = unit_of.get(first) or build.unit()
        build.literal(unit, term)
        if build.lexicon is not None:
            build.phrase(unit, sorted(build.lexicon.concepts_of_term(term)))
        if speller is None or term in build.vocabulary or first + 1 >= len(analyzed.surfaces):
            continue
        pair = analyzed.surfaces[first : first + 2]
        written = "".join(pair)
        if (
            stem(written) != term  # a joined form of three words or more (`jobFullName`)
            or all(  # one of them, at least, is no word the index or the lexicon knows
                word in surfaces or (build.lexicon is not None and build.lexicon.knows(word)) for word in pair
            )
            or tries >= MAX_TYPO_WORDS
        ):
            continue
        tries += 1
        for name in speller.near_names(written):
            build.alternative(unit, stem(name), TYPO_WEIGHT, named=True, sure=False)


_IDENTIFIER = re.compile(r"\b[^\W_]+(?:_[^\W_]+)+\b|\b[a-z]+(?:[A-Z][a-z\d]*)+\b")
"""A word written as code writes names: `nur_frei`, `tipo_vehiculo`, `startDate`."""
_IDENTIFIER_PARTS = re.compile(r"_|(?<=[a-z\d])(?=[A-Z])")


def _identifiers(text: str, analyzed: Analyzed, build: UnitBuilder) -> dict[tuple[str, int], int]:
    """The identifiers of the query the index has whole (a parameter's or an operation's name), as
    (joined term, number of words) -> the index of its first word. Such an identifier is what the
    query names: it weighs as its words together, and its words name no concepts (`nur_frei` is
    that parameter, not availability). One the lexicon knows is a word written as code would
    (`eMail`, `iPhone`): no identifier."""
    wanted: dict[tuple[str, ...], str] = {}
    for match in _IDENTIFIER.finditer(text):
        parts = tuple(fold_word(part) for part in _IDENTIFIER_PARTS.split(match.group()) if part)
        term = stem("".join(parts))
        a_word = build.lexicon is not None and bool(build.lexicon.concepts_of_term(term))
        if term in build.vocabulary and not a_word:
            wanted[parts] = term
    if not wanted:
        return {}
    chunks: dict[int, list[int]] = {}
    for index, chunk in enumerate(analyzed.chunk_of):
        chunks.setdefault(chunk, []).append(index)
    found: dict[tuple[str, int], int] = {}
    for indices in chunks.values():
        parts = tuple(analyzed.surfaces[index] for index in indices)
        if parts in wanted:
            found.setdefault((wanted[parts], len(parts)), indices[0])
    return found


def _cjk(analyzed: Analyzed, build: UnitBuilder) -> None:
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
