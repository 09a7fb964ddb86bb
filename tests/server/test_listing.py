"""tools/list as the server builds it: bounded at any number of apps, and built once per listing."""

from __future__ import annotations

import mcp_types as types

from aai_gateway.consent.listing_config import ListingConfig
from aai_gateway.server.listing import ToolList, list_tools
from tests.service.apps import catalog_of, gateway_of, http_app, many_apps

TWO_THOUSAND_TOKENS = 8_000  # characters / 4, like bench/context_cost.py


def wire_bytes(tools: list[types.Tool]) -> int:
    """The tools/list result as it goes to the client (UTF-8 JSON, camelCase, no nulls)."""
    return len(types.ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True).encode())


def test_at_ten_thousand_apps_tools_list_stays_under_two_thousand_tokens_even_with_many_pins() -> None:
    apps = many_apps(10_000)
    hostile = [
        http_app(f"dev.test.pinned{i:02d}", name="N" * 200, description="A long description. " * 5_000)
        for i in range(30)
    ]
    pins = tuple(app.id for app in hostile)
    gateway = gateway_of([*apps, *hostile], ListingConfig(pinned=pins))

    listed = list_tools(gateway)

    assert gateway.listing.mode == "bounded"
    assert wire_bytes(listed) < TWO_THOUSAND_TOKENS
    names = [tool.name for tool in listed]
    assert names[-3:] == ["aai_search", "web_discover", "aai_exec"]
    assert 0 < len(names) - 3 < len(pins)  # some pins fit; the rest are reported (Listing.left_out)


def test_without_pins_a_bounded_list_holds_the_universal_tools_only() -> None:
    gateway = gateway_of(many_apps(10_000))
    assert [tool.name for tool in list_tools(gateway)] == ["aai_search", "web_discover", "aai_exec"]


def test_the_tools_list_answer_is_built_once_per_listing() -> None:
    gateway = gateway_of(many_apps(3))
    answers = ToolList(gateway)
    first = answers.answer()
    assert answers.answer() is first
    gateway.set_catalog(catalog_of(many_apps(4)))
    assert answers.answer() is not first
    assert len(answers.answer().tools) == 4 + 3
