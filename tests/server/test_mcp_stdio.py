"""The gateway as an MCP client sees it: a real subprocess over stdio, both protocol generations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.server.conftest import connected

pytestmark = pytest.mark.anyio


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    payload: dict[str, Any] = json.loads(block.text)["error"]
    return payload


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_tools_list_shows_one_entry_per_runnable_app_and_the_three_universal_tools(
    gateway: Client,
) -> None:
    listed = await gateway.list_tools()
    names = [t.name for t in listed.tools]
    assert names == [
        "app_dev_test_adapter",
        "app_dev_test_offline",
        "app_dev_test_slow",
        "aai_search",
        "web_discover",
        "aai_exec",
    ]
    adapter = listed.tools[0]
    assert (
        adapter.description
        == "【Adapter|Adapter（中文）】Adapter for tests. Aliases: echo box. Call to get guide."
    )
    operations = {"type": "array", "items": {"type": "string"}}
    assert adapter.input_schema["properties"] == {"operations": operations}
    assert "required" not in adapter.input_schema  # the guide, unless operations are asked for
    exec_tool = listed.tools[-1]
    assert exec_tool.input_schema["required"] == ["app", "tool"]


async def test_colon_names_are_listed_on_request_and_seed_names_are_always_accepted(
    apps_dir: Path, mode: str
) -> None:
    async with connected(apps_dir, mode, "--tool-names", "colon") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        guide = await client.call_tool("app:dev.test.adapter", {})
    assert names == [
        "app:dev.test.adapter",
        "app:dev.test.offline",
        "app:dev.test.slow",
        "aai:search",
        "web:discover",
        "aai:exec",
    ]
    assert "# Adapter Operation Guide" in text_of(guide)


async def test_the_seed_names_are_accepted_in_tools_call_with_portable_names_listed(gateway: Client) -> None:
    result = await gateway.call_tool(
        "aai:exec", {"app": "dev.test.adapter", "tool": "echo", "args": {"text": "x"}}
    )
    assert not result.is_error
    assert "# Adapter Operation Guide" in text_of(await gateway.call_tool("app:dev.test.adapter", {}))


async def test_an_app_entry_returns_its_guide_and_aai_exec_runs_the_operation(gateway: Client) -> None:
    guide = text_of(await gateway.call_tool("app_dev_test_adapter", {}))
    result = await gateway.call_tool(
        "aai_exec", {"app": "dev.test.adapter", "tool": "echo", "args": {"text": 'héllo "quoted" $(x)'}}
    )
    assert "### echo" in guide and "aai_exec" in guide
    assert result.structured_content == {
        "tool": "echo",
        "params": {"text": 'héllo "quoted" $(x)', "count": 1},
    }
    assert json.loads(text_of(result)) == result.structured_content
    # compact JSON: indentation and spaces between tokens would only cost the agent's context
    assert text_of(result) == '{"tool":"echo","params":{"text":"héllo \\"quoted\\" $(x)","count":1}}'


async def test_apps_are_found_by_name_or_alias_too(gateway: Client) -> None:
    result = await gateway.call_tool("aai_exec", {"app": "echo box", "tool": "echo", "args": {"text": "a"}})
    assert result.structured_content is not None and result.structured_content["params"]["text"] == "a"


@pytest.mark.parametrize(
    ("call", "code", "detail"),
    [
        ({"app": "dev.test.nothing", "tool": "echo"}, "UNKNOWN_APP", "known apps: dev.test.adapter"),
        ({"app": "dev.test.slow", "tool": "sleep", "args": {"seconds": 30}}, "TIMEOUT", "within 500 ms"),
        ({"app": "dev.test.adapter", "tool": "nope"}, "UNKNOWN_TOOL", "its tools: echo, fail, sleep"),
        ({"app": "dev.test.adapter", "tool": "echo", "args": {"count": 0}}, "INVALID_PARAMS", "/count"),
        (
            {"app": "dev.test.adapter", "tool": "echo", "args": "text"},
            "INVALID_PARAMS",
            "args must be an object",
        ),
        ({"app": "dev.test.adapter"}, "INVALID_PARAMS", "'tool' must be a non-empty string"),
        ({"app": "dev.test.adapter", "tool": "fail", "args": {"id": 7}}, "NOT_FOUND", "no item 7"),
        ({"app": "dev.test.offline", "tool": "ping"}, "SERVICE_UNAVAILABLE", "dev.test.offline"),
        ({"app": "dev.test.bus", "tool": "ping"}, "NOT_IMPLEMENTED", "'dbus'"),
    ],
)
async def test_each_failure_is_a_tool_error_with_its_code_and_what_to_fix(
    gateway: Client, call: dict[str, Any], code: str, detail: str
) -> None:
    error = error_of(await gateway.call_tool("aai_exec", call))
    assert error["code"] == code
    assert detail in error["message"]


async def test_an_app_that_cannot_run_here_says_why_in_its_data(gateway: Client) -> None:
    error = error_of(await gateway.call_tool("aai_exec", {"app": "dev.test.bus", "tool": "ping"}))
    assert error["data"]["execution_type"] == "dbus"
    assert error["data"]["reason"].startswith("no session bus")


async def test_invalid_arguments_report_every_violation_with_its_path(gateway: Client) -> None:
    error = error_of(
        await gateway.call_tool(
            "aai_exec", {"app": "dev.test.adapter", "tool": "echo", "args": {"count": "2"}}
        )
    )
    assert [v["path"] for v in error["data"]["violations"]] == ["", "/count"]


async def test_an_unknown_mcp_tool_is_an_unknown_tool_error_listing_the_real_ones(gateway: Client) -> None:
    error = error_of(await gateway.call_tool("app_does_not_exist", {}))
    assert error["code"] == "UNKNOWN_TOOL"
    assert "aai_exec" in error["message"]


async def test_web_discover_finds_a_known_web_app_by_its_url(gateway: Client, shared_apps: Path) -> None:
    base_url = json.loads((shared_apps / "offline.json").read_text())["execution"]["baseUrl"]
    guide = await gateway.call_tool("web_discover", {"url": f"{base_url}/anything"})
    assert "Offline Operation Guide" in text_of(guide)


async def test_a_url_on_another_port_of_the_same_host_is_not_that_app(gateway: Client) -> None:
    # The port is part of the origin: another service on 127.0.0.1 is another app.
    error = error_of(await gateway.call_tool("aai_exec", {"app": "http://127.0.0.1:1/x", "tool": "t"}))
    assert error["code"] == "UNKNOWN_APP"


async def test_the_caller_name_reaches_every_call(gateway: Client, shared_apps: Path, mode: str) -> None:
    await gateway.call_tool("aai_exec", {"app": "dev.test.adapter", "tool": "echo", "args": {"text": "t"}})
    log = shared_apps.parent / f"gateway-{mode}.log"
    assert "exec caller='agent-x 1.0' app=dev.test.adapter tool=echo outcome=ok" in log.read_text()


async def test_a_name_shared_by_two_apps_is_refused_as_ambiguous(tmp_path: Path, mode: str) -> None:
    from tests.builders import write_json
    from tests.server.conftest import adapter_app

    for app_id in ("dev.test.one", "dev.test.two"):
        document = adapter_app(app_id)
        document["app"]["aliases"] = ["twin"]
        write_json(tmp_path / "apps" / f"{app_id}.json", document)
    async with connected(tmp_path / "apps", mode) as client:
        error = error_of(
            await client.call_tool("aai_exec", {"app": "twin", "tool": "echo", "args": {"text": "x"}})
        )
    assert error["code"] == "UNKNOWN_APP"
    assert [c["app"] for c in error["data"]["candidates"]] == ["dev.test.one", "dev.test.two"]
    for candidate in error["data"]["candidates"]:  # each named by the reference that finds only it
        assert candidate["reference"] == f"file:{tmp_path / 'apps' / candidate['app']}.json"
        assert candidate["reference"] in error["message"]


async def test_aai_gateway_without_a_command_is_the_mcp_server(apps_dir: Path, mode: str) -> None:
    import sys

    from mcp import StdioServerParameters

    bare = StdioServerParameters(
        command=sys.executable, args=["-m", "aai_gateway", "--no-default-paths", "--path", str(apps_dir)]
    )
    async with Client(bare, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names[-2:] == ["web_discover", "aai_exec"]


async def test_an_answer_nested_deeper_than_the_limit_fails_cleanly_and_the_next_call_works(
    tmp_path: Path, mode: str
) -> None:
    from tests.builders import trusting_config, write_json
    from tests.server.conftest import adapter_app

    document = adapter_app("dev.test.deep")
    depth_schema = {"type": "object", "properties": {"depth": {"type": "integer"}}}
    document["tools"].append({"name": "nested", "description": "Nested arrays", "parameters": depth_schema})
    write_json(tmp_path / "apps" / "deep.json", document)
    trusting_config(tmp_path / "config.toml", ["dev.test.deep"])

    async def nested(client: Client, depth: int) -> types.CallToolResult:
        arguments = {"app": "dev.test.deep", "tool": "nested", "args": {"depth": depth}}
        return await client.call_tool("aai_exec", arguments)

    async with connected(tmp_path / "apps", mode) as client:
        too_deep = await nested(client, 300)  # parses, but is too deep to travel back as JSON-RPC
        deepest_allowed = await nested(client, 99)  # 100 levels with the object around it
        echo = await client.call_tool(
            "aai_exec", {"app": "dev.test.deep", "tool": "echo", "args": {"text": "x"}}
        )

    error = error_of(too_deep)
    assert error["code"] == "EXECUTION_FAILED"
    assert error["message"].startswith(
        "dev.test.deep nested: the app's answer is nested deeper than 100 levels"
    )
    assert json.loads(text_of(deepest_allowed)) == {"nested": json.loads("[" * 99 + "]" * 99)}
    assert json.loads(text_of(echo))["params"] == {"text": "x", "count": 1}
