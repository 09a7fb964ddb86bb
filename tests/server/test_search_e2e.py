"""aai_search and app entries with `operations`, as an MCP client sees them: a real gateway
process over stdio, both protocol generations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from aai_gateway.guide import GUIDE_MAX_CHARS
from tests.builders import write_json
from tests.server.conftest import adapter_app, big_app, connected, listing_config

pytestmark = pytest.mark.anyio


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    payload: dict[str, Any] = json.loads(block.text)["error"]
    return payload


async def test_aai_search_is_listed_with_its_output_schema(gateway: Client) -> None:
    listed = {tool.name: tool for tool in (await gateway.list_tools()).tools}
    search = listed["aai_search"]
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert search.output_schema is not None
    item = search.output_schema["properties"]["results"]["items"]
    assert sorted(item["required"]) == ["app", "description", "score", "tool"]


async def test_aai_search_answers_readable_text_and_results_with_exactly_four_keys(gateway: Client) -> None:
    result = await gateway.call_tool("aai_search", {"query": "echo the arguments", "limit": 3})

    text = text_of(result)
    assert result.structured_content is not None
    results = result.structured_content["results"]
    assert 1 <= len(results) <= 3
    assert all(set(r) == {"app", "tool", "score", "description"} for r in results)
    echo = next(r for r in results if r["tool"] == "echo")
    assert echo["app"] in ("dev.test.adapter", "dev.test.slow")
    assert echo["description"] == "Return the arguments" and isinstance(echo["score"], int | float)
    assert f'aai_search({{"app": "{echo["app"]}", "query": "echo", "limit": 1}})' in text


async def test_aai_search_with_an_app_gives_the_details_of_its_matching_operations(gateway: Client) -> None:
    result = await gateway.call_tool("aai_search", {"query": "", "app": "echo box"})

    text = text_of(result)
    assert result.structured_content is not None
    assert [r["tool"] for r in result.structured_content["results"]] == ["echo", "fail", "sleep"]
    assert "### echo" in text and "- text (string, required)" in text
    assert 'aai_exec({"app": "dev.test.adapter", "tool": "echo", "args": {"text": ' in text


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({}, "/query"),
        ({"query": 3}, "/query"),
        ({"query": "  "}, "/query"),
        ({"query": "x", "limit": 0}, "/limit"),
        ({"query": "x", "limit": 51}, "/limit"),
        ({"query": "x", "limit": "5"}, "/limit"),
        ({"query": "x", "limit": True}, "/limit"),
        ({"query": "x", "app": ""}, "/app"),
        ({"query": "x", "offset": -1}, "/offset"),
        ({"query": "x", "offset": 10_001}, "/offset"),
        ({"query": "x", "offset": 1.5}, "/offset"),
        ({"query": "x", "offset": False}, "/offset"),
        ({"query": " <what you want to do> ", "app": "dev.test.adapter"}, "/query"),
    ],
)
async def test_bad_search_arguments_are_invalid_params_naming_the_argument(
    gateway: Client, arguments: dict[str, Any], path: str
) -> None:
    error = error_of(await gateway.call_tool("aai_search", arguments))
    assert error["code"] == "INVALID_PARAMS"
    assert [v["path"] for v in error["data"]["violations"]] == [path]
    assert f"argument '{path[1:]}'" in error["message"]


async def test_an_app_entry_with_operations_gives_only_their_details(gateway: Client) -> None:
    text = text_of(await gateway.call_tool("app_dev_test_adapter", {"operations": ["sleep"]}))
    assert "### sleep" in text and "### echo" not in text
    assert "- seconds (number, optional)" in text


async def test_unknown_operations_are_unknown_tool_naming_the_app_and_the_closest_names(
    gateway: Client,
) -> None:
    error = error_of(await gateway.call_tool("app_dev_test_adapter", {"operations": ["echo", "slep"]}))
    assert error["code"] == "UNKNOWN_TOOL"
    assert error["data"]["app"] == "dev.test.adapter" and error["data"]["tools"] == ["slep"]
    assert error["data"]["close_matches"] == {"slep": ["sleep"]}


async def test_operations_that_are_not_a_list_of_names_are_invalid_params(gateway: Client) -> None:
    for operations, path in (("echo", "/operations"), (["echo", 7], "/operations/1")):
        error = error_of(await gateway.call_tool("app_dev_test_adapter", {"operations": operations}))
        assert error["code"] == "INVALID_PARAMS"
        assert error["data"]["violations"][0]["path"] == path


async def test_above_max_apps_the_pinned_apps_are_listed_and_the_others_stay_callable(
    apps_dir: Path, mode: str
) -> None:
    listing_config(apps_dir, '[listing]\nmax_apps = 2\npinned = ["dev.test.adapter"]\n')
    async with connected(apps_dir, mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        guide = text_of(await client.call_tool("app_dev_test_offline", {}))
        found = await client.call_tool("aai_search", {"query": "Offline"})
    assert names == ["app_dev_test_adapter", "aai_search", "web_discover", "aai_exec"]
    assert "# Offline Operation Guide" in guide
    assert found.structured_content is not None
    assert found.structured_content["results"][0]["app"] == "dev.test.offline"
    assert 'aai_search({"app": "dev.test.offline", "query": ""})' in text_of(found)


async def test_mistakes_in_the_listing_table_are_logged_and_never_stop_the_server(
    apps_dir: Path, mode: str
) -> None:
    listing_config(apps_dir, '[listing]\nmax_apps = "few"\npinned = ["dev.test.nowhere"]\n')
    log = apps_dir.parent / "gateway.log"
    async with connected(apps_dir, mode, "--log-file", str(log)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "app_dev_test_adapter" in names  # the default threshold: every app listed
    text = log.read_text(encoding="utf-8")
    assert "listing.max_apps: must be a whole number from 0 to 100000" in text
    assert "pinned but not an app listed here: dev.test.nowhere" in text


async def test_a_pinned_app_that_is_not_runnable_here_is_reported_as_not_listed(
    apps_dir: Path, mode: str
) -> None:
    write_json(apps_dir / "more.json", adapter_app("dev.test.more"))
    listing_config(apps_dir, '[listing]\nmax_apps = 1\npinned = ["dev.test.bus", "dev.test.more"]\n')
    log = apps_dir.parent / "gateway.log"
    async with connected(apps_dir, mode, "--log-file", str(log)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["app_dev_test_more", "aai_search", "web_discover", "aai_exec"]
    assert "pinned but not an app listed here: dev.test.bus" in log.read_text(encoding="utf-8")


async def test_a_bounded_gateway_builds_its_search_index_once_the_client_has_its_first_answer(
    apps_dir: Path, mode: str
) -> None:
    listing_config(apps_dir, "[listing]\nmax_apps = 1\n")
    log = apps_dir.parent / "gateway.log"
    async with connected(apps_dir, mode, "--log-level", "INFO", "--log-file", str(log)) as client:
        await client.list_tools()
        with anyio.fail_after(60):  # not a speed check: the build is in the background
            while "search index of" not in log.read_text(encoding="utf-8"):  # noqa: ASYNC110 (another process)
                await anyio.sleep(0.05)
        found = await client.call_tool("aai_search", {"query": "Offline"})
    assert re.search(r"search index of \d+ apps ready in \d+\.\d s", log.read_text(encoding="utf-8"))
    assert found.structured_content is not None
    assert found.structured_content["results"][0]["app"] == "dev.test.offline"


async def test_a_150_operation_app_answers_an_index_and_the_details_of_the_operations_asked_for(
    apps_dir: Path, mode: str
) -> None:
    write_json(apps_dir / "big.json", big_app(150))
    async with connected(apps_dir, mode) as client:
        guide = text_of(await client.call_tool("app_dev_test_big", {}))
        details = text_of(await client.call_tool("app_dev_test_big", {"operations": ["op_149", "op_007"]}))
        found = await client.call_tool("aai_search", {"query": "op_042", "app": "dev.test.big", "limit": 1})
    assert len(guide) <= GUIDE_MAX_CHARS
    assert "This app has 150 operations" in guide and "- `op_149`: Operation 149: does one thing." in guide
    assert 'app_dev_test_big({"operations": ["op_000", "op_001"]})' in guide
    assert details.index("### op_149") < details.index("### op_007")
    assert "- target (string, required): What it acts on" in details
    assert 'aai_exec({"app": "dev.test.big", "tool": "op_007", "args": {"target": ' in details
    assert found.structured_content is not None
    assert [r["tool"] for r in found.structured_content["results"]] == ["op_042"]
    assert "### op_042" in text_of(found)


async def test_pages_of_results_say_where_they_are_and_how_to_read_on(gateway: Client) -> None:
    first = await gateway.call_tool("aai_search", {"query": "echo", "limit": 1})
    second = await gateway.call_tool("aai_search", {"query": "echo", "limit": 1, "offset": 1})
    past = await gateway.call_tool("aai_search", {"query": "echo", "offset": 1000})

    assert 'More follow: call aai_search again as before, with {"offset": 1}.' in text_of(first)
    assert text_of(second).startswith('Apps and operations matching "echo", best first, 2:')
    assert "\n2. `" in text_of(second)
    assert text_of(past) == 'No more results for "echo" after the first 1000.\n'
    assert past.structured_content == {"results": []}


async def test_an_app_that_is_not_listed_is_read_page_by_page_through_aai_search_alone(
    apps_dir: Path, mode: str
) -> None:
    """Clients may refuse to call a tool tools/list does not list: nothing points to one."""
    write_json(apps_dir / "big.json", big_app(150))
    listing_config(apps_dir, '[listing]\nmax_apps = 1\npinned = ["dev.test.adapter"]\n')
    async with connected(apps_dir, mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        guide = text_of(await client.call_tool("app_dev_test_big", {}))
        first = await client.call_tool("aai_search", {"query": "", "app": "dev.test.big"})
        last = await client.call_tool("aai_search", {"query": "", "app": "dev.test.big", "offset": 140})
        named = await client.call_tool("aai_search", {"query": "op_149 op_007", "app": "dev.test.big"})
    assert "app_dev_test_big" not in names and "app_dev_test_big" not in guide
    assert 'aai_search({"app": "dev.test.big", "query": "op_000 op_001", "limit": 2})' in guide
    assert first.structured_content is not None and last.structured_content is not None
    assert [r["tool"] for r in first.structured_content["results"]] == [f"op_{i:03d}" for i in range(10)]
    assert "# Big (dev.test.big): operations 1-10 of 150" in text_of(first)
    assert 'with {"offset": 10}.' in text_of(first)
    assert [r["tool"] for r in last.structured_content["results"]] == [f"op_{i:03d}" for i in range(140, 150)]
    assert "operations 141-150 of 150" in text_of(last) and "More follow" not in text_of(last)
    assert named.structured_content is not None
    assert [r["tool"] for r in named.structured_content["results"]][:2] == ["op_149", "op_007"]
