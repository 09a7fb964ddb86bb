"""The corpus an index is built from: what a bounded piece cache must not lose."""

from __future__ import annotations

import pytest

from aai_gateway.search import SearchIndex, corpus

from .catalog import app, catalog, tool


def test_a_piece_cache_that_starts_again_loses_no_app_name_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """An app's names are read back from the cache after its description and parameters: a cache
    emptied in between would leave its words out of the names a misspelt word may mean."""
    apps = [
        app(
            "zendesk",
            {"en": "Zendesk"},
            "Tickets alpha beta gamma delta epsilon zeta",
            [tool("list_tickets", "List")],
        ),
        *catalog(),
    ]
    unbounded = SearchIndex(apps)._corpus
    monkeypatch.setattr(corpus, "MAX_CACHED_PIECES", 6)
    index = SearchIndex(apps)
    small = index._corpus
    assert small.name_words == unbounded.name_words
    assert small.acronyms == unbounded.acronyms
    assert index.search("zendsk", 1)[0].app.id == "zendesk"


def test_every_entry_names_its_own_app_and_operation_with_the_operations_line() -> None:
    apps = [
        app("empty", {"en": "Empty"}, "An app with no operations", []),
        *catalog(),
        app("second-empty", {"en": "Second"}, "Another with none", []),
        app("last", {"en": "Last"}, "The last app", [tool("only_one", "The one\nand only")]),
    ]
    built = corpus.Corpus(apps, None)
    expected: list[tuple[str, str | None, str]] = []
    for indexed in apps:
        expected.append((indexed.card.id, None, corpus.one_line(indexed.card.description)))
        expected.extend(
            (indexed.card.id, o.name, corpus.one_line(o.description or o.title or ""))
            for o in indexed.operations
        )
    assert [(e.app.id, e.tool, e.description) for e in map(built.entry, range(len(built)))] == expected
    with pytest.raises(IndexError):
        built.entry(-1)
