"""The description an imported server's descriptor gets from its tool snapshot: the server's
instructions, else its title and tools, else what the configuration says; cleaned and bounded
whatever the server sent."""

from __future__ import annotations

from typing import Any

from aai_gateway.discovery.mcp_snapshots import ServerInfo, Snapshot
from aai_gateway.importing.description import MAX_DESCRIPTION, describe_from_server

EXECUTION = {"type": "mcp", "command": "/opt/bin/mcp-server-time", "args": ["--local-timezone", "UTC"]}
FALLBACK = "MCP server time, runs mcp-server-time UTC"


def snapshot(
    tools: list[Any] | None = None, instructions: str | None = None, title: str | None = None
) -> Snapshot:
    server = ServerInfo("time-server", "1.0", title)
    return Snapshot("time", "file:/x/aai.json", "0" * 64, 0.0, server, instructions, tuple(tools or []), 0)


def test_without_a_snapshot_the_description_comes_from_the_configuration() -> None:
    assert describe_from_server("time", EXECUTION) == FALLBACK
    assert describe_from_server("time", EXECUTION, snapshot()) == FALLBACK


def test_the_first_sentence_of_the_instructions_describes_the_server_cleaned_of_hidden_characters() -> None:
    instructions = "# Time\n\nConverts\u202e times between\x1b[31m zones. Use IANA names.\nMore."

    assert describe_from_server("time", EXECUTION, snapshot(instructions=instructions)) == (
        "Converts times between zones."  # the text under the heading, not the heading
    )
    assert describe_from_server("time", EXECUTION, snapshot(instructions="# Time\n\n## Zones\n")) == "Time"


def test_without_instructions_the_tools_are_summarised_with_their_gist_after_the_title() -> None:
    tools = [
        {"name": "get_current_time", "description": "Get current time in a timezone. Uses IANA names."},
        {"name": "convert_time", "title": "Convert\u200f time", "description": "Long text"},
        {"$omitted": "larger than 256 KiB", "name": "huge"},
    ]

    assert describe_from_server("time", EXECUTION, snapshot(tools)) == (
        "Tools: get_current_time (Get current time in a timezone), convert_time (Convert time)"
    )
    assert describe_from_server("time", EXECUTION, snapshot(tools, title="Clock")) == (
        "Clock. Tools: get_current_time (Get current time in a timezone), convert_time (Convert time)"
    )


def test_many_tools_are_named_only_and_counted_within_the_length_limit() -> None:
    tools = [{"name": f"tool_number_{index}", "description": "x" * 300} for index in range(40)]

    described = describe_from_server("time", EXECUTION, snapshot(tools))

    assert len(described) <= MAX_DESCRIPTION
    assert described.startswith("Tools: tool_number_0, tool_number_1, ")
    assert described.endswith(" more")
    assert "(" not in described


def test_whatever_the_server_sends_the_description_is_one_bounded_line() -> None:
    hostile = "\u2066" + "A" * 5000 + "\n\x00\ud800"
    tools = [{"name": hostile, "description": hostile}, {"name": 7}, "not a tool"]

    for given in (snapshot(instructions=hostile), snapshot(tools, title=hostile)):
        described = describe_from_server("time", EXECUTION, given)
        assert len(described) <= MAX_DESCRIPTION
        assert described.isprintable()
