"""The cross-language concept lexicon shipped with the package, and how it matches."""

from __future__ import annotations

import pytest

from aai_gateway.search.concept_files import (
    MAX_CJK_TERM,
    Concept,
    load_concepts,
    narrower_term,
    parse_lexicon,
)
from aai_gateway.search.lexicon import Lexicon, default_lexicon
from aai_gateway.search.normalize import clip_query
from aai_gateway.search.tokens import analyze, stem

LANGUAGES = {"en", "zh", "ja", "de", "fr", "es"}


def concepts_of(text: str, lexicon: Lexicon | None = None) -> list[str]:
    return (lexicon or default_lexicon()).concepts(analyze(clip_query(text)))


def test_the_shipped_lexicon_loads_and_every_concept_has_words_in_six_languages() -> None:
    concepts = load_concepts()
    assert len(concepts) >= 300
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


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("退款", "§refund"),
        ("Rückerstattung", "§refund"),
        ("值班", "§on_call"),
        ("wer hat Bereitschaft", "§on_call"),
        ("歌词", "§lyrics"),
        ("外卖", "§food_delivery"),
        ("快递", "§parcel"),
        ("Kontostand", "§balance"),
        ("Überweisung", "§transfer"),
        ("Karteikarten", "§flashcard"),
        ("colis", "§parcel"),
        ("Mietwagen", "§car_rental"),
        ("拼车", "§carpool"),
        ("密码", "§password"),
        ("无线网", "§wifi"),
        ("暂停", "§pause"),
        ("索引", "§index"),
        ("ログ", "§log"),
        ("一覧", "§list"),
        ("second-hand", "§marketplace"),
        ("两个数字相加", "§math"),  # adding numbers, as a server's "Returns the sum of two numbers"
        ("二つの数を足す", "§math"),
        ("zwei Zahlen addieren", "§math"),
        ("Returns the sum of two numbers", "§math"),
    ],
)
def test_the_lexicon_knows_what_people_ask_apps_for(text: str, concept: str) -> None:
    assert concept in concepts_of(text)


def test_a_word_of_german_french_or_spanish_matches_in_its_regular_forms() -> None:
    assert "§db_table" in concepts_of("Tabellen")  # Tabelle + n
    assert "§folder" in concepts_of("Ordnern")  # Ordner + n (its stem, `ordn`, is too short)
    assert "§file" in concepts_of("fichiers")  # fichier + s
    assert "§transfer" in concepts_of("überweise")  # German stem of Überweisung
    assert "§topic" not in concepts_of("them")  # too short for a stem: not German Themen


def test_the_words_of_a_phrase_count_as_the_phrase_only() -> None:
    assert "§next_track" in concepts_of("nächstes Lied")
    assert "§song" not in concepts_of("nächstes Lied")
    assert "§song" in concepts_of("Lied")


def test_a_cjk_word_without_concept_hides_the_words_inside_it() -> None:
    assert "§send" in concepts_of("发给老板")
    assert "§send" not in concepts_of("开发")
    assert "§lodging" not in concepts_of("新宿")


def test_a_narrow_concept_names_its_broader_ones() -> None:
    lexicon = default_lexicon()
    assert "§payment" in lexicon.broader(["§refund"])
    assert "§money" in lexicon.broader(["§refund"])  # through payment
    assert narrower_term("§payment") in lexicon.for_descriptor(["§refund"])
    assert "§payment" not in lexicon.for_descriptor(["§refund"])


def test_a_broader_concept_the_lexicon_does_not_have_is_refused() -> None:
    source = parse_lexicon('{"concepts": [{"id": "a", "broader": ["nowhere"], "terms": {"en": ["alpha"]}}]}')
    with pytest.raises(ValueError, match="unknown broader 'nowhere'"):
        Lexicon(source.concepts)


def test_a_query_only_word_names_its_concept_in_a_query_and_not_in_a_descriptor() -> None:
    lexicon = Lexicon(
        [Concept("sms", {"en": ["text message"]}, query_terms={"en": ["text"], "de": ["simsen"]})]
    )
    assert lexicon.query_concepts_of_word("text", "text") == ["§sms"]
    assert lexicon.query_concepts_of_word("simsen", "simsen") == ["§sms"]
    assert concepts_of("extract the text of a page", lexicon) == []  # a descriptor's `text`
    assert lexicon.knows("simsen")  # no typo to correct


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("Marseille", "§place_france"),
        ("渋谷", "§place_japan"),
        ("Kofferraum", "§car_trunk"),
        ("割り勘", "§split_bill"),
        ("chill lighting", "§scene"),
        ("vendredi", "§date"),
        ("talla", "§size_fit"),
    ],
)
def test_the_lexicon_knows_places_and_the_words_of_more_domains(text: str, concept: str) -> None:
    assert concept in concepts_of(text)


def test_a_word_of_a_narrow_concept_is_not_also_a_word_of_its_broader_ones() -> None:
    """A word in both (`打车` in rides and in asking for one) makes the narrow concept no better
    than the broad one for a query, and a text with the broad word as good as one with the narrow.
    Known exceptions: songs are music too (a query for music must find songs at full weight), and
    two languages' words that fold alike (German `Fonds`, French `fonds`; English `diner`, French
    `dîner`)."""
    from aai_gateway.search.concept_files import broader_closure, load_source

    source = load_source()
    closure = broader_closure(source.concepts)
    by_id = {concept.id: concept for concept in source.concepts}

    def forms(concept: Concept) -> set[str]:
        found = set()
        for words in concept.terms.values():
            for word in words:
                analyzed = analyze(clip_query(word))
                found.add(" ".join(analyzed.surfaces) or "".join(analyzed.stretches))
        return found

    allowed = {("song", "music"), ("investing", "money"), ("restaurant", "food")}
    shared = {
        (concept.id, broader[1:]): forms(concept) & forms(by_id[broader[1:]])
        for concept in source.concepts
        for broader in closure.get("§" + concept.id, ())
    }
    assert {pair: words for pair, words in shared.items() if words and pair not in allowed} == {}


@pytest.mark.parametrize(
    ("word", "concept"),
    [
        ("geschlafen", "§sleep"),
        ("angerufen", "§call"),
        ("eingeschaltet", "§turn_on"),
        ("verschickt", "§send"),
    ],
)
def test_a_german_participle_or_verb_form_in_t_meets_its_infinitive(word: str, concept: str) -> None:
    from aai_gateway.search.lexicon import default_lexicon
    from aai_gateway.search.tokens import stem

    lexicon = default_lexicon()
    assert concept in (lexicon.concepts_of_word(word, stem(word)) or lexicon.verb_form_concepts(word))


def test_the_infinitives_of_a_german_verb_form_are_candidates_only() -> None:
    from aai_gateway.search.compounds import german_verb_forms

    assert "schlafen" in german_verb_forms("geschlafen")
    assert "anrufen" in german_verb_forms("angerufen")
    assert "buchen" in german_verb_forms("gebucht")
    assert german_verb_forms("haus") == []


@pytest.mark.parametrize(
    "text",
    ["my sister", "text mum", "Mama", "ma frangine", "mi hermano", "老妈", "お母さん", "roommate"],
)
def test_relatives_and_friends_are_people_and_people_are_contacts(text: str) -> None:
    lexicon = default_lexicon()
    found = concepts_of(text, lexicon)
    assert "§person" in found
    assert "§contact" in lexicon.broader(["§person"])
    assert "§contact" not in found  # a word of a narrow concept is not also one of its broader ones


def test_a_word_of_a_query_in_a_known_language_names_what_it_means_in_that_language_or_english() -> None:
    lexicon = default_lexicon()
    assert "§read" in lexicon.concepts_of_word("leer", "leer")  # Spanish: to read
    assert "§read" in lexicon.concepts_of_word("leer", "leer", "es")
    assert "§read" not in lexicon.concepts_of_word("leer", "leer", "de")  # German: empty
    assert "§calendar" in lexicon.concepts_of_word("calendar", "calendar", "de")  # English: everywhere


def test_an_id_is_nobody_s_by_itself() -> None:
    """A term the lexicon lists for one language is matched in every descriptor: `ID` (a user's,
    in Chinese) made every operation with an `id` parameter about users (39% of the bench's)."""
    lexicon = default_lexicon()
    assert "§user" not in lexicon.concepts(analyze("the task id"))
    assert "§user" in lexicon.concepts(analyze("用户ID"))


def test_a_word_that_is_a_common_word_of_another_language_names_its_concept_in_queries_only() -> None:
    """French `hier` (yesterday) is German `hier` (here), and `thèse` folds to English `these`:
    in a descriptor, whose language the lexicon does not ask, they would date or file any text."""
    lexicon = default_lexicon()
    assert "§date" not in lexicon.concepts(analyze("Hier finden Sie alle Dateien"))
    assert "§paper" not in lexicon.concepts(analyze("these files"))
    assert "§date" in lexicon.query_concepts_of_word("hier", stem("hier"), "fr")
    assert "§paper" in lexicon.query_concepts_of_word("these", stem("these"), "fr")


def test_threads_asking_for_the_lexicon_at_once_get_one_lexicon_built_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    import time

    from aai_gateway.search import lexicon as lexicon_module

    built: list[int] = []

    def slow_lexicon(concepts: object, plain_words: object) -> object:
        built.append(1)
        time.sleep(0.2)  # a load takes about a second: long enough for others to ask meanwhile
        return object()

    monkeypatch.setattr(lexicon_module, "_default", None)
    monkeypatch.setattr(lexicon_module, "Lexicon", slow_lexicon)
    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(lexicon_module.default_lexicon())) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == [1]
    assert len(got) == 4 and len({id(lexicon) for lexicon in got}) == 1
