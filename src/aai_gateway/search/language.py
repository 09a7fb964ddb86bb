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
from collections.abc import Iterable, Mapping

from .tokens import fold_word

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
QUERY_LANGUAGES = frozenset({"en", "de", "fr", "es"})
"""The languages whose queries' words are matched as words of that language or English only."""
MIN_LEAD = 1
"""How many more signs the winning language must have than the next."""


def language_of(text: str, words_of: Mapping[str, Iterable[str]] | None = None) -> str | None:
    """`en`, `de`, `fr`, `es`, `zh`, `ja`, or None when the text does not say clearly.
    `words_of`: more words and their languages (the concept lexicon's), keyed by their case- and
    accent-folded form."""
    plain = text.isascii()
    if not plain and _KANA.search(text):
        return "ja"
    if not plain and _HAN.search(text):
        return "zh"
    folded = text.casefold()
    words = set(folded.split()) if plain and words_of is None else set(_WORD.findall(folded))
    counts = {language: len(known.intersection(words)) for language, known in FUNCTION_WORDS.items()}
    if words_of is not None:
        for word in words:
            for language in words_of.get(word if word.isascii() else fold_word(word), ()):
                if language in counts:
                    counts[language] += 1
    if not plain:
        for language, letters in _LETTERS.items():
            if letters.search(folded):
                counts[language] += 1
    best = max(counts, key=counts.__getitem__)
    top = counts[best]
    runner_up = max(count for language, count in counts.items() if language != best)
    return best if top >= runner_up + MIN_LEAD and top > 0 else None


_REQUEST = re.compile(
    r"^\W*(can|could|would|will|kannst|könntest|können|peux|pourrais|pouvez|pourriez|puedes|podrías|"
    r"podéis|puede)\b|^\W*(能不能|可以|能帮|能否|麻烦)|(てくれ|てもらえ|ください|下さい)",
    re.IGNORECASE,
)
"""A polite request (`can you send …?`, `能不能帮我…`, `…してくれる？`): something to be done."""
_QUESTION = re.compile(
    r"[?？]\W*$|^\W*(is|are|was|were|does|did|what|when|where|which|who|whose|why|how (much|many|far|long|"
    r"old|big)|ist|sind|gibt|wann|wo|wie (viel|lange|weit|spät)|was|welche[rsnm]?|wer|est-ce|quand|où|"
    r"combien|quel|quelle|quels|quelles|qui|cuándo|dónde|cuánto|cuánta|cuántos|cuántas|qué|cuál|quién|"
    r"hay|está|están)\b|[吗呢]\W*$|多少|几[点个号天次]|哪|什么时候|谁|怎么样|[かの]\W*$|いつ|どこ|いくら|"
    r"何時|何分|どれ|誰|どう",
    re.IGNORECASE,
)
"""A question: what the user wants is to be told something (a status, a list, a detail)."""


_QUESTION_WORDS = (
    "how where when what which who why wie wo wann was welche welcher welches wer combien ou quand "
    "quoi quel quelle qui cuanto cuanta cuantos cuantas donde cuando que cual quien"
)
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())
"""The words a question starts with, case- and accent-folded (`où`: ou, `cuánto`: cuanto)."""


def is_question(text: str) -> bool:
    """Whether a query asks something (and is no polite request for an action)."""
    return _QUESTION.search(text) is not None and _REQUEST.search(text) is None


class SpokenIn:
    """For each word of the concept lexicon and concept it names, the languages in which the word
    names it: `leer` reads in Spanish, and is empty in German."""

    def __init__(self) -> None:
        self._languages: dict[tuple[str, str], set[str]] = {}

    def add(self, word: str, concept: str, language: str) -> None:
        self._languages.setdefault((word, concept), set()).add(language)

    def filter(self, word: str, concepts: set[str], language: str | None) -> set[str]:
        """The `concepts` that `word` names in `language` or in English (which the words of every
        language borrow); all of them when the language is not one of QUERY_LANGUAGES."""
        if language not in QUERY_LANGUAGES:
            return concepts
        spoken = self._languages
        return {
            concept
            for concept in concepts
            if (said := spoken.get((word, concept))) is None or language in said or "en" in said
        }
