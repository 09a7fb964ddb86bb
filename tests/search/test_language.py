"""The language of a query or an app's description, told roughly: an app described in the
query's language (not English) gains a little, since people use the apps of their country."""

from __future__ import annotations

import pytest

from aai_gateway.search import SearchIndex
from aai_gateway.search.language import language_of

from .catalog import app, tool


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("where is my parcel", "en"),
        ("Wo ist mein Paket", "de"),
        ("Où est mon colis ?", "fr"),
        ("¿Dónde está mi paquete?", "es"),
        ("我的快递到哪了", "zh"),
        ("荷物はどこ？", "ja"),
        ("Paris Lyon", None),
    ],
)
def test_a_text_is_told_its_language_by_its_script_function_words_and_letters(
    text: str, language: str | None
) -> None:
    assert language_of(text) == language


def test_an_app_described_in_the_query_language_leads_an_equal_one_in_another() -> None:
    apps = [
        app(
            "rail-es",
            {"en": "Rail ES"},
            "Trenes: buscar trenes y comprar billetes",
            [tool("searchTrains", "Search trains")],
        ),
        app(
            "rail-fr",
            {"en": "Rail FR"},
            "Trains : rechercher un train et réserver un billet",
            [tool("searchTrains", "Search trains")],
        ),
    ]
    index = SearchIndex(apps)
    assert index.search("un train pour le week-end", 1)[0].app.id == "rail-fr"
    assert index.search("un tren para el fin de semana", 1)[0].app.id == "rail-es"
