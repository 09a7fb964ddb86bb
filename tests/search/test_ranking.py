"""Ranking on a small fixed catalog: what a user types finds the app or operation they mean, in
every language and spelling the engine claims to handle."""

from __future__ import annotations

import pytest

from aai_gateway.search import SearchHit, SearchIndex

from .catalog import app, catalog, tool

INDEX = SearchIndex(catalog())


def targets(query: str, limit: int = 5) -> list[tuple[str, str | None]]:
    return [(hit.app.id, hit.tool) for hit in INDEX.search(query, limit)]


def test_an_app_named_alone_comes_before_its_own_operations() -> None:
    assert targets("github")[0] == ("github", None)
    assert targets("Kalender")[0] == ("calendar", None)


def test_a_query_naming_an_app_and_an_action_finds_the_operation_first() -> None:
    assert targets("github create issue")[0] == ("github", "create_issue")


def test_a_hit_carries_the_app_a_score_and_a_one_line_description() -> None:
    hit = INDEX.search("send an email", 1)[0]
    assert isinstance(hit, SearchHit)
    assert (hit.app.id, hit.tool, hit.description) == ("mail", "send_email", "Send an email")
    assert hit.score > 0


def test_results_are_ranked_best_first() -> None:
    scores = [hit.score for hit in INDEX.search("list", 10)]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("创建待办事项", ("tasks", "create_task")),
        ("明天的天气预报", ("weather", "get_forecast")),
        ("日历", ("calendar", None)),
    ],
)
def test_a_chinese_query_without_spaces_finds_its_target(
    query: str, expected: tuple[str, str | None]
) -> None:
    assert expected in targets(query, 3)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("明日の天気", ("weather", "get_forecast")),
        ("東京駅から新宿駅までの経路", ("transit", "search_route")),
        ("カレンダーに予定を追加", ("calendar", "create-event")),
    ],
)
def test_a_japanese_query_finds_its_target(query: str, expected: tuple[str, str | None]) -> None:
    assert expected in targets(query, 3)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("githbu", "github"), ("gihtub", "github"), ("calender", "calendar"), ("Kalendar", "calendar")],
)
def test_a_misspelt_name_is_still_found(query: str, expected: str) -> None:
    assert targets(query, 1)[0][0] == expected


@pytest.mark.parametrize("query", ["todo", "to-do", "to do", "ToDo", "待办", "待辦", "タスク", "やること"])
def test_every_spelling_of_todo_finds_the_task_app(query: str) -> None:
    assert targets(query, 1)[0][0] == "tasks"


def test_traditional_chinese_meets_simplified() -> None:
    assert targets("日曆", 1)[0] == ("calendar", None)
    assert ("weather", "get_forecast") in targets("天氣預報", 3)


def test_a_parameter_name_finds_its_operation() -> None:
    assert targets("reply with thread_ts", 1)[0] == ("slack", "post_message")
    assert ("weather", "get_forecast") in targets("forecast by latitude and longitude", 3)


def test_words_of_other_languages_meet_through_the_concept_lexicon() -> None:
    assert targets("Aufgabe erstellen", 3)[0] == ("tasks", "create_task")
    assert targets("créer une tâche", 3)[0] == ("tasks", "create_task")
    assert ("calendar", "create-event") in targets("agendar una cita", 3)


def test_the_lexicon_can_be_switched_off() -> None:
    plain = SearchIndex(catalog(), concepts=False)
    assert ("tasks", "create_task") not in [(h.app.id, h.tool) for h in plain.search("Aufgabe erstellen", 3)]
    assert plain.search("github", 1)[0].app.id == "github"


def test_a_name_written_in_katakana_finds_the_app() -> None:
    assert targets("ギットハブ", 1)[0][0] == "github"
    assert targets("スラック", 1)[0][0] == "slack"


def test_a_german_compound_is_read_as_its_parts() -> None:
    assert targets("Kalenderereignis", 3)[0][0] == "calendar"


def test_camel_snake_and_kebab_names_are_split_and_joined() -> None:
    assert targets("create note", 1)[0] == ("notes", "createNote")
    assert targets("createnote", 1)[0] == ("notes", "createNote")
    assert targets("list events", 1)[0] == ("calendar", "list-events")
    assert targets("pull requests", 1)[0] == ("github", "list_pull_requests")


def test_a_query_with_nothing_the_index_knows_finds_nothing() -> None:
    assert INDEX.search("zzzqqq xxyyzz", 5) == []


def test_a_misspelt_word_whose_stem_another_word_has_is_still_corrected() -> None:
    from .catalog import app, tool

    apps = [
        app(
            "booking", {"en": "Calendly"}, "Scheduling links", [tool("list_event_types", "List event types")]
        ),
        app(
            "cal",
            {"en": "Calendar"},
            "Your calendar: events",
            [tool("list_events", "List the calendar's events")],
        ),
    ]
    found = [hit.app.id for hit in SearchIndex(apps).search("calender", 5)]
    assert "cal" in found  # `calender` stems as `calendly` does; it means calendar


def test_in_german_a_word_the_query_says_outranks_the_corrections_of_one_it_does_not() -> None:
    # `Stell` (set up) is German, no misspelt `Star`: the app it sounds like is a far guess
    index = SearchIndex(
        [
            app("kicker", {"de": "Kicker"}, "Fußball, das Managerspiel", [tool("lineup", "Managerspiel")]),
            app("star", {"en": "Star"}, "Saved articles", [tool("star", "Star an article")]),
            app("notes", {"en": "Notes"}, "Notes", [tool("spell", "Spell check a note")]),
        ]
    )
    found = [(hit.app.id, hit.tool) for hit in index.search("Stell im Managerspiel Musiala und Kane auf", 5)]
    assert found[0] == ("kicker", "lineup")
    # in English, a word the index does not know is more often a misspelt name
    assert index.search("starr article", 1)[0].app.id == "star"


def test_a_german_word_meets_its_umlauts_spelt_out_either_way() -> None:
    index = SearchIndex(
        [
            app("contracts", {"de": "Verträge"}, "Verwaltung", [tool("vertragKuendigen", "Vertrag")]),
            app("mail", {"de": "Post"}, "E-Mails", [tool("remove", "Eine Nachricht löschen")]),
        ],
        concepts=False,  # the lexicon knows `löschen` but not `loeschen`: its concepts are another matter
    )

    def score(query: str) -> float:
        return next(hit.score for hit in index.search(query, 5) if hit.tool is not None)

    # as a name spells it, and as a person types it: the same word, not a typo of it
    assert score("kündigen") == pytest.approx(score("kuendigen"))
    assert score("loeschen") == pytest.approx(score("löschen"))


def test_a_german_stopword_with_an_umlaut_stays_a_stopword_spelt_out() -> None:
    index = SearchIndex(
        [
            app("invoices", {"de": "Rechnungen"}, "Rechnungen", [tool("rechnung", "Rechnung fuer Kunden")]),
            app("notes", {"de": "Notizen"}, "Notizen", [tool("notiz", "Eine Notiz erstellen")]),
        ],
    )

    def scores(query: str) -> dict[str, float]:
        return {hit.app.id: hit.score for hit in index.search(query, 5) if hit.tool is not None}

    # `für` is left out of the query; its spelling `fuer` is not looked for either
    assert scores("Notiz für morgen erstellen") == pytest.approx(scores("Notiz morgen erstellen"))


def test_a_misspelt_app_name_finds_the_app_before_its_word_is_read_as_other_words() -> None:
    index = SearchIndex(
        [
            app(
                "yoopies",
                {"fr": "Yoopies"},
                "Garde d'enfants",
                [tool("chercher_gardes", "Trouver une nounou")],
            ),
            app(
                "units", {"en": "Units"}, "Convert feet, pies and inches", [tool("convert", "Convert units")]
            ),
            app("helpdesk", {"en": "Helpdesk"}, "Questions from you", [tool("ask", "Ask what you want")]),
            app(
                "balearia",
                {"es": "Baleària"},
                "Ferris a Baleares",
                [tool("comprar_billete", "Comprar billete")],
            ),
            app("valencia", {"es": "Valencia Bus"}, "Autobuses de Valencia", [tool("lineas", "Líneas")]),
            app("norauto", {"fr": "Norauto"}, "Entretien auto", [tool("prendre_rdv", "Prendre rendez-vous")]),
            app("rental", {"en": "Car Rental"}, "Rent an auto", [tool("rent", "Rent a car")]),
        ]
    )

    def first(query: str) -> str:
        return index.search(query, 1)[0].app.id

    assert first("Youpies") == "yoopies"  # one letter from the name, not `you` and `pies`
    assert first("Valearia") == "balearia"  # its first letter said the same, nearer than valencia
    assert first("Nora auto") == "norauto"  # the name written in two words


def test_a_short_name_misspelt_finds_its_app_and_a_word_of_another_name_stays_a_word() -> None:
    index = SearchIndex(
        [
            app("rappi", {"es": "Rappi"}, "Pedidos a domicilio", [tool("pedir", "Pedir comida")]),
            app("edeka", {"de": "EDEKA"}, "Lebensmittel", [tool("markt_finden", "Markt finden")]),
            app(
                "home-assistant",
                {"en": "Home Assistant"},
                "Lights and heating",
                [tool("turn_on", "Turn a light on")],
                aliases=["helm"],
            ),
        ]
    )

    def apps(query: str) -> list[str]:
        return [hit.app.id for hit in index.search(query, 5)]

    assert apps("Rapi")[0] == "rappi"
    assert apps("Edka")[0] == "edeka"
    assert apps("hope") == []  # not `home` of Home Assistant
    assert apps("help") == []  # nor its alias `helm`


def test_a_name_spelt_out_finds_the_app_its_initials_name() -> None:
    index = SearchIndex(
        [
            app(
                "adac",
                {"de": "ADAC"},
                "Pannenhilfe und Werkstätten",
                [tool("pannenhilfe", "Pannenhilfe rufen")],
            ),
            app("club", {"en": "Run Club"}, "Running club", [tool("run", "Start a run with the club")]),
        ]
    )
    assert index.search("Allgemeiner Deutscher Automobil-Club", 1)[0].app.id == "adac"
    assert index.search("allgemeiner deutscher automobil club", 1)[0].app.id == "club"  # not spelt as a name


def test_initials_name_only_a_short_form_not_a_word_of_a_language() -> None:
    index = SearchIndex(
        [
            app("bahn", {"de": "Bahn"}, "Züge und Fahrkarten", [tool("fahrkarte", "Fahrkarte kaufen")]),
            app(
                "hotels", {"en": "Hotels"}, "Book hotels nearby", [tool("book_hotel", "Book the best hotel")]
            ),
        ]
    )
    # b-a-h-n: `Bahn` is a word of a language, no short form a query spells out
    assert index.search("Best Available Hotels Nearby", 1)[0].app.id == "hotels"


def test_an_identifier_the_index_has_names_that_parameter_not_what_its_words_mean() -> None:
    index = SearchIndex(
        [
            app(
                "charging",
                {"de": "Ladestation"},
                "Ladepunkte für Elektroautos",
                [
                    tool(
                        "ladepunkte_suchen",
                        "Ladepunkte in der Nähe suchen",
                        stecker="Steckertyp",
                        nur_frei="Nur freie",
                    )
                ],
            ),
            app(
                "doctors",
                {"de": "Arzttermine"},
                "Freie Termine beim Arzt",
                [tool("freie_termine", "Freie Termine und Verfügbarkeit anzeigen")],
            ),
        ]
    )
    assert index.search("nur_frei", 1)[0].tool == "ladepunkte_suchen"
    assert index.search("nurFrei", 1)[0].tool == "ladepunkte_suchen"
    assert index.search("nur frei", 1)[0].app.id == "doctors"  # words, not the identifier: availability


def test_a_word_written_in_camel_case_is_still_a_word_not_an_identifier() -> None:
    index = SearchIndex(
        [
            app("qqmail", {"zh": "QQ邮箱"}, "QQ邮箱", [tool("fasong_youjian", "发送邮件")]),
            app(
                "news",
                {"en": "Newsletter"},
                "Newsletter by email",
                [tool("subscribe", "Subscribe an email address")],
            ),
        ]
    )
    for query in ("eMail senden", "E-Mail senden", "email senden"):
        assert index.search(query, 1)[0].tool == "fasong_youjian", query  # sending mail, in Chinese


def test_the_literal_reading_places_what_the_lexicon_misread_near_the_top_and_never_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import numpy as np

    tools = [tool(f"op{n}", f"Operation number {n}") for n in range(8)]
    index = SearchIndex([app("many", {"en": "Many"}, "An app of many operations", tools)])
    # Entry 0 is the app; the lexicon reads the query as what entries 1-6 do, in that order, and
    # finds nothing of entries 7 and 8; the query's words alone find entries 8, 7 and 6.
    lexicon = np.array([0, 9, 8, 7, 6, 5, 4, 0, 0], dtype=np.float32)
    literal = np.array([0, 0, 0, 0, 0, 0, 1, 2, 3], dtype=np.float32)

    def scores(
        query: str, lexicon_: object, within: range | None, *, looks: bool = False
    ) -> tuple[object, bool]:
        return (lexicon if lexicon_ is not None else literal), False

    monkeypatch.setattr(index, "_scores", scores)
    ranked = [hit.tool for hit in index.search("anything", 9)]

    assert ranked[:4] == ["op0", "op1", "op2", "op7"]  # the lexicon's first stays first
    assert ranked.index("op5") < ranked.index("op4")  # both readings rank it: it rises


def test_a_name_with_digits_inside_is_corrected_like_any_name() -> None:
    index = SearchIndex(
        [
            app(
                "z2m",
                {"en": "Zigbee2MQTT"},
                "Zigbee devices over MQTT",
                [tool("permit_join", "Let devices join")],
            ),
            app("mqtt", {"en": "MQTT Explorer"}, "Browse an MQTT broker", [tool("topics", "List topics")]),
        ]
    )

    assert [hit.app.id for hit in index.search("zigbe2mqtt", 1)] == ["z2m"]
    assert [hit.app.id for hit in index.search("zigbee2mqt", 1)] == ["z2m"]
