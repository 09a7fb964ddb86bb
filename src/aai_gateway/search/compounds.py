"""German compounds and verb forms: query words the index does not know as written, but whose
parts or infinitive it knows.

Compounds (German writes `Zugverbindung` for `Zug` + `Verbindung`): a word of MIN_COMPOUND letters
or more is split in known words of three letters or more, the split with the longest last word
winning: two parts if it can be, else three (`Kalendereintragsübersicht`), a part with or without
a linking ending (LINKS: `Bestellungsnummer`, `Wochenende`). A first part may also be a form of a
known word that only the lexicon's stems and inflections know (`Rücksende` in
`Rücksendeetikett`), and a prefix that makes a verb of a verb (`ver` in `verschicken`) is never a
part. An English word made with `un`, `re` or `non` from a known word stands for that word. A word
with an unknown first part is still what its last part is (`Fernbus`: a bus), when the lexicon
knows that part (`compound_head`).

Verb forms: a participle without its `ge` (`geschlafen`, `angerufen`) and a form in `t` with
`en` instead (`gebucht`, `bestellt`) are candidates for the infinitive the lexicon knows
(`german_verb_forms`).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lexicon import Lexicon

MIN_COMPOUND = 7
MIN_PART = 3
MIN_FORM_PART = 5
"""A compound's first part known only as a form of a known word, and its last part, are this long
(short forms are too often some other word's start)."""
MAX_PARTS = 3
VERB_PREFIXES = frozenset(("be", "ge", "er", "ver", "zer", "ent", "emp", "miss"))
"""German prefixes that make a verb of a verb (`verschicken`): no first part of a compound."""
NEGATING_PREFIXES = ("un", "re", "non")
LINKS = ("s", "es", "en", "n", "er", "e")
"""What German puts between the parts of a compound (`Bestellungsnummer`, `Tagesplan`,
`Wochenende`, `Kinderzimmer`, `Hundefutter`)."""


def _unlinked(left: str) -> list[str]:
    """The first part of a compound as written and without each linking ending it may have."""
    return [left] + [left[: -len(link)] for link in LINKS if left.endswith(link)]


class Compounds:
    """Splits words in `known` words; `also_known`, if given, tells whether a word not in `known`
    is a form of a known word (the lexicon's inflections and stems)."""

    def __init__(self, known: Container[str], also_known: Callable[[str], bool] | None = None) -> None:
        self._known = known
        self._also_known = also_known

    def parts(self, word: str) -> list[str]:
        """The known words `word` is made of (two or three, or one behind a prefix), or none."""
        if len(word) < MIN_COMPOUND:
            return []
        known = self._known
        for prefix in NEGATING_PREFIXES:
            # `uncommitted`, `reopen`, `nonempty`: the word the prefix changes
            if word.startswith(prefix) and word[len(prefix) :] in known:
                return [word[len(prefix) :]]
        return self._split(word, MAX_PARTS)

    def _split(self, word: str, parts: int) -> list[str]:
        """`word` as known words, at most `parts` of them: the longest last part first, the rest
        (without its linking letters) a known word or split again (`Kalendereintragsübersicht`)."""
        known = self._known
        cuts = [
            (word[:cut], word[cut:])
            for cut in range(len(word) - MIN_PART, MIN_PART - 1, -1)
            if word[cut:] in known
        ]
        for left, right in cuts:  # two parts, if it can be
            for stem in _unlinked(left):
                if len(stem) >= MIN_PART and stem in known and stem not in VERB_PREFIXES:
                    return [stem, right]
        also = self._also_known
        if also is not None:
            for left, right in cuts:
                if len(left) >= MIN_FORM_PART and len(right) >= MIN_FORM_PART and also(left):
                    return [left, right]
        for left, right in cuts if parts > 2 else ():
            for stem in _unlinked(left):
                if len(stem) >= 2 * MIN_PART and (first := self._split(stem, parts - 1)):
                    return [*first, right]
        return []


def compound_head(word: str, known: Callable[[str], bool]) -> list[str]:
    """The longest last part of `word` that `known` knows, behind a first part of three letters or
    more (`Fernbus`: a bus); none for short words."""
    if len(word) < MIN_COMPOUND:
        return []
    for cut in range(MIN_PART, len(word) - MIN_PART + 1):
        if known(word[cut:]):
            return [word[cut:]]
    return []


SEPARABLE_PREFIXES = (
    *("ab", "an", "auf", "aus", "bei", "ein", "mit", "nach", "vor"),
    *("weg", "zu", "zuruck", "los", "um", "hoch", "her", "hin"),
)
"""German verb prefixes a participle's `ge` follows (`ab|ge|schlossen`, `ein|ge|schaltet`)."""
MIN_PARTICIPLE = 6


def german_verb_forms(word: str) -> list[str]:
    """The infinitives a German verb form may be (folded): a participle without its `ge`
    (`geschlafen`: schlafen; `angerufen`: anrufen) and a form in `t` with `en` instead
    (`gebucht`: buchen; `bestellt`: bestellen; `schickt`: schicken). Candidates only: the
    lexicon says which exist."""
    stems = [word]
    for prefix in ("", *SEPARABLE_PREFIXES):
        rest = word[len(prefix) :]
        if word.startswith(prefix) and rest.startswith("ge") and len(rest) >= MIN_PARTICIPLE - 1:
            stems.append(prefix + rest[2:])
    forms: list[str] = []
    for candidate in stems:
        if candidate != word:
            forms.append(candidate)
        if candidate.endswith("t") and not candidate.endswith("tt"):
            forms += [candidate[:-1] + "en", candidate[:-1] + "n"]
    return forms


def parts_say_the_same(
    lexicon: Lexicon, surface: str, term: str, parts: list[str], language: str | None = None
) -> bool:
    """Whether the parts of a word the lexicon knows say what it says (`Zugverbindung`: Zug, a
    train); `Freitag`, a day, is no `frei` + `Tag`."""
    whole = lexicon.concepts_of_word(surface, term, language)
    return not whole or not set(whole).isdisjoint(lexicon.concepts_of_words(parts, language))
