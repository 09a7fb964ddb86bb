"""The cross-language concept lexicon (`concepts.json` beside this module).

A concept is a thing or an action people ask apps for (a task, a calendar event, sending, deleting)
with the words for it in English, Chinese, Japanese, German, French and Spanish. Wherever one of
its words occurs, in a descriptor field or in a query, the text also gets the concept's term
(`§todo`): `tâche`, `待办`, `タスク` and `task` then meet, with the weight BM25 gives that term.

A Latin word matches after the same stemming as every other word (`tasks` meets `task`); a phrase
(`pull request`) matches its words in order; a Chinese or Japanese word matches as a substring of
the folded CJK text, since that text has no word boundaries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise

from .normalize import clip_field
from .tokens import Analyzed, analyze, stem

CONCEPT_PREFIX = "§"
MAX_CJK_TERM = 10
"""The longest CJK word the lexicon may hold (longer ones are refused when it loads)."""


@dataclass(frozen=True, slots=True)
class Concept:
    id: str
    terms: Mapping[str, Sequence[str]]
    """Words by language tag (`en`, `zh`, `ja`, `de`, `fr`, `es`, ...)."""


def load_concepts(text: str | None = None) -> list[Concept]:
    """The concepts of `text` (JSON), by default the lexicon shipped with the package."""
    if text is None:
        text = (resources.files(__package__) / "concepts.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return [Concept(entry["id"], entry["terms"]) for entry in data["concepts"]]


class Lexicon:
    """Matches texts to concepts; built once per process from the concepts.

    English words match by their stem (`tasks` meets `task`), like the index's own terms; words of
    the other languages match as written (case and accents folded), since an English stemmer
    would make `Termin` and `terminal`, or Spanish `todos` and `todo`, one word: the lexicon lists
    the forms people use instead (`Aufgabe`, `Aufgaben`)."""

    def __init__(self, concepts: Iterable[Concept]) -> None:
        self._stems: dict[str, set[str]] = {}
        self._surfaces: dict[str, set[str]] = {}
        self._stem_phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._surface_phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._stem_pairs: set[tuple[str, str]] = set()
        self._surface_pairs: set[tuple[str, str]] = set()
        self._stem_firsts: set[str] = set()
        self._surface_firsts: set[str] = set()
        self._cjk: dict[str, set[str]] = {}
        self._longest_cjk = 1
        for concept in concepts:
            token = CONCEPT_PREFIX + concept.id
            for language, words in concept.terms.items():
                for word in words:
                    self._add(word, token, english=language == "en")

    def _add(self, word: str, token: str, *, english: bool) -> None:
        analyzed = analyze(clip_field(word))
        if analyzed.stretches and not analyzed.words:
            cjk = "".join(analyzed.stretches)
            if len(cjk) > MAX_CJK_TERM:
                raise ValueError(f"the lexicon's word {word!r} is longer than {MAX_CJK_TERM} characters")
            self._cjk.setdefault(cjk, set()).add(token)
            self._longest_cjk = max(self._longest_cjk, len(cjk))
            return
        if not analyzed.words or analyzed.stretches:
            raise ValueError(f"the lexicon's word {word!r} mixes scripts")
        self._surfaces.setdefault("".join(analyzed.surfaces), set()).add(token)
        if english:
            self._stems.setdefault("".join(analyzed.words), set()).add(token)
        if len(analyzed.words) > 1:
            # a phrase (`pull request`, `E-Mail`); written as one word (`email`) it is a word too
            if english:
                phrase = tuple(analyzed.words)
                self._stem_phrases.setdefault(phrase[0], []).append((phrase, token))
                self._stem_pairs.update(pairwise(phrase))
                self._stem_firsts.update(phrase[:-1])
            phrase = tuple(analyzed.surfaces)
            self._surface_phrases.setdefault(phrase[0], []).append((phrase, token))
            self._surface_pairs.update(pairwise(phrase))
            self._surface_firsts.update(phrase[:-1])

    def concepts(self, analyzed: Analyzed, *, phrases: bool = True) -> list[str]:
        """The concept terms `analyzed` contains, each once; `phrases=False`: single words and CJK
        words only (the caller matches phrases over a longer text, `phrase_concepts`)."""
        found: set[str] = set()
        for words, terms in ((self._stems, analyzed.terms), (self._surfaces, analyzed.surfaces)):
            for term in terms:
                hit = words.get(term)
                if hit:
                    found |= hit
        if phrases:
            found.update(self.phrase_concepts(analyzed.words, analyzed.surfaces))
        for stretch in analyzed.stretches:
            found.update(self._cjk_concepts(stretch))
        return sorted(found)

    def may_go_on(self, word: str, surface: str) -> bool:
        """Whether a word (stemmed, and as written) is followed by another in a phrase."""
        return word in self._stem_firsts or surface in self._surface_firsts

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
        found: list[str] = []
        for phrases, sequence in ((self._stem_phrases, words), (self._surface_phrases, surfaces)):
            for index, word in enumerate(sequence):
                for phrase, token in phrases.get(word, ()):
                    if tuple(sequence[index : index + len(phrase)]) == phrase:
                        found.append(token)
        return found

    def _cjk_concepts(self, stretch: str) -> set[str]:
        """The concepts of the CJK words in `stretch`; a word inside a longer one is not counted
        (`画` in `動画`: a video, not a picture)."""
        cjk = self._cjk
        longest = self._longest_cjk
        matches: list[tuple[int, int, set[str]]] = []
        for start in range(len(stretch)):
            for end in range(min(start + longest, len(stretch)), start, -1):
                hit = cjk.get(stretch[start:end])
                if hit:
                    matches.append((start, end, hit))
        found: set[str] = set()
        reach = -1
        # longest first at each start; a match ending within an earlier, longer one is inside it
        for _start, end, hit in matches:
            if end <= reach:
                continue
            found |= hit
            reach = max(reach, end)
        return found

    @property
    def surfaces(self) -> list[str]:
        """The lexicon's single words as written (case and accents folded): known words for typo
        correction and compound splitting."""
        return [word for word in self._surfaces if word.isalpha()]

    def knows(self, surface: str) -> bool:
        """Whether `surface` (a case- and accent-folded word) is a word of the lexicon."""
        return surface in self._surfaces or stem(surface) in self._stems

    def concepts_of_word(self, surface: str, stemmed: str) -> list[str]:
        """The concept terms of one word, as written (case- and accent-folded) and stemmed."""
        found = self._surfaces.get(surface)
        also = self._stems.get(stemmed)
        if found is None and also is None:
            return []
        return sorted((found or set()) | (also or set()))

    def concepts_of_words(self, surfaces: Iterable[str]) -> list[str]:
        """The concept terms of single words (case- and accent-folded, as written)."""
        found: set[str] = set()
        for surface in surfaces:
            found |= self._surfaces.get(surface, set()) | self._stems.get(stem(surface), set())
        return sorted(found)


_default: Lexicon | None = None


def default_lexicon() -> Lexicon:
    """The shipped lexicon, loaded once."""
    global _default  # noqa: PLW0603 (built on first use, then shared: it never changes)
    if _default is None:
        _default = Lexicon(load_concepts())
    return _default
