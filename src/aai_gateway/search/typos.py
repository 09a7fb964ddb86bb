"""Query words the index does not know: compounds and typos.

Compounds (German writes `Zugverbindung` for `Zug` + `Verbindung`): a word of MIN_COMPOUND letters
or more is split in two known words of three letters or more (a linking `s` allowed), the split
with the longest first word winning. An English word made with `un`, `re` or `non` from a known word
stands for that word.

Typos: a query word the index does not know is replaced by the words it knows that are
one edit away (two for words of eight letters or more), an edit being an insertion, a deletion, a
substitution or a swap of two neighbours (optimal string alignment, through rapidfuzz).

Only the index's own words are candidates, so a correction can only lead to something that exists;
a word of fewer than five letters is never corrected (too many words are one edit from it), nor
a word with more than MAX_CORRECTIONS nearest words (`will` is as near `bill` as `fill`: a guess).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MIN_LENGTH = 5
LONG_WORD = 8
MAX_CORRECTIONS = 2
MIN_COMPOUND = 7
MIN_PART = 3
NEGATING_PREFIXES = ("un", "re", "non")


class Speller:
    """Corrections against known words: the index's words and the lexicon's, as written (case- and
    accent-folded). Answers are known words as written."""

    def __init__(self, known: Iterable[str]) -> None:
        from rapidfuzz import process  # noqa: PLC0415 (loaded when the first index is built)
        from rapidfuzz.distance import OSA  # noqa: PLC0415

        self._extract = process.extract
        self._distance: Any = OSA.distance
        self._known = set(known)
        # by length: a word is compared only with words whose length is within the edits allowed
        self._by_length: dict[int, list[str]] = {}
        for word in self._known:
            if len(word) >= MIN_LENGTH - 1:
                self._by_length.setdefault(len(word), []).append(word)

    def compound_parts(self, word: str) -> list[str]:
        """The known words `word` is made of (two, or one behind a prefix), or none."""
        if len(word) < MIN_COMPOUND:
            return []
        known = self._known
        for prefix in NEGATING_PREFIXES:
            # `uncommitted`, `reopen`, `nonempty`: the word the prefix changes
            if word.startswith(prefix) and word[len(prefix) :] in known:
                return [word[len(prefix) :]]
        for cut in range(len(word) - MIN_PART, MIN_PART - 1, -1):
            left, right = word[:cut], word[cut:]
            if right not in known:
                continue
            if left in known:
                return [left, right]
            if left.endswith("s") and left[:-1] in known and len(left) > MIN_PART:
                return [left[:-1], right]
        return []

    def corrections(self, word: str) -> list[str]:
        """The known words nearest to `word` (at the nearest distance only), best first."""
        if len(word) < MIN_LENGTH:
            return []
        limit = 2 if len(word) >= LONG_WORD else 1
        found = []
        for length in range(len(word) - limit, len(word) + limit + 1):
            choices = self._by_length.get(length)
            if choices:
                found += self._extract(
                    word, choices, scorer=self._distance, score_cutoff=limit, limit=MAX_CORRECTIONS + 1
                )
        if not found:
            return []
        best = min(distance for _, distance, _ in found)
        words = [choice for choice, distance, _ in found if distance == best]
        return words if len(words) <= MAX_CORRECTIONS else []
