"""Stopwords: words that say nothing about what a query wants (`the`, `of`, `ich`), left out of
a query's terms unless nothing else is left. Descriptors keep them (IDF weighs them down; and
`to do` must still become `todo`, which happens before this list applies). European languages
only: a Chinese character such as 给 is a function word in one place and part of a word in
another (发给), and Japanese particles of one kana are never terms at all (tokens.py).
"""

from __future__ import annotations

from collections.abc import Callable

from .tokens import fold_word, stem

_WORDS = (
    # English
    "a an the to of in on at for with by from and or is are was be been it its this that these those "
    "i me my mine we our us you your he she they them their please can could would will shall should "
    "what which who whom how when where why do does did some any just also into about there here "
    "have has had am so if then than very too up out as "
    "want need like let get got go going something anything thing things again now "
    "tomorrow yesterday tonight morning evening week month year ago "
    # German
    "der die das den dem des ein eine einen einem einer und oder ich mich mir mein meine meinen du "
    "dich dein wir uns unser ist sind war im am an auf aus bei für mit nach von vom zu zum zur bitte "
    "wie was welche welcher welches wo wann ob es sie er nicht kein keine noch "
    "dir dem den diese dieser dieses diesen alles etwas mal doch schon gerade jetzt gibt kann soll "
    "will möchte möchten habe hast hat haben bin bist sein ihr ihre ihren ihrem mach machen "
    "nächste nächsten nächster nächstes letzte letzten letzter letztes morgen gestern früh "
    "woche monat jahr fürs vom beim ins "
    # French
    "le la les un une des de du et ou je me moi mon ma mes tu te toi ton ta tes nous notre vous votre "
    "est sont en dans pour avec sur au aux ce cette ces qui que quoi comment où il elle ils elles "
    "ne pas s'il stp svp "
    "tout toute mais veux voudrais peux peut faut fais faire suis ai as a été "
    "prochain prochaine prochains dernier dernière derniers demain hier matin soir semaine mois "
    # Spanish
    "el los las unos unas y o del para con por mi mis tu tus nos nuestro es son al que qué cómo "
    "donde dónde cuando cuándo se su sus lo le les favor "
    "este esta estos estas ese esa quiero quisiera puedes puede hay hace hacer tengo tiene "
    "próximo próxima último última mañana ayer tarde semana mes año"
)
STOPWORDS: frozenset[str] = frozenset(_WORDS.split())


def stop_terms(stem: Callable[[str], str]) -> frozenset[str]:
    """The stopwords as query terms (folded and stemmed like every word: `für` is `fur`)."""
    return frozenset(stem(fold_word(word)) for word in STOPWORDS)


_stops: frozenset[str] | None = None


def query_stop_terms() -> frozenset[str]:
    """The stopwords as stemmed terms, computed once (it needs the stemmer, loaded with the first
    index)."""
    global _stops  # noqa: PLW0603 (computed once, then shared: it never changes)
    if _stops is None:
        _stops = stop_terms(stem)
    return _stops
