"""What one MCP server says of its tools, read within bounds, and its results checked against it.

`ServerTools.read` follows tools/list page after page until one more tool than the gateway keeps
(`MAX_TOOLS`: a snapshot then says how many from which are left out), more than
`MAX_LISTING_BYTES` of tool JSON, or a cursor that comes back as it was sent.

`ServerTools.check` stands in for the SDK session's `validate_tool_result` (the session calls it
after each successful tools/call): structured content must be there when the tool has an
`outputSchema`, and match it. The SDK checks with `jsonschema`, whose `pattern` is Python's `re`,
on the event loop: a server listing `"pattern": "^(a+)+$"` and answering forty `a`s and a `!`
froze the whole gateway for hours. `mcp_tools.structured_content_problem` checks with
jsonschema-rs, in time linear in the content, against the schema as the server last listed it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import mcp_types as types
from mcp import Client

from ..descriptor.mcp_tools import structured_content_problem
from ..descriptor.mcp_wire import MAX_TOOLS, MAX_TOOLS_BYTES

logger = logging.getLogger(__name__)

MAX_LISTING_BYTES: Final = 2 * MAX_TOOLS_BYTES
"""Tool JSON read from one server's tools/list before the rest is left unread: a snapshot keeps
`MAX_TOOLS_BYTES` (a tool too large to keep is a small placeholder), and a server whose pages
run to 4 MiB each would otherwise fill gigabytes of memory within the listing's timeout."""


class ServerTools:
    """The tools one server listed last, for `app_id`'s log lines."""

    def __init__(self, app_id: str) -> None:
        self.app_id = app_id
        self._output_schemas: dict[str, dict[str, Any] | None] = {}

    def noted(self, page: types.ListToolsResult) -> types.ListToolsResult:
        """`page`, its tools' output schemas noted."""
        for tool in page.tools:
            self._output_schemas[tool.name] = tool.output_schema
        return page

    async def read(self, client: Client) -> list[types.Tool]:
        """Every tool the server lists, within the bounds of the module doc."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        sent: set[str] = set()
        size = 0
        for _ in range(MAX_TOOLS + 1):  # pages of one tool or more; the execution's timeout bounds the rest
            page = self.noted(await client.list_tools(cursor=cursor))
            tools += page.tools
            size += sum(len(tool.model_dump_json(by_alias=True, exclude_none=True)) for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None or len(tools) > MAX_TOOLS:
                break
            if size > MAX_LISTING_BYTES or cursor in sent:
                why = (
                    f"ran to more than {MAX_LISTING_BYTES} bytes"
                    if size > MAX_LISTING_BYTES
                    else ("sent the cursor it was given again")
                )
                logger.warning(
                    "%s: the server's tools/list %s; its tools are taken as read so far (%d)",
                    self.app_id,
                    why,
                    len(tools),
                )
                break
            sent.add(cursor)
        return tools

    async def check(
        self, name: str, result: types.CallToolResult, relist: Callable[[], Awaitable[object]]
    ) -> None:
        """What the SDK's `validate_tool_result` does (RuntimeError for structured content that is
        missing or breaks the tool's output schema; `relist` first when the tool was not listed
        yet), in time linear in the content."""
        if name not in self._output_schemas:
            await relist()
            # still unlisted: no schema to hold it to, and no listing again at each of its results
            self._output_schemas.setdefault(name, None)
        schema = self._output_schemas.get(name)
        if schema is None:
            return
        if result.structured_content is None and "structured_content" not in result.model_fields_set:
            raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
        problem = structured_content_problem(schema, result.structured_content)
        if problem is not None:
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {problem}")
