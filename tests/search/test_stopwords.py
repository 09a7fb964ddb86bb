"""Stopwords: words that say nothing about what a query wants, in the forms people type them
(search/stopwords.py)."""

from __future__ import annotations

import pytest

from aai_gateway.search.stopwords import query_stop_terms
from aai_gateway.search.tokens import fold_word, stem


@pytest.mark.parametrize(
    "word",
    # clitic pronouns, auxiliaries and fillers of spoken French, Spanish and German
    [
        "lui",
        "leur",
        "ça",
        "pourrais",
        "besoin",
        "chez",
        "me",
        "una",
        "necesito",
        "podrías",
        "voy",
        "hab",
        "kannst",
    ],
)
def test_pronouns_auxiliaries_and_fillers_of_spoken_queries_are_no_query_terms(word: str) -> None:
    assert stem(fold_word(word)) in query_stop_terms()


def test_a_french_word_for_now_is_a_stopword_though_its_english_stem_would_name_maintenance() -> None:
    assert stem("maintenant") in query_stop_terms()


@pytest.mark.parametrize("word", ["hoy", "heute", "sous", "halt", "todo"])
def test_a_filler_that_is_also_a_word_of_the_lexicon_stays_a_term(word: str) -> None:
    assert stem(fold_word(word)) not in query_stop_terms()
