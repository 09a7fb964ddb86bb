"""Results of an MCP server's tools checked against the output schemas it listed, without the
SDK's backtracking regexes, and without listing its tools again at every result."""

from __future__ import annotations

import mcp_types as types
import pytest

from aai_gateway.executors.mcp_tool_lists import ServerTools

pytestmark = pytest.mark.anyio

SHAPED = types.Tool(
    name="shaped",
    input_schema={"type": "object"},
    output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
)


def result(structured: dict[str, object] | None) -> types.CallToolResult:
    return types.CallToolResult(content=[], structured_content=structured)


async def test_a_result_of_a_tool_the_server_does_not_list_lists_its_tools_once_not_at_each_result() -> None:
    tools = ServerTools("dev.test.app")
    listings: list[int] = []

    async def relist() -> None:
        listings.append(1)

    for _ in range(3):
        await tools.check("unlisted", result({"anything": True}), relist)

    assert listings == [1]


async def test_a_result_is_held_to_the_output_schema_the_server_listed_last() -> None:
    tools = ServerTools("dev.test.app")
    tools.noted(types.ListToolsResult(tools=[SHAPED]))

    async def relist() -> None:
        raise AssertionError("the tool was listed: nothing to list again")

    await tools.check("shaped", result({"n": 1}), relist)
    with pytest.raises(RuntimeError, match="Invalid structured content returned by tool shaped: /n: "):
        await tools.check("shaped", result({"n": "one"}), relist)
    with pytest.raises(RuntimeError, match="did not return structured content"):
        await tools.check("shaped", types.CallToolResult(content=[]), relist)
