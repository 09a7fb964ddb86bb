"""Text normalization shared by documents and queries: caps on hostile input, Unicode folding
(NFKC, case, Traditional to Simplified Chinese, hiragana to katakana) and the split of a text into
runs of one script.

Both sides of a match go through the same functions, so a fold only has to be consistent, not
linguistically perfect: Japanese kanji that OpenCC treats as Traditional are folded the same way in
a descriptor and in a query.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

MAX_QUERY_CHARACTERS = 1_000
"""A query is cut to this many characters (after a first cut of the raw text at four times as
many, so that normalizing a megabyte costs nothing): users' queries are a sentence or two."""
MAX_FIELD_CHARACTERS = 4_000
"""A descriptor field (a description, a parameter's description) is indexed up to this many
characters: a 100 KB description neither slows the index nor drowns the app's other words."""

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_HIRAGANA = "\u3041-\u3096\u309d-\u309f"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
_KANA = _HIRAGANA + _KATAKANA
_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
_CJK = _HAN + _KANA + _HANGUL
_RUN = re.compile(
    rf"(?P<han>[{_HAN}]+)|(?P<hiragana>[{_HIRAGANA}][{_HIRAGANA}ー]*)|(?P<katakana>[{_KATAKANA}]+)"
    rf"|(?P<hangul>[{_HANGUL}]+)|(?P<word>[^\W_{_CJK}]+)"
)
_HAS_HAN = re.compile(f"[{_HAN}]")
_CJK_START = re.compile(f"[{_CJK}]")
_CJK_ONLY = re.compile(f"[{_CJK}]+")
HIRAGANA_TO_KATAKANA = {code: code + 0x60 for code in range(0x3041, 0x3097)} | {
    0x309D: 0x30FD,
    0x309E: 0x30FE,
}

Script = Literal["han", "kana", "hangul", "word"]


@dataclass(frozen=True, slots=True)
class Run:
    """A maximal stretch of one script: `word` is letters and digits of alphabetic scripts (case
    kept, for camelCase), the others are CJK text without word boundaries. `joined` is True when
    the run touches the previous run with no space between (`to-do`, `jira_create_issue`)."""

    script: Script
    text: str
    joined: bool
    apostrophe: bool = False
    """Joined to the previous run by an apostrophe (`l'agenda`, `what's`)."""


def clip_query(text: str) -> str:
    """The part of a query that is searched: NFKC-normalized, at most MAX_QUERY_CHARACTERS."""
    return unicodedata.normalize("NFKC", text[: MAX_QUERY_CHARACTERS * 4])[:MAX_QUERY_CHARACTERS]


def clip_field(text: str) -> str:
    """The part of a descriptor field that is indexed, NFKC-normalized."""
    if len(text) <= MAX_FIELD_CHARACTERS and text.isascii():
        return text  # NFKC leaves ASCII as it is
    return unicodedata.normalize("NFKC", text[: MAX_FIELD_CHARACTERS * 2])[:MAX_FIELD_CHARACTERS]


class _ChineseFolder:
    """Traditional to Simplified Chinese through OpenCC (`t2s`), loaded on first use; characters
    alone (the `t2s` configuration), which is what matching grams needs."""

    def __init__(self) -> None:
        self._convert: Callable[[str], str] | None = None
        self._cache: dict[str, str] = {}

    def fold(self, text: str) -> str:
        if not _HAS_HAN.search(text):
            return text
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        if self._convert is None:
            import opencc  # noqa: PLC0415 (a 7 MB dictionary: loaded when the first index is built)

            self._convert = opencc.OpenCC("t2s").convert
        folded = self._convert(text)
        if len(self._cache) < 100_000:
            self._cache[text] = folded
        return folded


chinese = _ChineseFolder()


def fold_run(script: Script, text: str) -> str:
    """A run as it is matched: case-folded; Han folded to Simplified; hiragana to katakana."""
    if script == "han":
        return chinese.fold(text)
    if script == "kana":
        return text.translate(HIRAGANA_TO_KATAKANA)
    return text.casefold()


def runs(text: str) -> Iterator[Run]:
    """The runs of `text` (already clipped) in order; separators (spaces, punctuation, controls,
    emoji, lone surrogates) are dropped."""
    end = -1
    for match in _RUN.finditer(text):
        group = match.lastgroup
        # hiragana and katakana are separate runs (a particle before a katakana word is no part
        # of it: にスキップ), then one script
        script: Script = "kana" if group in ("hiragana", "katakana") else group  # type: ignore[assignment]
        start = match.start()
        joined = start == end or (start == end + 1 and text[end] in "-_./'’·・")
        apostrophe = start == end + 1 and text[end] in "'’"
        end = match.end()
        yield Run(script, match.group(), joined, apostrophe)


def is_cjk(text: str) -> bool:
    """Whether `text` starts with a Han, kana or Hangul character."""
    return _CJK_START.match(text) is not None


def is_all_cjk(text: str) -> bool:
    """Whether `text` is Han, kana and Hangul characters only (no space, no punctuation)."""
    return _CJK_ONLY.fullmatch(text) is not None
