"""Words that say nothing about what a query wants (`the`, `of`, `ich`, `的`): left out of a query's
terms, unless nothing else is left. Descriptors keep them (BM25's IDF already weighs them down;
and `to do` must still become `todo`, which happens before this list is applied).

Short lists of function words for the European languages. None for Chinese: a character such as
给 or 要 is a function word in one place and part of a word in another (给 in 发给), and IDF already
weighs the common ones down; Japanese particles of one kana are never terms at all (tokens.py).
"""

from __future__ import annotations

from collections.abc import Callable

STOPWORDS: frozenset[str] = frozenset(
    # English
    "a an the to of in on at for with by from and or is are was be been it its this that these those "
    "i me my mine we our us you your he she they them their please can could would will shall should "
    "what which who whom how when where why do does did some any just also into about there here "
    "have has had am so if then than very too up out as "
    # German
    "der die das den dem des ein eine einen einem einer und oder ich mich mir mein meine meinen du "
    "dich dein wir uns unser ist sind war im am an auf aus bei für mit nach von vom zu zum zur bitte "
    "wie was welche welcher welches wo wann ob es sie er nicht kein keine noch "
    # French
    "le la les un une des de du et ou je me moi mon ma mes tu te toi ton ta tes nous notre vous votre "
    "est sont en dans pour avec sur au aux ce cette ces qui que quoi comment où il elle ils elles "
    "ne pas s'il stp svp "
    # Spanish
    "el los las unos unas y o del para con por mi mis tu tus nos nuestro es son al que qué cómo "
    "donde dónde cuando cuándo se su sus lo le les favor".split()
)


def stop_terms(stem: Callable[[str], str]) -> frozenset[str]:
    """The stopwords as query terms (stemmed like every word)."""
    return frozenset(stem(word) for word in STOPWORDS)
