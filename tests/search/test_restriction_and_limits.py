"""Restricting a search to one app, blank queries, and the limit."""

from __future__ import annotations

import pytest

from aai_gateway.search import MAX_LIMIT, IndexedApp, SearchIndex

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


# --------------------------------------------------------------------------- pages


def readers(count: int) -> list[IndexedApp]:
    return [
        app(f"app{n:02d}", {"en": f"Reader {n}"}, "Reads books", [tool("read_book", "Read a book")])
        for n in range(count)
    ]


@pytest.mark.parametrize("size", [1, 7, 10])
def test_pages_of_any_size_follow_one_order_with_nothing_repeated_or_left_out(size: int) -> None:
    index = SearchIndex(readers(30))  # 60 entries match: past the depth the two readings fuse
    whole = [(hit.app.id, hit.tool) for hit in index.page("read book", MAX_LIMIT).hits]
    paged: list[tuple[str, str | None]] = []
    offset = 0
    while True:
        page = index.page("read book", size, offset=offset)
        paged += [(hit.app.id, hit.tool) for hit in page.hits]
        offset += size
        if not page.more:
            break
    assert len(paged) == 60 and len(set(paged)) == 60
    assert paged[:MAX_LIMIT] == whole
    assert [hit.score for hit in index.page("read book", MAX_LIMIT).hits] == sorted(
        (hit.score for hit in index.page("read book", MAX_LIMIT).hits), reverse=True
    )


def test_a_page_past_the_last_result_is_empty_with_nothing_more() -> None:
    page = SearchIndex(readers(3)).page("read book", 10, offset=6)
    assert page.hits == [] and not page.more
    assert SearchIndex(readers(3)).page("read book", 10, offset=10**12).hits == []  # capped, not a crash


def test_within_an_app_the_operations_a_query_names_come_first_in_its_order() -> None:
    hits = INDEX.search("list_pull_requests create_issue", 10, app=GITHUB)
    names = [hit.tool for hit in hits]
    assert names[:2] == ["list_pull_requests", "create_issue"]
    assert len(names) == len(set(names))


def test_within_an_app_a_blank_query_pages_through_its_operations_in_order() -> None:
    operations = [t.name for t in GITHUB.operations]
    first = INDEX.page("", 2, app=GITHUB)
    second = INDEX.page("", 2, offset=2, app=GITHUB)
    assert [h.tool for h in first.hits] == operations[:2] and first.more
    assert [h.tool for h in second.hits] == operations[2:4]
    assert not INDEX.page("", 2, offset=len(operations) - 2, app=GITHUB).more


def test_results_that_tie_follow_one_order_on_every_page() -> None:
    """Many entries score alike when a query names an app (all its operations match alike)."""
    apps = [
        app(f"ledger{n:03d}", {"en": "Ledger"}, "Books", [tool(f"op{k}", "Keeps books") for k in range(4)])
        for n in range(60)
    ]
    index = SearchIndex(apps)
    whole = [(h.app.id, h.tool) for h in index.page("ledger books", MAX_LIMIT).hits]
    paged = [
        (h.app.id, h.tool)
        for k in range(0, MAX_LIMIT, 7)
        for h in index.page("ledger books", 7, offset=k).hits
    ]
    assert paged[:MAX_LIMIT] == whole and len(set(whole)) == MAX_LIMIT


def redis_like() -> IndexedApp:
    return app(
        "keys",
        {"en": "Keys"},
        "A key-value store",
        [
            tool("set", "Set a key to a string value"),
            tool("hset", "Set a field of a hash"),
            tool("GetItem", "Get an item (the old name)"),
            tool("getItem", "Get an item"),
        ],
    )


def test_within_an_app_a_word_that_is_also_an_operation_name_stays_a_word() -> None:
    keys = redis_like()
    assert INDEX.search("set a hash field", 3, app=keys)[0].tool == "hset"


def test_within_an_app_a_name_matches_its_exact_case_before_another_case() -> None:
    keys = redis_like()
    assert INDEX.search("getItem", 2, app=keys)[0].tool == "getItem"
    assert INDEX.search("GetItem", 2, app=keys)[0].tool == "GetItem"
    assert INDEX.search("GETITEM set", 2, app=keys)[0].tool == "GetItem"  # the first of its case-fold
