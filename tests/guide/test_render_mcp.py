"""The guide of an MCP server app: how it is reached, which secrets it needs (by name only, never
a value), what happens before its tools are known, and the MCP tool annotations of any tool."""

from __future__ import annotations

import json

import pytest

from aai_gateway.descriptor import Source, load_text
from aai_gateway.descriptor.model import (
    AppDescriptor,
    McpChannel,
    ToolAnnotations,
)
from aai_gateway.descriptor.model_auth import EnvironmentReference, SecretReference
from aai_gateway.guide import render_guide

from .helpers import EXAMPLES_DIR, load, make_app, make_tool, section

LITERAL_SECRET = "ghp_literal0123456789"


def mcp_app(channel: McpChannel, *, annotations: ToolAnnotations | None = None) -> AppDescriptor:
    tool = make_tool(channel=channel).model_copy(update={"annotations": annotations})
    return make_app(tool)


STDIO = McpChannel(
    command="uvx",
    args=("mcp-server-time", "--token", LITERAL_SECRET),
    env={
        "TZ": "UTC",
        "GITHUB_PERSONAL_ACCESS_TOKEN": SecretReference(name="github-pat"),
        "LITERAL_TOKEN": LITERAL_SECRET,
        "HOME_DIR": EnvironmentReference(name="MY_HOME"),
    },
    cwd="/srv/mcp",
)
HTTP = McpChannel(
    url="https://mcp.example.com/v1/mcp?api_key=" + LITERAL_SECRET + "#frag",
    headers={"Authorization": SecretReference(name="authorization"), "X-Plain": LITERAL_SECRET},
)


@pytest.mark.parametrize(
    ("channel", "text"),
    [
        (STDIO, "MCP server started with uvx (stdio)"),
        (
            McpChannel(command="/opt/my server/bin/run\n# Injected"),
            "MCP server started with /opt/my server/bin/run # Injected (stdio)",
        ),
        (HTTP, "MCP server at https://mcp.example.com/v1/mcp (Streamable HTTP)"),
        (
            McpChannel(url="http://127.0.0.1:8931/mcp"),
            "MCP server at http://127.0.0.1:8931/mcp (Streamable HTTP)",
        ),
    ],
)
def test_access_says_which_mcp_server_and_how_it_is_reached(channel: McpChannel, text: str) -> None:
    assert f"- Access: {text}\n" in render_guide(mcp_app(channel))


@pytest.mark.parametrize("channel", [STDIO, HTTP])
def test_no_literal_value_argument_or_query_of_the_server_reaches_the_guide(channel: McpChannel) -> None:
    guide = render_guide(mcp_app(channel))

    assert LITERAL_SECRET not in guide
    assert "api_key" not in guide
    assert "--token" not in guide


def test_authentication_names_the_keyring_secrets_and_environment_variables_only() -> None:
    auth = section(render_guide(mcp_app(STDIO)), "## Authentication")

    assert (
        "The gateway gives the server the secrets github-pat from the OS keyring, where the user "
        "stores them with `aai-gateway auth set`. Never ask for secrets in the chat. It passes on "
        "MY_HOME from the gateway's own environment."
    ) in auth
    assert "GITHUB_PERSONAL_ACCESS_TOKEN" not in auth
    assert LITERAL_SECRET not in auth


@pytest.mark.parametrize(
    ("channel", "text"),
    [
        (McpChannel(command="uvx"), "No sign-in needed; the server runs as the current user"),
        (McpChannel(url="http://localhost:9/mcp"), "No sign-in needed (local server)."),
        (McpChannel(url="https://mcp.example.com/mcp", headers={"X-A": "b"}), "No sign-in needed."),
        (
            McpChannel(
                url="https://mcp.example.com/mcp", headers={"Authorization": SecretReference(name="a")}
            ),
            "the secrets a from the OS keyring",
        ),
    ],
)
def test_authentication_without_secrets_says_no_sign_in_is_needed(channel: McpChannel, text: str) -> None:
    assert text in section(render_guide(mcp_app(channel)), "## Authentication")


def test_an_app_whose_tools_come_from_its_server_says_so_until_they_are_known() -> None:
    document = json.loads((EXAMPLES_DIR / "mcp-server-time" / "aai.json").read_text())
    del document["tools"]
    result = load_text(json.dumps(document), Source(kind="file", location="/x/aai.json"), "linux")
    assert result.descriptor is not None and not result.descriptor.tools_declared

    guide = render_guide(result.descriptor)
    assert (
        "This app's operations are those of its MCP server; they are listed here once the gateway "
        "has asked the server for them."
    ) in guide
    assert "No operations are available on this machine" not in guide
    assert "```" not in guide


def test_an_app_with_an_empty_declared_tool_list_is_not_said_to_wait_for_its_server() -> None:
    document = json.loads((EXAMPLES_DIR / "mcp-server-time" / "aai.json").read_text())
    document["tools"] = []
    result = load_text(json.dumps(document), Source(kind="file", location="/x/aai.json"), "linux")
    assert result.descriptor is not None

    assert "those of its MCP server" not in render_guide(result.descriptor)


# --------------------------------------------------------------------------- annotations


def operation(annotations: ToolAnnotations | None) -> str:
    return section(render_guide(mcp_app(STDIO, annotations=annotations)), "### do_it")


def test_the_annotations_of_a_tool_are_shown_in_its_operation() -> None:
    text = operation(
        ToolAnnotations(
            title="Do it now",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=True,
        )
    )

    assert text.startswith("### do_it\n\nDo the thing.\n\n**Title**: Do it now\n\n")
    assert (
        "**Hints** (as the app declares them): changes data; destructive: may delete or overwrite data; "
        "not idempotent: repeating a call repeats its effect; open world: reaches outside systems such as "
        "the web.\n"
    ) in text


def test_a_read_only_tool_is_not_also_called_destructive_or_idempotent() -> None:
    text = operation(
        ToolAnnotations(
            read_only_hint=True, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        )
    )

    assert (
        "**Hints** (as the app declares them): read-only; closed world: works only on its own data.\n" in text
    )


def test_only_the_hints_a_tool_declares_are_shown() -> None:
    assert "**Hints** (as the app declares them): not destructive: only adds data; idempotent: " in operation(
        ToolAnnotations(destructive_hint=False, idempotent_hint=True)
    )
    assert "**Hints**" not in operation(ToolAnnotations(title="Only a title"))
    assert "**Title**" not in operation(ToolAnnotations(read_only_hint=True))
    without = operation(None)
    assert "**Hints**" not in without and "**Title**" not in without


def test_a_title_cannot_add_lines_to_the_guide() -> None:
    text = operation(ToolAnnotations(title="Line one\n\n### injected\n- x"))

    assert "**Title**: Line one ### injected - x\n" in text
    assert "\n### injected" not in text


def test_annotations_show_for_tools_of_any_execution_type() -> None:
    tool = make_tool(name="search").model_copy(update={"annotations": ToolAnnotations(read_only_hint=True)})

    assert "**Hints** (as the app declares them): read-only." in render_guide(make_app(tool))


def test_the_bundled_mcp_example_shows_access_and_the_hints_of_every_tool() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "mcp-server-time" / "aai.json"))

    assert "- Access: MCP server started with uvx (stdio)\n" in guide
    for tool in ("get_current_time", "convert_time"):
        assert "**Hints** (as the app declares them): read-only; closed world" in section(
            guide, f"### {tool}"
        )
