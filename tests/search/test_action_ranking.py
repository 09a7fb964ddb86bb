"""Within the right app, the operation that does the asked action on the asked thing comes first,
whatever the language of the query and of the descriptor."""

from __future__ import annotations

import pytest

from aai_gateway.search import SearchIndex

from .catalog import app, tool

APPS = [
    app(
        "ci",
        {"en": "Jenkins"},
        "Jenkins CI server: jobs and builds",
        [
            tool("getJob", "Get a job's configuration", jobFullName="Full name of the job"),
            tool("getBuild", "Get a build of a job", jobFullName="Full name of the job"),
            tool("triggerBuild", "Trigger a new build of a job"),
            tool("getBuildLog", "Get the console log of a build", jobFullName="Full name of the job"),
        ],
    ),
    app(
        "db",
        {"en": "Supabase"},
        "Supabase projects: Postgres databases, tables, migrations and logs",
        [
            tool("list_projects", "List all Supabase projects", project_id="Project id"),
            tool("get_project", "Get a project", project_id="Project id"),
            tool("list_tables", "List the tables of a database", project_id="Project id"),
            tool("list_migrations", "List the migrations of a project", project_id="Project id"),
        ],
    ),
    app(
        "docs",
        {"en": "MongoDB"},
        "MongoDB databases and collections",
        [
            tool("list-databases", "List all databases"),
            tool("list-collections", "List the collections of a database"),
            tool("db-stats", "Statistics of a database"),
            tool("count", "Count the documents of a collection"),
        ],
    ),
    app(
        "shop",
        {"en": "PayPal"},
        "PayPal orders, invoices and refunds",
        [
            tool("create_invoice", "Create an invoice"),
            tool("get_order", "Get an order"),
            tool("create_refund", "Refund a captured payment"),
            tool("list_transactions", "List transactions"),
        ],
    ),
    app(
        "car",
        {"en": "Tesla"},
        "Control your car",
        [
            tool("lock_doors", "Lock the doors"),
            tool("start_climate", "Start preconditioning the cabin: heating or air conditioning"),
            tool("get_location", "Where the vehicle is parked"),
        ],
    ),
    app(
        "home",
        {"en": "Thermostat"},
        "Smart thermostat",
        [tool("set_heating", "Turn the heating on or off"), tool("get_temperature", "Room temperature")],
    ),
    app(
        "player",
        {"en": "VLC"},
        "Media player",
        [
            tool("Play", "Start playback"),
            tool("Pause", "Pause playback"),
            tool("Next", "Skip to the next track"),
            tool("SetVolume", "Set the volume"),
        ],
    ),
    app(
        "songs",
        {"en": "Song Finder", "zh-CN": "找歌"},
        "Search songs and lyrics",
        [tool("searchSongs", "Search songs by name"), tool("getLyrics", "Get the lyrics of a song")],
    ),
]
INDEX = SearchIndex(APPS)


def first(query: str) -> tuple[str, str | None]:
    hit = INDEX.search(query, 1)[0]
    return hit.app.id, hit.tool


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("jenkins 查看构建日志", ("ci", "getBuildLog")),
        ("jobFullNameでビルドログ取得", ("ci", "getBuildLog")),
        ("Supabase Tabellen auflisten", ("db", "list_tables")),
        ("列出 supabase 的表", ("db", "list_tables")),
        ("MongoDB コレクション一覧", ("docs", "list-collections")),
        ("MongoDB Dokumente zählen", ("docs", "count")),
        ("paypal 退款", ("shop", "create_refund")),
        ("Rückerstattung erstellen", ("shop", "create_refund")),
    ],
)
def test_the_asked_action_on_the_asked_thing_leads_the_apps_other_operations(
    query: str, expected: tuple[str, str]
) -> None:
    assert first(query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Nächstes Lied", ("player", "Next")),
        ("次の曲にして", ("player", "Next")),
        ("pause the music", ("player", "Pause")),
        ("baisser le son", ("player", "SetVolume")),
        ("siguiente canción", ("player", "Next")),
    ],
)
def test_a_playback_command_finds_the_player_not_the_app_named_after_songs(
    query: str, expected: tuple[str, str]
) -> None:
    assert first(query) == expected


def test_an_operation_takes_its_apps_description_as_context() -> None:
    # `car` is said by the app's description only, the heating by the operation's
    assert first("heat the car") == ("car", "start_climate")


def test_a_query_naming_an_app_and_an_action_is_no_query_for_the_app_alone() -> None:
    hits = INDEX.search("jenkins 查看构建日志", 5)
    assert hits[0].tool is not None
    assert INDEX.search("jenkins", 1)[0].tool is None


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("is the car locked?", True),
        ("Ist das Auto abgeschlossen", True),
        ("山手線遅れてる？", True),
        ("外卖到哪了", True),
        ("can you lock the car?", False),
        ("lock the car", False),
        ("鍵をかけてください", False),
    ],
)
def test_a_question_asks_to_be_told_and_a_polite_request_asks_for_an_action(query: str, asks: bool) -> None:
    from aai_gateway.search.language import is_question

    assert is_question(query) is asks


def test_a_question_puts_the_operation_that_looks_first_and_the_same_words_said_do_not() -> None:
    same = "The car doors: locked or open"
    index = SearchIndex(
        [app("car", {"en": "Car"}, "Your car", [tool("doors", same), tool("get_doors", same)])]
    )

    assert [hit.tool for hit in index.search("are the car doors locked?", 2)] == ["get_doors", "doors"]
    assert [hit.tool for hit in index.search("the car doors locked", 2)] == ["doors", "get_doors"]


def test_a_question_lifts_an_operation_its_app_says_only_reads_whatever_its_name() -> None:
    same = "Die Türen des Autos: zu oder offen"
    car = app(
        "car",
        {"de": "Auto"},
        "Dein Auto",
        [
            {**tool("tueren_schalten", same), "annotations": {"destructiveHint": False}},
            {**tool("tueren_melden", same), "annotations": {"readOnlyHint": True}},
            tool("tueren", same),
        ],
    )
    index = SearchIndex([car])

    asked = [hit.tool for hit in index.search("Sind die Türen des Autos zu?", 3)]
    said = [hit.tool for hit in index.search("Türen des Autos zu", 3)]
    assert asked == ["tueren_melden", "tueren", "tueren_schalten"]  # not destructive is not read-only
    assert said == ["tueren", "tueren_schalten", "tueren_melden"]
