"""French, Spanish and German verb forms reach the infinitives of the lexicon (search/verbs.py)."""

from __future__ import annotations

import pytest

from aai_gateway.search.verbs import french_verb_forms, german_imperatives, spanish_verb_forms


@pytest.mark.parametrize(
    ("word", "infinitive"),
    [
        ("pideme", "pedir"),  # pídeme: a pronoun on an imperative, e changed to i
        ("recuerdame", "recordar"),  # recuérdame: ue back to o
        ("enviale", "enviar"),
        ("enviarle", "enviar"),  # an infinitive with its pronoun
        ("mandaselos", "mandar"),
        ("cierra", "cerrar"),  # ie back to e
        ("reservado", "reservar"),
        ("gastaste", "gastar"),
        ("buscando", "buscar"),
        ("hazlo", "hacer"),  # an irregular imperative
    ],
)
def test_a_spanish_form_gives_its_infinitive_as_a_candidate(word: str, infinitive: str) -> None:
    assert infinitive in spanish_verb_forms(word)


@pytest.mark.parametrize(
    ("word", "infinitive"),
    [
        ("annule", "annuler"),
        ("reservez", "reserver"),
        ("appelle", "appeler"),  # a doubled consonant made single
        ("nettoie", "nettoyer"),
        ("finis", "finir"),
        ("prends", "prendre"),
        ("eteins", "eteindre"),
        ("depense", "depenser"),
        ("reserverai", "reserver"),
    ],
)
def test_a_french_form_gives_its_infinitive_as_a_candidate(word: str, infinitive: str) -> None:
    assert infinitive in french_verb_forms(word)


def test_a_german_imperative_gives_its_infinitive_as_a_candidate() -> None:
    assert "suchen" in german_imperatives("such")
    assert "erinnern" in german_imperatives("erinner")
    assert "schicken" in german_imperatives("schickst")


def test_short_words_and_words_with_digits_are_no_verb_forms() -> None:
    assert spanish_verb_forms("me") == []
    assert spanish_verb_forms("k8s") == []
    assert french_verb_forms("le") == []


@pytest.mark.parametrize(
    ("word", "concept"),
    [
        ("pideme", "§buy"),
        ("apuntame", "§note"),
        ("bloqueala", "§block"),
        ("llamame", "§call"),
        ("ponme", "§play"),
        ("reservons", "§book"),
        ("vendu", "§sell"),
        ("such", "§find"),
    ],
)
def test_a_query_word_in_a_verb_form_names_the_concept_of_its_infinitive(word: str, concept: str) -> None:
    from aai_gateway.search.lexicon import default_lexicon

    assert concept in default_lexicon().verb_form_concepts(word)


def test_a_french_or_spanish_candidate_counts_only_as_a_word_of_its_language() -> None:
    from aai_gateway.search.concept_files import Concept
    from aai_gateway.search.lexicon import Lexicon

    lexicon = Lexicon([Concept("park", {"fr": ["garer"], "es": ["aparcar"]})])
    assert lexicon.verb_form_concepts("gare") == ["§park"]  # French: gare, garer
    assert lexicon.verb_form_concepts("aparco") == ["§park"]  # Spanish: aparco, aparcar
    assert lexicon.verb_form_concepts("garo") == []  # Spanish `garo` would be `garer`: no Spanish word
