"""tools/list: one entry per app plus the two universal tools, in a deterministic order."""

from __future__ import annotations

import mcp_types as types

from ..service import Gateway
from ..service.naming import AAI_EXEC, WEB_DISCOVER

NO_ARGUMENTS = {"type": "object", "properties": {}}

INSTRUCTIONS = (
    "This gateway exposes applications. Each app_* tool returns that app's operation guide "
    "(its operations, parameters and an example call); read it, then call aai_exec with "
    '{"app": <app id>, "tool": <operation>, "args": {...}}. For a web service that is not '
    "listed, call web_discover with its URL or domain. Errors come back as "
    '{"error": {"code", "message", "data"}} and say how to fix the call.'
)


def web_discover_tool(style: str) -> types.Tool:
    return types.Tool(
        name=WEB_DISCOVER[style],
        description=(
            "Discover a web app's guide. Use when the user mentions a web service that has no app_ entry. "
            "Supports URL, domain or a known app name."
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
    apps = [
        types.Tool(
            name=entry.tool_name,
            description=entry.description,
            input_schema=NO_ARGUMENTS,
            annotations=types.ToolAnnotations(read_only_hint=True),  # reading a guide changes nothing
        )
        for entry in gateway.entries
    ]
    return [*apps, web_discover_tool(gateway.tool_names), aai_exec_tool(gateway.tool_names)]
