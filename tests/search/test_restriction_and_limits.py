"""Restricting a search to one app, blank queries, and the limit."""

from __future__ import annotations

import pytest

from aai_gateway.search import MAX_LIMIT, SearchIndex

from .catalog import app, catalog, tool

APPS = catalog()
INDEX = SearchIndex(APPS)
GITHUB = next(a for a in APPS if a.card.id == "github")


def test_with_an_app_only_that_apps_operations_are_answered() -> None:
    hits = INDEX.search("create", 10, app=GITHUB)
    assert hits
    assert {(hit.app.id, hit.tool is not None) for hit in hits} == {("github", True)}


def test_with_an_app_and_a_blank_query_every_operation_comes_in_descriptor_order() -> None:
    hits = INDEX.search("  ", 10, app=GITHUB)
    assert [hit.tool for hit in hits] == [tool.name for tool in GITHUB.operations]
    assert [hit.tool for hit in INDEX.search("", 2, app=GITHUB)] == [
        tool.name for tool in GITHUB.operations[:2]
    ]


def test_with_an_app_the_index_was_not_built_with_that_app_is_searched_alone() -> None:
    newcomer = app("newcomer", {"en": "Newcomer"}, "Arrived later", [tool("fetch_page", "Fetch a web page")])
    hits = INDEX.search("fetch page", 5, app=newcomer)
    assert [(hit.app.id, hit.tool) for hit in hits] == [("newcomer", "fetch_page")]


def test_a_blank_query_without_an_app_finds_nothing() -> None:
    assert INDEX.search("", 10) == []
    assert INDEX.search(" \t\n", 10) == []


@pytest.mark.parametrize("limit", [0, -1, -(10**9)])
def test_a_limit_of_zero_or_less_answers_nothing(limit: int) -> None:
    assert INDEX.search("github", limit) == []
    assert INDEX.search("", limit, app=GITHUB) == []


def test_a_huge_limit_is_capped() -> None:
    many = [
        app(f"app{n}", {"en": f"Reader {n}"}, "Reads books", [tool("read_book", "Read a book")])
        for n in range(40)
    ]
    index = SearchIndex(many)
    assert len(index.search("read book", 10**9)) == MAX_LIMIT
    assert len(index.search("read book", 3)) == 3


def test_the_limit_defaults_to_ten() -> None:
    many = [
        app(f"app{n}", {"en": f"Reader {n}"}, "Reads books", [tool("read_book", "Read a book")])
        for n in range(20)
    ]
    assert len(SearchIndex(many).search("read book")) == 10


def test_an_empty_catalog_answers_nothing() -> None:
    assert SearchIndex([]).search("github", 5) == []
