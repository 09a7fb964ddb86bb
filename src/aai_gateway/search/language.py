"""The language a text is written in, roughly: enough to tell a query's language from an app's.

People use the apps of their country and write in its language: a French query for a train is
more likely for SNCF than for Renfe, a Chinese query for a ride more likely for DiDi. So an app
described in the query's language (other than English, which global apps use) gains a little
(SearchIndex). The guess is cheap and only needs to be right on clear cases:

- kana: Japanese; Han without kana: Chinese (a Japanese query in kanji only reads as Chinese);
- Latin text: the language whose function words and letters it has most (`der`, `und`, `ß`;
  `le`, `les`, `é`; `el`, `los`, `ñ`), with the words of the concept lexicon in each language as
  more evidence; no clear winner is no language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

_FUNCTION_WORDS = {
    "en": "the and of to is are for with your you my from this that on in an by it be all me what how "
    "which when where will can please",
    "de": "der die das und ist sind mit für von ein eine einen einem nicht auf den dem des zu zum zur im "
    "ich mein meine meinen mir mich bitte wie wo nach oder aus bei sich auch noch ihr ihre wird "
    "kann alle über",
    "fr": "le les des du et est pour avec une dans sur au aux ce cette mon ma mes je vous votre nous qui "
    "pas ne tous toutes sont mais ou où",
    "es": "el los las del y para con una por mi mis al lo se su sus está están este esta estos todos "
    "todas muy cómo dónde qué",
}
FUNCTION_WORDS: Mapping[str, frozenset[str]] = {
    language: frozenset(words.split()) for language, words in _FUNCTION_WORDS.items()
}
"""Words of one language only (`la`, `de`, `que` are French and Spanish: none of them)."""
_LETTERS = {
    "de": re.compile("[äöüß]"),
    "fr": re.compile("[èêàçùâîôœë]"),
    "es": re.compile("[ñ¿¡áíóú]"),
}
_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_WORD = re.compile(r"[^\W\d_]+")
MIN_LEAD = 1
"""How many more signs the winning language must have than the next."""


def language_of(text: str, lexicon_languages: Callable[[str], Iterable[str]] | None = None) -> str | None:
    """`en`, `de`, `fr`, `es`, `zh`, `ja`, or None when the text does not say clearly.
    `lexicon_languages`: the languages of the concept lexicon that have a (folded) word."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    counts = dict.fromkeys(FUNCTION_WORDS, 0)
    for word in _WORD.findall(text.casefold()):
        for language, words in FUNCTION_WORDS.items():
            if word in words:
                counts[language] += 1
        if lexicon_languages is not None:
            for language in set(lexicon_languages(word)):
                if language in counts:
                    counts[language] += 1
    for language, letters in _LETTERS.items():
        if letters.search(text.casefold()):
            counts[language] += 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    (best, top), (_second, next_) = ranked[0], ranked[1]
    return best if top >= next_ + MIN_LEAD and top > 0 else None
