"""The cross-language concept lexicon (the JSON files of `concepts/` beside this module).

A concept is a thing or an action people ask apps for (a refund, a parcel, on-call duty, sending,
cancelling) with the words for it in English, Chinese, Japanese, German, French and Spanish.
Wherever one of its words occurs, in a descriptor field or in a query, the text also gets the
concept's term (`§refund`): `退款`, `返金`, `Rückerstattung` and `refund` then meet, with the
weight BM25 gives that term. A concept may name broader ones (`refund` -> `payment`): a text with
the narrow concept also gets a term for each broader one (`§<payment`: "something under
payment"), which a query meets at a lower weight than the concepts it names (query.py): `退款`
finds refunds first and other payments after, `payment` finds payments first, then refunds.

How a word matches, first rule that finds something:
1. as written (case and accents folded), in any language: `Termin` is the German word, not a
   form of English `terminal`;
2. a regular inflection of a German, French or Spanish word (`Tabelle` + `n`, `tâche` + `s`);
3. by stem: English words by their English Snowball stem (`tasks` meets `task`), German, French
   and Spanish words by their language's Snowball stem (`überweise`, `Überweisung`).
A phrase (`pull request`) matches its words in order, as written or by English stem. A Chinese or
Japanese word matches as a substring of the folded CJK text, which has no word boundaries; a
word inside a longer one does not count (`画` in `動画`), and `words_without_concept` lists longer
words that only stop a shorter one from counting (`开发` holds `发`, which is no sending there).

A concept's `query_terms` are words that name it in queries only: what users say that descriptors
write with another meaning (`text` someone is sending a message; a descriptor's `text` is text).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from .compounds import MIN_PARTICIPLE, german_verb_forms
from .concept_files import (
    CONCEPT_PREFIX,
    INFLECTIONS,
    MAX_CJK_TERM,
    MIN_FOREIGN_STEM,
    MIN_INFLECTED,
    MIN_STEMMED_WORD,
    Concept,
    broader_closure,
    load_source,
    narrower_term,
)
from .language import QUERY_LANGUAGES, SpokenIn
from .stopwords import STOPWORDS
from .tokens import FOREIGN_STEMMERS, Analyzed, fold_word, stem, word_shape
from .verbs import french_verb_forms, german_imperatives, spanish_verb_forms

READING_CONCEPTS = ("§list", "§read", "§find", "§track", "§count")
"""The actions that only look: what a question or a query naming no action asks for."""

Table = dict[str, set[str]]


class Lexicon:
    """Matches texts to concepts; built once per process from the concepts."""

    def __init__(self, concepts: Iterable[Concept], plain_words: Iterable[str] = ()) -> None:
        self._stopwords = frozenset(fold_word(word) for word in STOPWORDS)
        self._surfaces: Table = {}
        self._english: set[str] = set()
        self._inflected: Table = {}
        self._stems: Table = {}
        self._foreign: dict[str, Table] = {language: {} for language in FOREIGN_STEMMERS}
        self._stem_phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._surface_phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._stem_pairs: set[tuple[str, str]] = set()
        self._surface_pairs: set[tuple[str, str]] = set()
        self._stem_firsts: set[str] = set()
        self._surface_firsts: set[str] = set()
        self._stem_seconds: set[str] = set()
        self._surface_seconds: set[str] = set()
        self._cjk: Table = {}
        self._longest_phrase = 2
        self._foreign_prefixes: set[str] = set()
        self._query_words: Table = {}
        """Single words that name a concept in queries only, as written, inflected and stemmed."""
        self._languages: Table = {}
        """A single word of the lexicon (folded) -> the languages it is a word of."""
        self._spoken = SpokenIn()
        concepts = list(concepts)
        self.actions = frozenset(CONCEPT_PREFIX + concept.id for concept in concepts if concept.action)
        """The concept terms of actions (what is done, not what it is done to)."""
        self._broader = broader_closure(concepts)
        for concept in concepts:
            token = CONCEPT_PREFIX + concept.id
            for language, words in concept.terms.items():
                for word in words:
                    self._add(word, token, language)
            for language, words in concept.query_terms.items():
                for word in words:
                    self._add_query_word(word, token, language)
        for word in plain_words:
            cjk = self._cjk_word(word, word_shape(word))
            self._cjk.setdefault(cjk, set())
        by_first: dict[str, set[int]] = {}
        for cjk in self._cjk:
            by_first.setdefault(cjk[0], set()).add(len(cjk))
        self._cjk_lengths = {first: tuple(sorted(sizes, reverse=True)) for first, sizes in by_first.items()}

    @staticmethod
    def _cjk_word(word: str, shape: tuple[list[str], list[str], list[str]]) -> str:
        words, _surfaces, stretches = shape
        if words or not stretches:
            raise ValueError(f"the lexicon's word {word!r} mixes scripts")
        cjk = "".join(stretches)
        if len(cjk) > MAX_CJK_TERM:
            raise ValueError(f"the lexicon's word {word!r} is longer than {MAX_CJK_TERM} characters")
        return cjk

    def _add(self, word: str, token: str, language: str) -> None:
        shape = word_shape(word)
        words, surfaces, stretches = shape
        if stretches and not words:
            self._cjk.setdefault(self._cjk_word(word, shape), set()).add(token)
            return
        if not words or stretches:
            raise ValueError(f"the lexicon's word {word!r} mixes scripts")
        english = language == "en"
        surface = "".join(surfaces)
        self._surfaces.setdefault(surface, set()).add(token)
        if len(words) == 1:
            self._languages.setdefault(surface, set()).add(language)
            self._spoken.add(surface, token, language)
        if english:
            self._english.add(surface)
            self._stems.setdefault("".join(words), set()).add(token)
        if len(words) == 1 and surface.isalpha():
            for ending in INFLECTIONS.get(language, ()) if len(surface) >= MIN_INFLECTED else ():
                self._inflected.setdefault(surface + ending, set()).add(token)
                self._spoken.add(surface + ending, token, language)
            stemmer = FOREIGN_STEMMERS.get(language)
            if stemmer is not None and len(stemmed := stemmer(surface)) >= MIN_FOREIGN_STEM:
                self._foreign[language].setdefault(stemmed, set()).add(token)
                self._foreign_prefixes.add(stemmed[:MIN_FOREIGN_STEM])
        if len(words) > 1:
            # a phrase (`pull request`, `E-Mail`); written as one word (`email`) it is a word too
            if english:
                phrase = tuple(words)
                self._stem_phrases.setdefault(phrase[0], []).append((phrase, token))
                self._stem_pairs.update(pairwise(phrase))
                self._stem_firsts.update(phrase[:-1])
                self._stem_seconds.update(word for word in phrase[1:] if word not in self._stopwords)
            phrase = tuple(surfaces)
            self._longest_phrase = max(self._longest_phrase, len(phrase))
            self._surface_phrases.setdefault(phrase[0], []).append((phrase, token))
            self._surface_pairs.update(pairwise(phrase))
            self._surface_firsts.update(phrase[:-1])
            # an English stopword inside an English phrase (`look up`, `send a link`) is not looked
            # for across pieces of descriptors: `the`, `a`, `to` follow nearly every word there
            self._surface_seconds.update(w for w in phrase[1:] if not english or w not in self._stopwords)

    def _add_query_word(self, word: str, token: str, language: str) -> None:
        words, surfaces, stretches = word_shape(word)
        if len(words) != 1 or stretches:
            raise ValueError(f"the lexicon's query word {word!r} is not one word")
        surface = surfaces[0]
        forms = {surface, words[0]}
        if len(surface) >= MIN_INFLECTED:
            forms.update(surface + ending for ending in INFLECTIONS.get(language, ()))
        for form in forms:
            self._query_words.setdefault(form, set()).add(token)
            self._spoken.add(form, token, language)
        self._languages.setdefault(surface, set()).add(language)

    # ------------------------------------------------------------------- matching

    def query_concepts_of_word(self, surface: str, stemmed: str, language: str | None = None) -> list[str]:
        """The concept terms a word of a query names besides those of `concepts_of_word`: the
        query-only words (as written, inflected or by English stem)."""
        found = self._query_words.get(surface) or self._query_words.get(stemmed)
        return sorted(self._spoken.filter(surface, found, language)) if found else []

    def concepts(self, analyzed: Analyzed, *, phrases: bool = True) -> list[str]:
        """The concept terms `analyzed` contains, each once; `phrases=False`: single words and CJK
        words only (the caller matches phrases over a longer text, `phrase_concepts`). The words
        of a phrase found count as the phrase only (`nächstes Lied` is the next track, not a
        song), as a CJK word inside a longer one does."""
        found: set[str] = set()
        several = phrases and len(analyzed.words) > 1
        spans = self.phrase_spans(analyzed.words, analyzed.surfaces) if several else []
        covered = {index for start, end, _token in spans for index in range(start, end)}
        words = set(analyzed.words)
        for index, (surface, stemmed) in enumerate(zip(analyzed.surfaces, analyzed.words, strict=True)):
            if index not in covered:
                found.update(self.concepts_of_word(surface, stemmed))
        surfaces, stems = self._surfaces, self._stems
        for term in analyzed.terms:
            # joined forms (`to-do`: `todo`; a query's `to do`), not its single words
            if term not in words:
                hit = surfaces.get(term) or stems.get(term)
                if hit:
                    found |= hit
        found.update(token for _start, _end, token in spans)
        for stretch in analyzed.stretches:
            found.update(*(tokens for _start, _end, tokens in self.cjk_spans(stretch)))
        return sorted(found)

    def concepts_of_word(self, surface: str, stemmed: str, language: str | None = None) -> list[str]:
        """The concept terms of one word, as written (folded) and stemmed; in `language` or English only."""
        found = self._surfaces.get(surface) or self._inflected.get(surface)
        if found and language is not None:
            found = self._spoken.filter(surface, found, language)
        if found:
            return sorted(found)
        english = self._stems.get(stemmed)
        hits = set(english) if english else set()
        # a stem is the start of its word: most words need no stemmer call at all
        if (
            len(surface) >= MIN_STEMMED_WORD
            and surface[:MIN_FOREIGN_STEM] in self._foreign_prefixes
            and surface.isalpha()
        ):
            for other, stemmer in FOREIGN_STEMMERS.items():
                if language in QUERY_LANGUAGES and other != language:
                    continue
                hit = self._foreign[other].get(stemmer(surface))
                if hit:
                    hits |= hit
        return sorted(hits)

    def verb_form_concepts(self, surface: str, language: str | None = None) -> list[str]:
        """The concepts of the infinitive a verb form may be, for a query's word that nothing else
        matched (descriptors write infinitives): German participles and forms in `t`
        (`geschlafen`, `gebucht`) and imperatives (`schick`, `such`), French and Spanish
        conjugations and imperatives with their pronouns (`annule`, `réservé`, `pídeme`,
        `recuérdame`; verbs.py). A French or Spanish candidate counts only as a word of its
        language; the first that the lexicon knows, per language."""
        if not surface.isalpha():
            return []
        german = german_verb_forms(surface) if len(surface) >= MIN_PARTICIPLE else []
        found: set[str] = set()
        for kind, forms in (
            ("de", german),
            ("de!", german_imperatives(surface)),
            ("fr", french_verb_forms(surface)),
            ("es", spanish_verb_forms(surface)),
        ):
            if language in QUERY_LANGUAGES and language != kind.rstrip("!"):
                continue
            for form in forms:
                if kind == "de!":  # an imperative: as written only, as stems meet too much
                    hit = self._surfaces.get(form) or self._inflected.get(form)
                elif kind == "de":
                    hit = self._surfaces.get(form) or self._inflected.get(form)
                    hit = hit or self._foreign[kind].get(FOREIGN_STEMMERS[kind](form))
                else:
                    hit = self._surfaces.get(form) if kind in self._languages.get(form, ()) else None
                if hit:
                    found |= hit
                    break
        return sorted(found)

    def concepts_of_words(self, surfaces: Iterable[str], language: str | None = None) -> list[str]:
        """The concept terms of single words (case- and accent-folded, as written)."""
        found: set[str] = set()
        for surface in surfaces:
            found.update(self.concepts_of_word(surface, stem(surface), language))
        return sorted(found)

    @property
    def languages(self) -> Mapping[str, set[str]]:
        """A single word of the lexicon (case- and accent-folded) -> the languages it is a word of."""
        return self._languages

    def knows(self, surface: str) -> bool:
        """Whether `surface` (a case- and accent-folded word) is a word of the lexicon."""
        return bool(
            self.concepts_of_word(surface, stem(surface))
            or self._query_words.get(surface)
            or self.verb_form_concepts(surface)
        )

    def may_go_on(self, word: str, surface: str) -> bool:
        """Whether a word (stemmed, and as written) of a descriptor may start a phrase that goes on
        in the next piece of text. A stopword does not (`to do`, `à faire`, `how much` are what
        queries say; in a descriptor, `things to do` is no to-do), which spares looking for
        phrases across most texts."""
        starts = word in self._stem_firsts or surface in self._surface_firsts
        return starts and surface not in self._stopwords

    def may_follow(self, word: str, surface: str) -> bool:
        """Whether a word (stemmed, and as written) is the second word of some phrase."""
        return word in self._stem_seconds or surface in self._surface_seconds

    @property
    def pairs(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """The neighbouring words of the lexicon's phrases, stemmed and as written."""
        return self._stem_pairs, self._surface_pairs

    def joins_phrase(
        self,
        words: Sequence[str],
        surfaces: Sequence[str],
        next_words: Sequence[str],
        next_surfaces: Sequence[str],
    ) -> bool:
        """Whether a piece of text (its stemmed `words`, its `surfaces`) and the piece after it
        may hold a phrase of the lexicon across them: the last word of one and the first of the
        next are a phrase's first two words, or its last two."""
        if words and next_words and (words[-1], next_words[0]) in self._stem_pairs:
            return True
        return bool(surfaces and next_surfaces and (surfaces[-1], next_surfaces[0]) in self._surface_pairs)

    def phrase_concepts(self, words: Sequence[str], surfaces: Sequence[str]) -> list[str]:
        """The concept terms of the lexicon's phrases in a text: `words` are its stemmed words in
        order, `surfaces` the same words as written."""
        return [token for _start, _end, token in self.phrase_spans(words, surfaces)]

    def phrases_across(self, words: Sequence[str], surfaces: Sequence[str], boundary: int) -> list[str]:
        """The concept terms of the phrases that start before word `boundary` and end after it."""
        start = max(0, boundary - self._longest_phrase + 1)
        end = boundary + self._longest_phrase - 1
        return [
            token
            for first, last, token in self.phrase_spans(words[start:end], surfaces[start:end])
            if first + start < boundary < last + start
        ]

    def phrase_spans(self, words: Sequence[str], surfaces: Sequence[str]) -> list[tuple[int, int, str]]:
        """Where the lexicon's phrases are in a text: (first word, word after the last, concept
        term), by English stem or as written."""
        found: list[tuple[int, int, str]] = []
        for phrases, sequence in ((self._stem_phrases, words), (self._surface_phrases, surfaces)):
            for index, word in enumerate(sequence[:-1]):  # a phrase has two words or more
                following = sequence[index + 1]
                for phrase, token in phrases.get(word, ()):
                    if phrase[1] == following and tuple(sequence[index : index + len(phrase)]) == phrase:
                        found.append((index, index + len(phrase), token))
        return found

    def cjk_spans(self, stretch: str) -> list[tuple[int, int, set[str]]]:
        """The CJK words of the lexicon in `stretch` (folded CJK text): (start, end, concept
        terms), longest first at each place; a word inside a longer one is not counted (`画` in
        `動画`: a video, not a picture), and a word without concepts only hides those inside it."""
        cjk = self._cjk
        lengths = self._cjk_lengths
        found: list[tuple[int, int, set[str]]] = []
        reach = -1
        for start, first in enumerate(stretch):
            # only the lengths of the lexicon's words that start with this character, longest first
            for length in lengths.get(first, ()):
                end = start + length
                hit = cjk.get(stretch[start:end]) if end <= len(stretch) else None
                if hit is not None:
                    if end > reach:
                        found.append((start, end, hit))
                        reach = end
                    break  # the longest word at this start
        return [span for span in found if span[2]]

    def concepts_of_term(self, term: str) -> set[str]:
        """The concept terms of a joined form (`todo` for `to-do`, a query's `to do`)."""
        return self._surfaces.get(term, set()) | self._stems.get(term, set())

    # ------------------------------------------------------------------- broader concepts

    def broader(self, tokens: Iterable[str]) -> list[str]:
        """The broader concept terms of `tokens` that are not among them."""
        tokens = set(tokens)
        found: set[str] = set()
        for token in tokens:
            found |= self._broader.get(token, frozenset())
        return sorted(found - tokens)

    def for_descriptor(self, tokens: Sequence[str]) -> list[str]:
        """The terms a descriptor's text gets for the concepts `tokens`: the concepts, and for
        each broader concept its narrower term (`§<payment` for `§refund`), which a query meets
        at a lower weight than the concept itself (query.py)."""
        if not self._broader or not tokens:
            return list(tokens)
        return [*tokens, *(narrower_term(token) for token in self.broader(tokens))]

    def foreign_only(self, surface: str) -> bool:
        """Whether `surface` (case- and accent-folded) is a lexicon word of another language than
        English and no English one (`termin`: its English stem would be `terminal`'s)."""
        return surface not in self._english and (surface in self._surfaces or surface in self._inflected)

    @property
    def surfaces(self) -> list[str]:
        """The lexicon's single words as written (case and accents folded): known words for typo
        correction and compound splitting."""
        return [word for word in (*self._surfaces, *self._query_words) if word.isalpha()]


_default: Lexicon | None = None
_loading = threading.Lock()


def default_lexicon() -> Lexicon:
    """The shipped lexicon, loaded once (a thread asking meanwhile waits for it)."""
    global _default  # noqa: PLW0603 (built on first use, then shared: it never changes)
    with _loading:
        if _default is None:
            source = load_source()
            _default = Lexicon(source.concepts, source.plain_words)
        return _default
