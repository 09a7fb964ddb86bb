"""tools/list: the app entries the gateway lists, then `aai_search`, `web_discover` and `aai_exec`;
and `aai_search`'s result (its arguments: arguments.py).

The answer is built once per listing (the gateway makes a new `Listing` when its catalog or the
pinned web apps change) and kept: a client asking again and again costs nothing.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from ..search import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from ..service import Gateway, Listing
from ..service.naming import AAI_EXEC, AAI_SEARCH, WEB_DISCOVER
from ..service.search import SearchAnswer
from . import results

APP_ENTRY_ARGUMENTS = {
    "type": "object",
    "properties": {"operations": {"type": "array", "items": {"type": "string"}}},
}

INSTRUCTIONS = (
    "This gateway exposes applications. Each app_* tool returns that app's operation guide "
    "(its operations, parameters and an example call); read it, then call aai_exec with "
    '{"app": <app id>, "tool": <operation>, "args": {...}}. A big app\'s guide is an index '
    "that says how to get the details of the operations you need. When no app_* tool "
    "fits the task (with many apps installed only a few are listed), call aai_search with what "
    "the user wants to do or the app's name: it searches every app, in any language, and says "
    "what to call next. For a web service that is not installed, call web_discover with its URL "
    'or domain. Errors come back as {"error": {"code", "message", "data"}} and say how to fix '
    "the call."
)

SEARCH_RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "app": {"type": "string"},
                    "tool": {"type": ["string", "null"]},
                    "score": {"type": "number", "description": "Higher ranks first, within one answer"},
                    "description": {"type": "string"},
                },
                "required": ["app", "tool", "score", "description"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["results"],
}


def aai_search_tool(style: str, listing: Listing) -> types.Tool:
    unlisted = (
        "Most apps are not listed as tools: search them. "
        if listing.mode == "bounded"
        else "Use when no app_ tool fits. "
    )
    return types.Tool(
        name=AAI_SEARCH[style],
        description=(
            "Search every installed app (listed or not) and its operations, by task or name, in any "
            f"language. {unlisted}With app: that app's matching operations (blank query: all) with "
            "parameters and an example call."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to do, or an app or operation name"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
                "app": {"type": "string", "description": "Only this app's operations (an app id)"},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_OFFSET,
                    "default": 0,
                    "description": "Results to skip: the next page",
                },
            },
            "required": ["query"],
        },
        output_schema=SEARCH_RESULTS_SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def web_discover_tool(style: str) -> types.Tool:
    return types.Tool(
        name=WEB_DISCOVER[style],
        description=(
            "Discover a web app's guide. Use when the user mentions a web service that has no app_ entry "
            "and aai_search does not find. Supports URL, domain or a known app name."
        ),
        input_schema={
            "type": "object",
            "properties": {"url": {"type": "string", "description": "Web app URL, domain, or name"}},
            "required": ["url"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=True),
    )


def aai_exec_tool(style: str) -> types.Tool:
    return types.Tool(
        name=AAI_EXEC[style],
        description=(
            "Execute an app operation. Parameters: app, tool, args. Use after reading the app's guide."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "app": {"type": "string", "description": "App ID (or URL/domain for a web app)"},
                "tool": {"type": "string", "description": "Operation name from the guide"},
                "args": {"type": "object", "description": "Operation parameters, as the guide describes"},
            },
            "required": ["app", "tool"],
        },
        annotations=types.ToolAnnotations(destructive_hint=True, open_world_hint=True),
    )


def list_tools(gateway: Gateway) -> list[types.Tool]:
    """What tools/list answers now (built afresh; `ToolList` keeps it per listing)."""
    listing = gateway.listing
    apps = [
        types.Tool(
            name=entry.tool_name,
            description=entry.description,
            input_schema=APP_ENTRY_ARGUMENTS,
            annotations=types.ToolAnnotations(read_only_hint=True),  # reading a guide changes nothing
        )
        for entry in listing.entries
    ]
    style = gateway.tool_names
    return [*apps, aai_search_tool(style, listing), web_discover_tool(style), aai_exec_tool(style)]


class ToolList:
    """The tools/list answer, built once per listing of the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._for: Listing | None = None
        self._answer = types.ListToolsResult(tools=[])

    def answer(self) -> types.ListToolsResult:
        if self._for is not self.gateway.listing:
            self._answer = types.ListToolsResult(tools=list_tools(self.gateway))
            self._for = self.gateway.listing
        return self._answer

    def names(self) -> list[str]:
        return [tool.name for tool in self.answer().tools]


def search_result(answer: SearchAnswer) -> types.CallToolResult:
    """The answer as markdown text, and its results as `structuredContent`."""
    return results.markdown(answer.text).model_copy(update={"structured_content": answer.structured()})
