"""The cross-language concept lexicon shipped with the package, and how it matches."""

from __future__ import annotations

import pytest

from aai_gateway.search.lexicon import MAX_CJK_TERM, Concept, Lexicon, load_concepts
from aai_gateway.search.normalize import clip_query
from aai_gateway.search.tokens import analyze

LANGUAGES = {"en", "zh", "ja", "de", "fr", "es"}


def concepts_of(text: str, lexicon: Lexicon | None = None) -> list[str]:
    return (lexicon or Lexicon(load_concepts())).concepts(analyze(clip_query(text)))


def test_the_shipped_lexicon_loads_and_every_concept_has_words_in_six_languages() -> None:
    concepts = load_concepts()
    assert len(concepts) >= 60
    assert len({concept.id for concept in concepts}) == len(concepts)
    for concept in concepts:
        assert set(concept.terms) == LANGUAGES, concept.id
        assert all(concept.terms[language] for language in LANGUAGES), concept.id
    Lexicon(concepts)  # every word fits the rules (no mixed scripts, no over-long CJK word)


@pytest.mark.parametrize(
    "text",
    [
        "task",
        "tasks",
        "to-do",
        "todo",
        "待办",
        "待辦事項",
        "タスク",
        "やること",
        "Aufgaben",
        "tâche",
        "tarea",
    ],
)
def test_the_words_of_a_concept_in_every_language_meet(text: str) -> None:
    assert "§todo" in concepts_of(text)


def test_english_words_match_by_stem_and_other_languages_as_written_or_inflected() -> None:
    assert "§appointment" in concepts_of("Termin")
    assert "§terminal" not in concepts_of("Termin")
    assert "§appointment" not in concepts_of("terminal")
    assert "§todo" in concepts_of("Aufgaben")
    assert "§todo" not in concepts_of("Aufgabx")


def test_a_phrase_matches_its_words_in_order_only() -> None:
    assert "§pull_request" in concepts_of("open a pull request")
    assert "§pull_request" not in concepts_of("request a pull")


def test_a_cjk_word_inside_a_longer_one_is_not_counted() -> None:
    assert "§video" in concepts_of("動画")
    assert "§image" not in concepts_of("動画")
    assert "§image" in concepts_of("画一只猫")


def test_a_lexicon_word_that_mixes_scripts_or_is_too_long_is_refused() -> None:
    with pytest.raises(ValueError, match="mixes scripts"):
        Lexicon([Concept("bad", {"en": ["S3バケット"]})])
    with pytest.raises(ValueError, match="longer than"):
        Lexicon([Concept("bad", {"zh": ["一" * (MAX_CJK_TERM + 1)]})])
