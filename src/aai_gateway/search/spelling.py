"""Query words the index does not know as they are written.

Compounds (German writes `Zugverbindung` for `Zug` + `Verbindung`): a word of MIN_COMPOUND letters
or more is split in known words of three letters or more, the split with the longest last word
winning: two parts if it can be, else three (`Kalendereintragsübersicht`), a part with or without
a linking ending (LINKS: `Bestellungsnummer`, `Wochenende`). An English word made with `un`, `re`
or `non` from a known word stands for that word.

Typos: a query word the index does not know is replaced by the words it knows that start with the
same letter and are one edit away (two for words of eight letters or more), an edit being an
insertion, a deletion, a substitution or a swap of two neighbours (optimal string alignment,
through rapidfuzz). Failing that, a word whose letters are those of a known word, one moved
(`lidya`: lydia), and for words of six letters or more a single known word one edit away at the
first letter (`fithub`). A word of four letters is corrected only when two neighbours are swapped
(`snfc`: sncf). Last, a word spelt by ear: the one app name whose consonants sound the same
(`fivver`: fiverr, `eventbright`: eventbrite; the skeletons below). Last of all, an app whose
whole name is one short word: one edit away, or two and said the same (`Nekki`: nequi); from a
word of four letters, only a letter left out (`Edka`: edeka).

App names come first: a query word the lexicon does not know that is one edit from an app's name
(two for words of eight letters or more), with the name's first letter or one said the same
(SOUNDS_ALIKE: `Valearia` for Baleària), is that name before it is a compound of other words
(`Youpies`: Yoopies, not `you` and `pies`); two query words joined may be one too (`Nora auto`).

Only the index's own words are candidates, so a correction can only lead to something that exists;
a word of fewer than four letters is never corrected (too many words are one edit from it), nor
a word with more than MAX_CORRECTIONS nearest words (`will` is as near `bill` as `fill`: a guess).

Katakana. Names written in katakana: `ギットハブ` for GitHub, `ドッカー` for Docker, `ノーション` for Notion.

Japanese writes foreign names by sound, so neither the letters nor an edit distance relate them.
Both sides are reduced to a consonant skeleton instead: katakana through its romanization, Latin
names through a few English spelling rules, then vowels dropped and repeats collapsed
(`ギットハブ` -> gi t to ha bu -> `gthb`; `github` -> `gthb`; s and z are one sound, as are
b and v, r and l). The words matched this way are app names and the words of operation names
(`スキップ`: `skipToNext`, `スクリーンショット`: `take_screenshot`), not every word of every
description: a skeleton is short and would be ambiguous. An operation's word needs a skeleton of
three consonants or more (`skp`); an app name two (`dk`, Docker). Only a katakana word of three
characters or more that the index does not know as it is is looked up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .compounds import Compounds, compound_head

MIN_LENGTH = 5
LONG_WORD = 8
MAX_CORRECTIONS = 2
MIN_FIRST_LETTER = 6
"""A word this long may have its first letter wrong, when nothing else fits."""
MAX_SHORT_NAME = 8
"""A name this short may be misspelt by ear with two consonants kept (`Nekki`: nequi)."""
MAX_SHORT_NAME_EDITS = 2
"""Edits between a short name and a word said the same (one, for a word said otherwise)."""
MAX_SOUND_LENGTH_GAP = 2
"""A name spelt by ear is about as long as the name (`eventbright`, `fivver`)."""
SOUNDS_ALIKE = {"b": "bv", "v": "vbw", "w": "wv", "c": "cksq", "k": "kcq", "q": "qck", "s": "szc", "z": "zs"}
"""First letters said alike (`Valearia`, `Sinesa`, `Kabify`): a name's first letter is kept when
misspelt, or replaced by one of these."""


class Speller:
    """Corrections against known words: the index's words and the lexicon's, as written (case- and
    accent-folded). Answers are known words as written."""

    def __init__(
        self,
        known: Iterable[str],
        names: Iterable[str] = (),
        also_known: Callable[[str], bool] | None = None,
        acronyms: Iterable[str] = (),
        whole_names: Iterable[str] = (),
    ) -> None:
        """`names`: the words of apps' names and aliases; `whole_names`: the names that are one
        word (`EDEKA`, not `Home` of Home Assistant nor the alias `helm`), folded."""
        from rapidfuzz import process  # noqa: PLC0415 (loaded when the first index is built)
        from rapidfuzz.distance import OSA  # noqa: PLC0415

        self._extract = process.extract
        self._distance: Any = OSA.distance
        self._names = {name for name in names if len(name) >= MIN_LENGTH - 1}
        self._acronyms = frozenset(acronyms)
        self._known = set(known) | self._names
        self._compounds = Compounds(self._known, also_known)
        # by first letter and length: a word is compared only with words that start as it does (a
        # typo keeps the first letter; `Valencia` is no typo of `latencia`) and whose length is
        # within the edits allowed
        self._by_length: dict[tuple[str, int], list[str]] = {}
        for word in self._known:
            if len(word) >= MIN_LENGTH - 1:
                self._by_length.setdefault((word[0], len(word)), []).append(word)
        self._firsts = sorted({first for first, _length in self._by_length})
        self._names_by_first: dict[str, list[str]] = {}
        for name in self._names:
            if len(name) >= MIN_LENGTH - 1:
                self._names_by_first.setdefault(name[0], []).append(name)
        self._name_sounds: dict[str, set[str]] = {}
        for name in self._names:
            if name.isascii() and name.isalpha():
                for key in sound_keys(name):
                    self._name_sounds.setdefault(key, set()).add(name)
        self._short_names: dict[str, list[str]] = {}  # by first letter
        self._short_sounds: dict[str, list[str]] = {}
        for name in set(whole_names):
            if name.isascii() and name.isalpha() and MIN_LENGTH <= len(name) <= MAX_SHORT_NAME:
                self._short_names.setdefault(name[0], []).append(name)
                for key in sound_keys(name, MIN_NAME_KEY):
                    self._short_sounds.setdefault(key, []).append(name)

    def compound_parts(self, word: str) -> list[str]:
        """The known words `word` is made of (compounds.py), or none."""
        return self._compounds.parts(word)

    def compound_head(self, word: str, known: Callable[[str], bool]) -> list[str]:
        """The last part of `word` that `known` knows, behind a first part nothing knows."""
        return compound_head(word, known)

    def corrections(self, word: str) -> list[str]:
        """The known words nearest to `word` (at the nearest distance only), best first.

        Letters swapped or moved count as one edit: `lidya` (lydia) and `cabyfi` (cabify) are a
        letter moved, two edits apart by the letters but the same letters; and a word of four
        letters is corrected only so (`snfc`: sncf), since too many words are one other edit
        from it, or to a short app name it leaves a letter out of (`_short_name`)."""
        if len(word) < MIN_LENGTH - 1:
            return []
        if len(word) < MIN_LENGTH:
            return self._nearest(word, 1, moved_only=True) or self._short_name(word)
        limit = 2 if len(word) >= LONG_WORD else 1
        return (
            self._nearest(word, limit)
            or (self._nearest(word, 2, moved_only=True) if limit < 2 else [])
            or (self._first_letter(word) if len(word) >= MIN_FIRST_LETTER else [])
            or self._sounds_like_name(word)
            or self._short_name(word)
        )

    def is_acronym(self, word: str) -> bool:
        """Whether `word` (case-folded) is an app's name written in capitals (`ADAC`)."""
        return word in self._acronyms

    def near_names(self, word: str) -> list[str]:
        """The app names `word` misspells, nearest first: one edit away (two for words of eight
        letters or more), the first letter kept or one that sounds the same (`Valearia`:
        balearia). A query word the lexicon does not know that is this near a name is that name
        before it is a compound of other words (`Youpies`: yoopies, not `you` and `pies`)."""
        if len(word) < MIN_LENGTH or not word.isalpha():
            return []
        limit = 2 if len(word) >= LONG_WORD else 1
        found, best = self._nearest_names(word, limit, SOUNDS_ALIKE.get(word[0], word[0]))
        if best > 1 and self._nearest(word, best - 1):
            return []  # a known word is nearer than any name (`contents`: content, not contacts)
        return found if len(found) <= MAX_CORRECTIONS else []

    def _sounds_like_name(self, word: str) -> list[str]:
        """The one app name that `word` is spelt by ear (`fivver`: fiverr, `eventbright`:
        eventbrite): the same consonants, said the same way (`latin_key`), three or more."""
        if not (word.isascii() and word.isalpha()):
            return []
        found: set[str] = set()
        for key in sound_keys(word):
            found |= self._name_sounds.get(key, set())
        # said alike, and about as long: `schlecht` sounds like `start` to these English rules
        found = {name for name in found if abs(len(name) - len(word)) <= MAX_SOUND_LENGTH_GAP}
        return sorted(found) if len(found) == 1 else []

    def _short_name(self, word: str) -> list[str]:
        """The one short app name that `word` misspells, when nothing else fits: an app whose
        whole name is one word of MIN_LENGTH to MAX_SHORT_NAME letters, with `word`'s first letter
        and about as long, one edit away or two and said the same, two consonants being enough
        (`Nekki`: nequi, `Cookidu`: cookidoo). A word of four letters is only a letter left out
        (`Edka`: edeka, `hapn`: happn): one other edit makes too many words of their own (`help`
        is no `helm`, `lost` no `list`). Words of a name of several words, and aliases, are no
        candidates: they are words too (`home`, `mail`)."""
        if not (word.isascii() and word.isalpha()) or len(word) > MAX_SHORT_NAME + 1:
            return []
        sounds = self._short_sounds
        said_alike = {name for key in sound_keys(word, MIN_NAME_KEY) for name in sounds.get(key, ())}
        four_letters = len(word) < MIN_LENGTH
        gap = MAX_SOUND_LENGTH_GAP
        shortest, longest = (len(word) + 1,) * 2 if four_letters else (len(word) - 1, len(word) + gap)
        found = {
            name
            for name, distance, _index in self._extract(
                word,
                self._short_names.get(word[0], ()),
                scorer=self._distance,
                score_cutoff=MAX_SHORT_NAME_EDITS,
                limit=None,
            )
            if shortest <= len(name) <= longest
            and (distance <= 1 or (not four_letters and name in said_alike))
        }
        return sorted(found) if len(found) == 1 else []

    def _first_letter(self, word: str) -> list[str]:
        """The one known word that a typo of the first letter makes `word` (`fithub`, `kalendar` for
        a word without a same-letter neighbour): one edit away, the edit at the start. Only a
        single such word counts: first letters are where typos are rarest."""
        found: set[str] = set()
        for first in self._firsts:
            if first == word[0]:
                continue
            for length in (len(word) - 1, len(word), len(word) + 1):
                choices = self._by_length.get((first, length))
                if choices:
                    found.update(
                        choice
                        for choice, _distance, _index in self._extract(
                            word, choices, scorer=self._distance, score_cutoff=1, limit=2
                        )
                        if choice[1:] == word[1:] or choice == word[1:] or choice[1:] == word
                    )
            if len(found) > 1:
                return []
        return sorted(found)

    def _nearest(self, word: str, limit: int, *, moved_only: bool = False) -> list[str]:
        letters = sorted(word)
        found = []
        for length in range(len(word) - limit, len(word) + limit + 1):
            if moved_only and length != len(word):
                continue
            choices = self._by_length.get((word[0], length))
            if choices:
                found += self._extract(
                    word,
                    choices,
                    scorer=self._distance,
                    score_cutoff=limit,
                    limit=None if moved_only else MAX_CORRECTIONS + 1,
                )
        if moved_only:
            found = [hit for hit in found if sorted(hit[0]) == letters]
        if not found:
            return []
        best = min(distance for _, distance, _ in found)
        words = [choice for choice, distance, _ in found if distance == best]
        if len(words) > MAX_CORRECTIONS and not moved_only:
            # too many words as near: an app's name among them is what a query most often
            # misspells (`Datef`: date, dates, dated and DATEV; `Delivero`: deliver, delivery, Deliveroo)
            words, _distance = self._nearest_names(word, limit)
        return words if len(words) <= MAX_CORRECTIONS else []

    def _nearest_names(self, word: str, limit: int, firsts: str = "") -> tuple[list[str], int]:
        """The app names nearest to `word`, `limit` edits away at most, that start with one of
        `firsts` (by default `word`'s own first letter); and how many edits away they are."""
        near: list[tuple[str, int]] = []
        for first in firsts or word[0]:
            near += [
                (choice, int(distance))
                for choice, distance, _index in self._extract(
                    word,
                    self._names_by_first.get(first, ()),
                    scorer=self._distance,
                    score_cutoff=limit,
                    limit=None,
                )
                if abs(len(choice) - len(word)) <= limit
            ]
        if not near:
            return [], 0
        best = min(distance for _name, distance in near)
        return sorted(name for name, distance in near if distance == best), best


# --------------------------------------------------------------------------- katakana

MIN_KATAKANA = 3
MIN_NAME_KEY = 2
MIN_WORD_KEY = 3

_SMALL = {"ァ": "a", "ィ": "i", "ゥ": "u", "ェ": "e", "ォ": "o", "ャ": "ya", "ュ": "yu", "ョ": "yo"}
_ROWS = {
    "": "アイウエオ",
    "k": "カキクケコ",
    "g": "ガギグゲゴ",
    "s": "サシスセソ",
    "z": "ザジズゼゾ",
    "t": "タチツテト",
    "d": "ダヂヅデド",
    "n": "ナニヌネノ",
    "h": "ハヒフヘホ",
    "b": "バビブベボ",
    "p": "パピプペポ",
    "m": "マミムメモ",
    "r": "ラリルレロ",
}
_KANA: dict[str, str] = {}
for _consonant, _row in _ROWS.items():
    for _vowel, _char in zip("aiueo", _row, strict=True):
        _KANA[_char] = _consonant + _vowel
_KANA.update({"シ": "si", "チ": "ti", "ツ": "tu", "フ": "fu", "ジ": "zi", "ヂ": "zi", "ヅ": "zu"})
_KANA.update({"ヤ": "ya", "ユ": "yu", "ヨ": "yo", "ワ": "wa", "ヲ": "o", "ン": "n", "ヴ": "bu"})
_KANA.update({"ッ": "", "ー": "", "・": ""})

_SILENT_R = re.compile(r"(?<=[aeiou])r(?![aeiouy])")
_ENGLISH = [
    (re.compile(r"^wh"), "w"),  # whatsapp -> ワッツアップ: the h is not said
    (re.compile(r"tion"), "sion"),
    (re.compile(r"ph"), "f"),
    (re.compile(r"sh"), "s"),
    (re.compile(r"ch(?=r)"), "k"),  # chrome -> クローム
    (re.compile(r"ch"), "t"),  # before the c rules: snapchat -> スナップチャット
    (re.compile(r"ck|q|c(?![eiy])"), "k"),
    (re.compile(r"c"), "s"),
    (re.compile(r"x"), "ks"),
    (re.compile(r"ts"), "t"),  # ツ
    (re.compile(r"[jz]"), "s"),
    (re.compile(r"v"), "b"),
    (_SILENT_R, ""),  # docker -> ドッカー: the r is not said (an l is)
    (re.compile(r"l"), "r"),
    (re.compile(r"m(?=[bp])"), "n"),
    (re.compile(r"[wy]"), ""),
]
_JAPANESE = [(re.compile(r"ts"), "t"), (re.compile(r"z"), "s"), (re.compile(r"[wy]"), "")]
_VOWELS = re.compile(r"[aeiou]+")
_REPEATS = re.compile(r"(.)\1+")


def _skeleton(romanized: str) -> str:
    return _REPEATS.sub(r"\1", _VOWELS.sub("", romanized))


def latin_key(word: str, *, silent_r: bool = True) -> str:
    """The consonant skeleton of a (case-folded) Latin word; `silent_r=False`: an r after a vowel
    is said (メルカリ for mercari, where ドッカー drops docker's)."""
    for pattern, replacement in _ENGLISH:
        if silent_r or pattern is not _SILENT_R:
            word = pattern.sub(replacement, word)
    return _skeleton(word)


MIN_SOUND_KEY = 3
_SILENT_GH = re.compile(r"gh(?![aeiou])")
"""`gh` not before a vowel is not said (`bright`, `night`)."""


def sound_keys(word: str, shortest: int = MIN_SOUND_KEY) -> set[str]:
    """The skeletons of a (case-folded) Latin word as said, with and without an r after a vowel,
    that have `shortest` consonants or more: what a name misspelt by ear keeps."""
    word = _SILENT_GH.sub("", word)
    keys = {latin_key(word), latin_key(word, silent_r=False)}
    return {key for key in keys if len(key) >= shortest}


def katakana_key(word: str) -> str | None:
    """The consonant skeleton of a katakana word, None if it has other characters."""
    romanized: list[str] = []
    for char in word:
        small = _SMALL.get(char)
        if small is not None:
            # a small vowel or y-sound replaces the vowel before it (ティ: ti, ジャ: zya)
            if romanized and romanized[-1] and romanized[-1][-1] in "aiueo":
                romanized[-1] = romanized[-1][:-1]
            romanized.append(small)
            continue
        syllable = _KANA.get(char)
        if syllable is None:
            return None
        romanized.append(syllable)
    text = "".join(romanized)
    for pattern, replacement in _JAPANESE:
        text = pattern.sub(replacement, text)
    return _skeleton(text)


class Loanwords:
    """App name words by skeleton: `add` them while indexing, `match` katakana words of a query."""

    def __init__(self) -> None:
        self._names: dict[str, set[str]] = {}
        self._seen: set[str] = set()

    def add(self, word: str, *, app_name: bool) -> None:
        """A word (case-folded Latin letters) of an app's names or of an operation's name."""
        if word in self._seen or not (word.isascii() and word.isalpha() and len(word) >= MIN_KATAKANA):
            return
        keys = {latin_key(word)}
        if _SILENT_R.search(word):
            keys.add(latin_key(word, silent_r=False))
        for key in keys:
            if len(key) >= (MIN_NAME_KEY if app_name else MIN_WORD_KEY):
                self._names.setdefault(key, set()).add(word)
                self._seen.add(word)
            elif not app_name:
                self._seen.add(word)

    def match(self, katakana: str) -> list[str]:
        """The app name words that sound like `katakana`."""
        if len(katakana) < MIN_KATAKANA:
            return []
        key = katakana_key(katakana)
        if key is None or len(key) < MIN_NAME_KEY:
            return []
        return sorted(self._names.get(key, ()))
