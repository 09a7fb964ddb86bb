"""A query as units: one per piece of it (a word, a lexicon phrase, a CJK word), whose literal
terms add up and whose alternatives (concepts, broader concepts, corrections) compete."""

from __future__ import annotations

from aai_gateway.search import SearchIndex
from aai_gateway.search.query import query_weights
from aai_gateway.search.query_units import MAX_UNITS, WeightedQuery

from .catalog import app, catalog, tool

INDEX = SearchIndex(
    [
        *catalog(),
        app(
            "desktop",
            {"en": "Desktop"},
            "Processes of this computer",
            [tool("terminate_process", "Terminate a running process")],
        ),
        app("music", {"en": "Music"}, "Songs and playback", [tool("next", "Skip to the next track")]),
        app("chat", {"zh-CN": "聊天"}, "发送消息给好友", [tool("send", "发送一条消息")]),
        app("pay", {"en": "Pay"}, "Money between friends", [tool("send_money", "Send money to a friend")]),
        app("post", {"en": "Post"}, "Parcels", [tool("return_label", "Print a return label for a parcel")]),
    ]
)


def units_of(query: str) -> tuple[WeightedQuery, dict[int, str]]:
    corpus = INDEX._corpus
    weighted = query_weights(
        query,
        corpus.vocabulary,
        INDEX._lexicon,
        INDEX._speller,
        loanwords=corpus.loanwords,
        surfaces=corpus.surfaces,
    )
    return weighted, {term_id: term for term, term_id in corpus.vocabulary.items()}


def terms(query: str) -> list[tuple[set[str], set[str]]]:
    weighted, names = units_of(query)
    return [
        ({names[t] for t in unit.literal}, {names[t] for t in unit.alternatives}) for unit in weighted.units
    ]


def test_a_word_and_the_concept_it_names_are_one_unit() -> None:
    [(literal, alternatives)] = terms("calendar")
    assert literal == {"calendar"}
    assert "§calendar" in alternatives


def test_the_words_of_a_lexicon_phrase_are_one_unit_with_the_phrase_concept() -> None:
    [(literal, alternatives)] = terms("pull request")
    assert literal == {"pull", "request", "pullrequest"}  # and the two joined, which names it too
    assert "§pull_request" in alternatives


def test_two_pieces_naming_the_same_concept_are_one_unit() -> None:
    units = terms("calendar Kalender")
    assert len(units) == 1
    assert "§calendar" in units[0][1]


def test_a_foreign_word_is_not_looked_up_by_its_english_stem() -> None:
    # `Termin` stems like `terminate` in English; it is German for an appointment
    literal = set().union(*(literal for literal, _ in terms("Termin")))
    assert "termin" not in literal
    assert INDEX.search("Termin eintragen", 1)[0].app.id == "calendar"


def test_chinese_function_characters_are_no_terms() -> None:
    literal = set().union(*(literal for literal, _ in terms("帮我发一下消息")))
    assert not literal & {"帮", "我", "一", "下", "一下"}


def test_the_characters_of_a_cjk_word_weigh_one_word_together() -> None:
    weighted, names = units_of("消息")
    [unit] = weighted.units
    assert {names[t] for t in unit.literal} == {"消", "息", "消息"}
    assert sum(unit.literal.values()) < 2


def test_a_query_has_at_most_max_units_units() -> None:
    weighted, _ = units_of(" ".join(["calendar github weather mail slack notes tasks transit"] * 10))
    assert 0 < len(weighted.units) <= MAX_UNITS
    assert len(units_of(" ".join(f"w{n}" for n in range(200)) + " github")[0].units) <= MAX_UNITS


def test_a_piece_the_query_only_may_have_meant_is_a_guess() -> None:
    weighted, _ = units_of("githbu issues")
    guessed = [unit.guessed for unit in weighted.units]
    assert guessed.count(True) == 1  # `githbu`: only its corrections
    assert guessed.count(False) == 1  # `issues`: the word itself


def test_a_file_name_or_a_web_address_in_a_query_names_a_file_or_a_web_page() -> None:
    from aai_gateway.search.lexicon import default_lexicon
    from aai_gateway.search.query import query_weights

    lexicon = default_lexicon()
    vocabulary = {"§file": 0, "§link": 1, "§browser": 2}
    named = query_weights("open config.yaml", vocabulary, lexicon, None).words
    assert 0 in named
    assert {1, 2} <= query_weights("fetch https://example.com/docs", vocabulary, lexicon, None).words
    assert not {0, 1, 2} & query_weights("open the door", vocabulary, lexicon, None).words


def test_a_flight_number_in_a_query_names_a_flight_whatever_the_language() -> None:
    from aai_gateway.search.lexicon import default_lexicon

    lexicon = default_lexicon()
    vocabulary = {"§flight": 0}
    for query in ("is UA 837 on time", "NH10便、遅れてる？", "¿A qué hora aterriza el IB6251?"):
        assert 0 in query_weights(query, vocabulary, lexicon, None).words, query
    # two capitals that name something else, lower case, a model number, a year: no flight
    for query in (
        "merge PR 123",
        "ua 837",
        "buy a PS5",
        "taxes for 2024",
        "ABC 123",
        "EU 27 population",
        "DE 2024 tax",
    ):
        assert 0 not in query_weights(query, vocabulary, lexicon, None).words, query


def test_a_phrase_that_says_the_action_and_the_thing_names_the_action_in_a_unit_of_its_own() -> None:
    units = terms("jot down")
    assert any("§note" in alternatives and "§write" not in alternatives for _literal, alternatives in units)
    assert any("§write" in alternatives and "§note" not in alternatives for _literal, alternatives in units)
    [(_literal, alternatives)] = terms("jot")  # a single word stays one unit (`order`: bought)
    assert {"§note", "§write"} <= alternatives


def test_a_capitalized_word_the_index_does_not_know_is_guessed_to_be_a_person() -> None:
    # a person, and so a contact (people.json): it meets a text about a friend or a contact
    assert any("§person" in alternatives for _literal, alternatives in terms("send money to Paul"))
    assert not any("§person" in alternatives for _literal, alternatives in terms("send money to paul"))
    # German writes every noun with a capital: no guess there
    assert not any("§person" in alternatives for _literal, alternatives in terms("Schick Geld an Paul"))


def test_a_word_the_lexicon_knows_is_split_only_in_parts_that_say_what_it_says() -> None:
    # Freitag is a day, not `frei` (available) + `Tag` (a label)
    [(literal, alternatives)] = terms("Freitag")
    assert "§date" in alternatives
    assert "§label" not in alternatives and "tag" not in literal


def test_what_a_word_means_in_another_language_than_the_query_is_only_a_guess() -> None:
    # `leer` reads in Spanish; in this German query it says the car is empty
    weighted, names = units_of("Die Karre ist fast leer, wo krieg ich Strom?")
    guesses = {names[t] for unit in weighted.units if unit.guessed for t in unit.alternatives}
    sure = {names[t] for unit in weighted.units if not unit.guessed for t in unit.alternatives}
    assert "§read" in guesses
    assert "§read" not in sure
    weighted, names = units_of("léeme el mensaje")
    sure = {names[t] for unit in weighted.units if not unit.guessed for t in unit.alternatives}
    assert "§read" in sure


def test_the_concepts_of_a_compound_s_parts_are_what_the_query_says_not_a_guess() -> None:
    # `Rücksendeetikett` is no word of the index: its parts say a return and a label
    weighted, names = units_of("Rücksendeetikett drucken")
    [unit] = [unit for unit in weighted.units if any(names[t] == "§label" for t in unit.alternatives)]
    assert not unit.guessed


def test_what_a_question_s_phrase_asks_for_is_a_guess_and_the_same_verb_said_is_not() -> None:
    # `wo ist` asks where something is: tracking a parcel, or the nearest cash machine
    weighted, names = units_of("Wo ist mein Paket?")
    guessed = {names[t]: unit.guessed for unit in weighted.units for t in unit.alternatives}
    assert guessed["§track"] and not guessed["§parcel"]
    weighted, names = units_of("Paket verfolgen")
    assert not any(
        unit.guessed for unit in weighted.units if any(names[t] == "§track" for t in unit.alternatives)
    )


def test_the_initials_of_a_name_spelt_out_are_read_whatever_its_punctuation() -> None:
    from aai_gateway.search.query_forms import initials

    assert initials("Allgemeiner Deutscher Automobil-Club?") == "adac"
    assert initials("¿Red Nacional de Ferrocarriles Españoles?") == "rnfe"  # `de` between the words
    assert initials("New York Times") == "nyt"
    assert initials("Find my phone") is None  # not every word capitalized
    assert initials("Deutsche Bahn") is None  # two words: too few to tell
    assert initials("Book A Hotel Now") is None  # a letter alone is no word of a name


def test_an_identifier_is_its_words_alone_and_leaves_the_concepts_of_other_words() -> None:
    index = SearchIndex(
        [
            app(
                "charging",
                {"de": "Ladestation"},
                "Ladepunkte",
                [tool("suchen", "Suchen", nur_frei="Nur freie")],
            )
        ]
    )
    corpus = index._corpus
    names = {term_id: term for term, term_id in corpus.vocabulary.items()}

    def units(query: str) -> list[tuple[dict[str, float], set[str]]]:
        weighted = query_weights(
            query, corpus.vocabulary, index._lexicon, index._speller, surfaces=corpus.surfaces
        )
        return [
            ({names[t]: w for t, w in unit.literal.items()}, {names[t] for t in unit.alternatives})
            for unit in weighted.units
        ]

    [(literal, alternatives)] = units("nur_frei")
    assert literal["nurfrei"] == 2.0 and alternatives == set()  # no availability in general
    identifier, other = sorted(units("verfügbar nur_frei"), key=lambda unit: "nurfrei" not in unit[0])
    assert "nurfrei" in identifier[0] and identifier[1] == set()
    assert "§availability" in other[1]  # `verfügbar` still names what it names
    assert any("§availability" in alternatives for _, alternatives in units("nur frei"))  # words apart
