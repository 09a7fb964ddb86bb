"""Hostile queries and descriptors: no crash, and the work is bounded by the caps the engine
documents (a query is read up to MAX_QUERY_CHARACTERS; a field up to MAX_FIELD_CHARACTERS)."""

from __future__ import annotations

import pytest

from aai_gateway.search import SearchIndex
from aai_gateway.search.normalize import MAX_FIELD_CHARACTERS, MAX_QUERY_CHARACTERS

from .catalog import app, catalog, tool

INDEX = SearchIndex(catalog())


@pytest.mark.parametrize(
    "query",
    [
        "a" * 1_000_000,
        "github " * 150_000,
        " ".join(f"word{n}" for n in range(10_000)),
        "\x00\x01\x1b[31m\x7f github \u200b\u202e",
        "\ud800 github \udfff",
        "!!! ??? ... ,,, ;;; ---",
        "😀🎉🔥 github 🚀",
        "\u3000\u3001\u3002",
        "ｇｉｔｈｕｂ",
    ],
    ids=[
        "1MB",
        "1MB-words",
        "10k-words",
        "controls",
        "surrogates",
        "punctuation",
        "emoji",
        "cjk-punctuation",
        "fullwidth",
    ],
)
def test_a_hostile_query_is_answered_without_an_error(query: str) -> None:
    hits = INDEX.search(query, 50)
    assert isinstance(hits, list)
    assert len(hits) <= 50


def test_emoji_and_controls_only_separate_words() -> None:
    assert INDEX.search("😀github\x00", 1)[0].app.id == "github"
    assert INDEX.search("ｇｉｔｈｕｂ", 1)[0].app.id == "github"


def test_only_punctuation_finds_nothing() -> None:
    assert INDEX.search("!!! ??? ... ,,, ;;;", 10) == []


def test_a_query_is_read_up_to_its_cap_and_no_further() -> None:
    padding = "x " * MAX_QUERY_CHARACTERS
    assert INDEX.search(padding[: MAX_QUERY_CHARACTERS - 10] + " github", 1)[0].app.id == "github"
    assert INDEX.search(padding + " github", 5) == []


def test_an_app_with_a_thousand_operations_and_a_huge_description_is_indexed() -> None:
    tools = [tool(f"operation_{n}", f"Does thing number {n}") for n in range(999)]
    tools.append(tool("launch_rocket", "Launch the rocket"))
    big = app("big", {"en": "Big"}, "word " * 20_000 + "needle", tools)
    index = SearchIndex([*catalog(), big])
    assert index.search("launch rocket", 1)[0].tool == "launch_rocket"
    # the description is indexed up to its cap: a word past it is not found
    assert len("word " * 20_000) > MAX_FIELD_CHARACTERS
    assert all(hit.app.id != "big" for hit in index.search("needle", 5))
    assert len(index.search("", 2000, app=big)) == 50


def test_hostile_names_and_parameters_are_indexed_without_an_error() -> None:
    strange = app(
        "strange",
        {"en": "\u202eStrange\x00 😀"},
        "\ud7ff\ufeff desc",
        [tool("do-it", "\x1b[2J clear", **{f"p{n}": "\u0000" * 10 for n in range(200)})],
    )
    index = SearchIndex([strange])
    assert index.search("strange", 1)[0].app.id == "strange"
    assert index.search("p150", 1) == []  # parameters past the 64th are not indexed
    assert index.search("p10", 1)[0].tool == "do-it"
