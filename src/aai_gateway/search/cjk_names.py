"""App names misspelt in Chinese or Japanese: the query is rewritten to the name it stands for.

Chinese is typed through pinyin: a typo is the wrong character with the same sound, picked from the
input method's list (`地地打车` for 滴滴打车, `俄了么` for 饿了么, `京冬` for 京东, `特斯啦` for
特斯拉). A stretch of the query whose characters each share a toneless reading with the characters
of an app's Chinese name, in order, is that name. Readings come from pypinyin's table of every
character's readings (all of a character's readings count: `地` is dì and de); only a name of two
characters or more, and only app names, not every word: two words of the language sound alike
far more often than a word and a name.

Japanese names in kana are matched with one edit (a kana run of four characters or more): `ガーミソ`
(ン typed as the similar ソ) and `ホットペパー` (a dropped small ッ) are ガーミン and ホットペッパー.
Hiragana is folded to katakana first, so `くっくぱっど` already is クックパッド.

The rewrite replaces the typed characters by the name's, so everything after (terms, lexicon
words, a name the query names) sees the name. The pinyin table is loaded on the first query with
Chinese characters, not with the index.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Container, Iterable
from typing import Any

from .normalize import HIRAGANA_TO_KATAKANA, chinese
from .stopwords import CJK_STOPWORDS
from .tokens import stem

MIN_HAN_NAME = 2
MAX_HAN_NAME = 8
MIN_KANA_NAME = 4
MAX_SPELLINGS = 8
"""Pinyin spellings kept per name (characters with several readings multiply them)."""
_LATIN_WORD = re.compile("(?<![A-Za-z0-9_])[A-Za-z]{4,}(?![A-Za-z0-9_])")
"""A Latin word long enough to be a name in pinyin (`weixin`, `didi`), written on its own: a part
of an identifier (`yuyue_qujian`, an operation's name) is that identifier's."""
_HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_KANA_RUN = re.compile(
    "[\u3041-\u3096\u309d-\u309f][\u3041-\u3096\u309d-\u309fー]*|[\u30a1-\u30fa\u30fc-\u30ff]+"
)
"""A run of hiragana or of katakana (a particle after a katakana name is no part of it)."""


def _toneless(reading: str) -> str:
    decomposed = unicodedata.normalize("NFD", reading)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ü", "v")


class _Readings:
    """Toneless pinyin readings of a character, from pypinyin's table (loaded on first use, each
    character's readings made toneless when first asked for)."""

    def __init__(self) -> None:
        self._table: dict[Any, str] | None = None
        self._toneless: dict[str, frozenset[str]] = {}

    @staticmethod
    def _load() -> dict[Any, str]:
        import importlib.util  # noqa: PLC0415
        from pathlib import Path  # noqa: PLC0415

        spec = importlib.util.find_spec("pypinyin")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        path = Path(locations[0]) / "pinyin_dict.json" if locations else None
        if path is not None and path.is_file():
            # the table alone: importing pypinyin itself also loads its phrase dictionary (0.25 s)
            table: dict[Any, str] = json.loads(path.read_text(encoding="utf-8"))
            return table
        from pypinyin.pinyin_dict import pinyin_dict  # noqa: PLC0415

        return {str(code): readings for code, readings in pinyin_dict.items()}

    def of(self, char: str) -> frozenset[str]:
        found = self._toneless.get(char)
        if found is None:
            if self._table is None:
                self._table = self._load()
            raw = self._table.get(str(ord(char)))
            found = frozenset(_toneless(r) for r in raw.split(",")) if raw else frozenset({char})
            self._toneless[char] = found
        return found


readings = _Readings()


def _sounds_alike(typed: str, name: str) -> bool:
    """Whether each character of `typed` shares a reading with the one of `name` at its place."""
    return all(
        a == b or not readings.of(a).isdisjoint(readings.of(b)) for a, b in zip(typed, name, strict=True)
    )


class NameSounds:
    """The Chinese and kana names of the index's apps, and the query rewrite that restores them."""

    def __init__(self) -> None:
        self._han: set[str] = set()
        self._kana: set[str] = set()
        self._by_sound: dict[str, list[str]] | None = None
        self._known: Container[str] = ()
        self._pinyin: dict[str, str] | None = None

    def add(self, name: str) -> None:
        """One of an app's names (any script: only its Chinese and kana runs are kept)."""
        if name.isascii():
            return
        for run in _HAN_RUN.findall(name):
            folded = chinese.fold(run)
            if MIN_HAN_NAME <= len(folded) <= MAX_HAN_NAME and len(folded) == len(run):
                self._han.add(folded)
        for run in _KANA_RUN.findall(name):
            folded = run.translate(HIRAGANA_TO_KATAKANA)
            if len(folded) >= MIN_KANA_NAME:
                self._kana.add(folded)

    def rewrite(self, text: str, known: Container[str] = ()) -> str:
        """`text` with the app names it misspells written right (unchanged when there are none).
        `known`: the index's terms; two characters that are a term (a word some descriptor
        writes) are that word, not a misspelt name, and a Latin word the index has is no pinyin."""
        if self._han and _LATIN_WORD.search(text):
            self._known = known
            text = _LATIN_WORD.sub(self._pinyin_word, text)
        if self._han and _HAN_RUN.search(text) and not _KANA_RUN.search(text):
            # Japanese is not typed through pinyin
            self._known = known
            text = _HAN_RUN.sub(self._han_run, text)
        if self._kana and _KANA_RUN.search(text):
            text = _KANA_RUN.sub(self._kana_run, text)
        return text

    def _sounds(self) -> dict[str, list[str]]:
        """The names by the readings of their first character (built on first use)."""
        if self._by_sound is None:
            self._by_sound = {}
            for name in sorted(self._han):
                for reading in readings.of(name[0]):
                    self._by_sound.setdefault(reading, []).append(name)
        return self._by_sound

    def _pinyin_word(self, match: re.Match[str]) -> str:
        """A Chinese name written in toneless pinyin as one word (`weixin`, `xianyu`): the name."""
        word = match.group()
        folded = word.casefold()
        if folded in self._known or stem(folded) in self._known:  # the index has stems
            return word
        if self._pinyin is None:
            self._pinyin = {}
            for name in sorted(self._han, key=len):
                for spelling in _spellings(name):
                    self._pinyin.setdefault(spelling, name)
        return self._pinyin.get(folded, word)

    def _han_run(self, match: re.Match[str]) -> str:
        run = match.group()
        folded = chinese.fold(run)
        if len(folded) != len(run):
            return run
        sounds = self._sounds()
        out = list(folded)
        start = 0
        changed = False
        while start <= len(folded) - MIN_HAN_NAME:
            found = self._name_at(folded, start, sounds)
            if found is None:
                start += 1
                continue
            out[start : start + len(found)] = list(found)
            changed = True
            start += len(found)
        return "".join(out) if changed else run

    def _name_at(self, folded: str, start: int, sounds: dict[str, list[str]]) -> str | None:
        """The longest name (misspelt: not as written) that the characters from `start` sound like."""
        found: str | None = None
        for reading in readings.of(folded[start]):
            for name in sounds.get(reading, ()):
                window = folded[start : start + len(name)]
                if len(window) < len(name) or (found is not None and len(found) >= len(name)):
                    continue
                if window == name:
                    return None  # written right
                if len(name) == MIN_HAN_NAME and window in self._known:
                    continue
                if _likely_typo(window, name) and _sounds_alike(window, name):
                    found = name
        return found

    def _kana_run(self, match: re.Match[str]) -> str:
        run = match.group()
        folded = run.translate(HIRAGANA_TO_KATAKANA)
        if len(folded) < MIN_KANA_NAME or folded in self._kana:
            return run
        from rapidfuzz.distance import OSA  # noqa: PLC0415

        # a name or its start (`ホットペパー`: ホットペッパー of ホットペッパーグルメ), one edit away
        names = {name for name in self._kana if OSA.distance(folded, name) <= 1}
        if not names:
            sizes = (len(folded), len(folded) + 1)
            starts = {name[:size] for name in self._kana for size in sizes if size < len(name)}
            names = {start for start in starts if OSA.distance(folded, start) <= 1}
        return names.pop() if len(names) == 1 else run


def _spellings(name: str) -> list[str]:
    """`name` in toneless pinyin, one word per combination of its characters' readings (a few)."""
    spellings = [""]
    for char in name:
        spellings = [done + reading for done in spellings for reading in sorted(readings.of(char))][
            :MAX_SPELLINGS
        ]
    return [spelling for spelling in spellings if spelling.isascii() and spelling.isalpha()]


def _likely_typo(window: str, name: str) -> bool:
    """Whether `window` may be `name` typed with wrong characters of the same sound: they share a
    character, and no character that differs is a function word (`记一下` is no misspelt `记忆`)."""
    differ = [typed for typed, meant in zip(window, name, strict=True) if typed != meant]
    return len(differ) < len(name) and not any(char in CJK_STOPWORDS for char in differ)


def name_sounds(names: Iterable[str]) -> NameSounds:
    sounds = NameSounds()
    for name in names:
        sounds.add(name)
    return sounds
