"""Execution type `mcp` (dialect C): an MCP server as an app, started over stdio or reached over
Streamable HTTP. Its transport rules, the `platform` and `tools` it may leave out, the canonical
channel it becomes, tool annotations, and the editor schema.

Each rule is broken alone in a valid descriptor (`helpers.valid_mcp`) and reported at its
pointer; env and header values are in test_mcp_values.py.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest
from pydantic import ValidationError

from aai_gateway.descriptor import ExecutionType, Platform
from aai_gateway.descriptor.model import (
    McpChannel,
    ToolAnnotations,
)
from aai_gateway.descriptor.model_auth import EnvironmentReference, SecretReference
from aai_gateway.descriptor.schema_export import descriptor_json_schema

from .helpers import (
    DELETE,
    JsonDict,
    load,
    rendered,
    search_tool_parameters,
    valid_a,
    valid_b,
    valid_c,
    valid_mcp,
    with_changes,
)
from .test_validation_rules import rejected_at


def mcp_tool(**extra: Any) -> JsonDict:
    return {"name": "search", "description": "Search", "parameters": search_tool_parameters(), **extra}


def test_the_two_starting_points_load_without_any_problem() -> None:
    for transport in ("stdio", "http"):
        result = load(valid_mcp(transport))
        assert result.descriptor is not None, rendered(result)
        assert result.problems == [], rendered(result)


# --------------------------------------------------------------------------- normalization


def test_a_server_started_over_stdio_becomes_an_mcp_channel_with_typed_env_values() -> None:
    descriptor = load(valid_mcp()).descriptor
    assert descriptor is not None

    [section] = [s for s in descriptor.sections if s.platform == "linux"]
    assert section.declared_type == "mcp"
    assert section.channel == McpChannel(
        command="uvx",
        args=("mcp-server-time",),
        cwd="/abs/dir",
        env={
            "TZ": "UTC",
            "GITHUB_TOKEN": SecretReference(name="GITHUB_TOKEN"),
            "OTHER": EnvironmentReference(name="MY_VAR"),
        },
        timeout_ms=60000,
    )
    assert section.channel.type is ExecutionType.MCP
    assert section.channel.transport == "stdio"
    assert section.channel.secret_names == ("GITHUB_TOKEN",)
    assert section.channel.environment_names == ("MY_VAR",)


def test_a_server_at_a_url_becomes_an_mcp_channel_with_typed_header_values() -> None:
    descriptor = load(valid_mcp("http")).descriptor
    assert descriptor is not None

    channel = descriptor.sections[0].channel
    assert channel == McpChannel(
        url="https://mcp.example.com/mcp",
        headers={"Authorization": SecretReference(name="authorization"), "X-Plain": "value"},
    )
    assert isinstance(channel, McpChannel)
    assert channel.transport == "streamable-http"
    assert channel.secret_names == ("authorization",)
    assert channel.command is None and channel.args == () and channel.env == {}


def test_the_canonical_channel_round_trips_through_json() -> None:
    for transport in ("stdio", "http"):
        descriptor = load(valid_mcp(transport)).descriptor
        assert descriptor is not None
        dumped = json.loads(json.dumps(descriptor.model_dump(mode="json")))
        assert type(descriptor).model_validate(dumped) == descriptor
    assert dumped["sections"][0]["channel"]["headers"]["Authorization"] == {
        "kind": "secret",
        "name": "authorization",
    }


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({}, "either a command or a url"),
        ({"command": "x", "url": "https://x"}, "either a command or a url"),
        ({"url": "https://x", "env": {"A": "1"}}, "args, env and cwd"),
        ({"url": "https://x", "cwd": "/"}, "args, env and cwd"),
        ({"command": "x", "headers": {"A": "1"}}, "headers belong"),
    ],
)
def test_the_canonical_channel_holds_one_transport_and_only_its_fields(fields: JsonDict, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        McpChannel(**fields)


@pytest.mark.parametrize("host", ["linux", "macos", "windows"])
def test_without_platform_the_file_declares_every_desktop_and_is_active_on_the_host(host: Platform) -> None:
    descriptor = load(with_changes(valid_mcp(), ("/tools", [mcp_tool()])), host).descriptor
    assert descriptor is not None

    assert descriptor.declared_platforms == ("macos", "linux", "windows")
    assert descriptor.platform == host
    assert [t.name for t in descriptor.tools] == ["search"]
    assert all(s.tools == descriptor.tools for s in descriptor.sections)


@pytest.mark.parametrize("host", ["android", "ios", "web"])
def test_without_platform_nothing_is_active_where_no_program_can_be_started(host: Platform) -> None:
    descriptor = load(with_changes(valid_mcp(), ("/tools", [mcp_tool()])), host).descriptor
    assert descriptor is not None

    assert descriptor.platform is None
    assert descriptor.tools == ()


@pytest.mark.parametrize("platform", ["linux", "macos", "windows"])
def test_with_a_platform_the_file_is_for_that_platform_only(platform: str) -> None:
    document = with_changes(valid_mcp(), ("/platform", platform), ("/tools", [mcp_tool()]))
    descriptor = load(document, "linux").descriptor
    assert descriptor is not None

    assert descriptor.declared_platforms == (platform,)
    assert descriptor.platform == platform


def test_without_tools_the_tools_are_left_to_the_server_not_declared_empty() -> None:
    undeclared = load(valid_mcp()).descriptor
    declared_empty = load(with_changes(valid_mcp(), ("/tools", []))).descriptor
    assert undeclared is not None and declared_empty is not None

    assert undeclared.tools == () and undeclared.tools_declared is False
    assert declared_empty.tools == () and declared_empty.tools_declared is True
    assert load(valid_c("web")).descriptor.tools_declared is True  # type: ignore[union-attr]


def test_tool_annotations_are_kept_on_the_canonical_tool_for_any_execution_type() -> None:
    annotations = {"title": "Find", "readOnlyHint": True, "openWorldHint": False}
    for document in (
        with_changes(valid_mcp(), ("/tools", [mcp_tool(annotations=annotations)])),
        with_changes(valid_c("web"), ("/tools/0/annotations", annotations)),
    ):
        descriptor = load(document).descriptor
        assert descriptor is not None, rendered(load(document))
        assert descriptor.tools[0].annotations == ToolAnnotations(
            title="Find", read_only_hint=True, open_world_hint=False
        )
    assert load(valid_c("web")).descriptor.tools[0].annotations is None  # type: ignore[union-attr]


def test_declared_tools_keep_parameters_and_returns_as_for_every_type() -> None:
    returns = {"type": "object", "properties": {"datetime": {"type": "string"}}}
    descriptor = load(with_changes(valid_mcp(), ("/tools", [mcp_tool(returns=returns)]))).descriptor
    assert descriptor is not None

    [tool] = descriptor.tools
    assert tool.parameters == search_tool_parameters()
    assert tool.returns == returns
    assert tool.call is None
    assert tool.effective_timeout_ms == 60000


# --------------------------------------------------------------------------- transport rules


def test_neither_command_nor_url_is_an_error_at_the_execution() -> None:
    document = with_changes(valid_mcp("http"), ("/execution/url", DELETE), ("/execution/headers", DELETE))

    rejected_at(document, "/execution", "needs command", "or url")


def test_both_command_and_url_is_an_error_at_the_url() -> None:
    document = with_changes(valid_mcp(), ("/execution/url", "https://mcp.example.com/mcp"))

    message = rejected_at(document, "/execution/url", "not both")
    assert message == (
        "execution type 'mcp' takes command (a server started over stdio) or url (a Streamable "
        "HTTP server), not both; keep one"
    )


@pytest.mark.parametrize(("field", "value"), [("args", ["--x"]), ("env", {"TZ": "UTC"}), ("cwd", "/srv")])
def test_a_stdio_field_with_a_url_is_an_error(field: str, value: Any) -> None:
    document = with_changes(valid_mcp("http"), (f"/execution/{field}", value))

    message = rejected_at(document, f"/execution/{field}")
    assert message == f"{field} applies to an MCP server started with command, not to one at a url"


def test_headers_with_a_command_are_an_error() -> None:
    document = with_changes(valid_mcp(), ("/execution/headers", {"X": "y"}))

    rejected_at(document, "/execution/headers", "headers apply to an MCP server at a url")


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.com/mcp",
        "https://mcp.example.com:8443/v1/mcp?tenant=a",
        "http://127.0.0.1:8080/mcp",
        "http://[::1]:8080/mcp",
        "http://localhost/mcp",
        "http://LOCALHOST:9/mcp",
    ],
)
def test_an_https_url_or_a_plain_http_url_to_this_computer_is_accepted(url: str) -> None:
    result = load(with_changes(valid_mcp("http"), ("/execution/url", url)))

    assert result.descriptor is not None, rendered(result)
    assert result.problems == []


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://mcp.example.com/mcp", "must be https://: plain http:// is only allowed to this computer"),
        ("http://127.0.0.2/mcp", "must be https://"),
        ("http://localhost.example.com/mcp", "must be https://"),
        ("file:///usr/bin/server", "must be an absolute https:// URL"),
        ("ftp://mcp.example.com/mcp", "must be an absolute https:// URL"),
        ("ws://mcp.example.com/mcp", "must be an absolute https:// URL"),
        ("mcp.example.com/mcp", "must be an absolute https:// URL"),
        ("https:///mcp", "must be an absolute https:// URL"),
        ("", "must be an absolute https:// URL"),
        ("http://[::1/mcp", "is not a valid URL"),
        ("https://mcp.example.com:99999/mcp", "is not a valid URL"),
    ],
)
def test_a_url_that_is_not_https_or_local_http_is_an_error(url: str, says: str) -> None:
    rejected_at(with_changes(valid_mcp("http"), ("/execution/url", url)), "/execution/url", says)


@pytest.mark.parametrize(
    "url",
    ["https://user:hunter2@mcp.example.com/mcp", "https://hunter2@mcp.example.com/", "ftp://u:hunter2@x/"],
)
def test_credentials_in_the_url_are_an_error_that_does_not_repeat_them(url: str) -> None:
    message = rejected_at(with_changes(valid_mcp("http"), ("/execution/url", url)), "/execution/url")

    assert message.startswith("url must not carry credentials (user:password@); send them as a header")
    assert "hunter2" not in message


def test_a_secret_looking_query_parameter_in_the_url_is_a_warning() -> None:
    document = with_changes(
        valid_mcp("http"), ("/execution/url", "https://mcp.example.com/mcp?api_key=s3cr3t&x=1")
    )
    result = load(document)

    assert result.descriptor is not None
    [warning] = result.warnings
    assert warning.pointer == "/execution/url"
    assert "query parameter 'api_key' looks like a secret" in warning.message
    assert "s3cr3t" not in warning.message


@pytest.mark.parametrize("cwd", ["/abs/dir", "/", "C:\\work\\server", "C:/work", "\\\\host\\share\\dir"])
def test_an_absolute_cwd_of_any_desktop_system_is_accepted(cwd: str) -> None:
    result = load(with_changes(valid_mcp(), ("/execution/cwd", cwd)))

    assert result.descriptor is not None, rendered(result)
    assert result.descriptor.sections[0].channel.cwd == cwd  # type: ignore[union-attr]


@pytest.mark.parametrize("cwd", ["relative/dir", "./dir", "~/project", "C:work", "dir\x00/x"])
def test_a_relative_cwd_is_an_error(cwd: str) -> None:
    rejected_at(
        with_changes(valid_mcp(), ("/execution/cwd", cwd)), "/execution/cwd", "must be an absolute path"
    )


def test_an_empty_cwd_or_command_is_a_structural_error() -> None:
    rejected_at(with_changes(valid_mcp(), ("/execution/cwd", "")), "/execution/cwd", "must not be empty")
    rejected_at(
        with_changes(valid_mcp(), ("/execution/command", "")), "/execution/command", "must not be empty"
    )


def test_a_blank_command_is_an_error() -> None:
    rejected_at(
        with_changes(valid_mcp(), ("/execution/command", "  ")), "/execution/command", "must name the program"
    )


# --------------------------------------------------------------------------- command line


def test_a_non_string_argument_is_an_error_at_its_index() -> None:
    document = with_changes(valid_mcp(), ("/execution/args", ["mcp-server-time", 8080]))

    rejected_at(document, "/execution/args/1", "'args' must be a string, not an integer (8080)")


@pytest.mark.parametrize("pointer", ["/execution/command", "/execution/args/0"])
def test_a_nul_character_in_the_command_line_is_an_error(pointer: str) -> None:
    rejected_at(with_changes(valid_mcp(), (pointer, "mcp\x00server")), pointer, "NUL character")


def test_more_arguments_than_the_limit_are_an_error() -> None:
    document = with_changes(valid_mcp(), ("/execution/args", ["-v"] * 1025))

    rejected_at(document, "/execution/args", "holds 1025 arguments; at most 1024 are allowed")
    assert load(with_changes(valid_mcp(), ("/execution/args", ["-v"] * 1024))).errors == []


def test_a_command_line_longer_than_windows_accepts_is_an_error() -> None:
    document = with_changes(valid_mcp(), ("/execution/args", ["x" * 20_000, "y" * 20_000]))

    rejected_at(document, "/execution/args", "40005 characters long; at most 32767 fit")
    without_args = with_changes(
        valid_mcp(), ("/execution/command", "c" * 40_000), ("/execution/args", DELETE)
    )
    rejected_at(without_args, "/execution/command", "40000 characters long; at most 32767")


# --------------------------------------------------------------------------- platform and tools


def test_the_web_platform_is_an_error_a_descriptor_from_the_web_never_starts_a_program() -> None:
    for transport in ("stdio", "http"):
        document = with_changes(valid_mcp(transport), ("/platform", "web"))
        message = rejected_at(document, "/execution/type", "cannot run on platform 'web'")
        assert message == "execution type 'mcp' cannot run on platform 'web' (allowed there: http)"


@pytest.mark.parametrize("platform", ["android", "ios", "Linux"])
def test_a_platform_that_dialect_c_does_not_know_is_a_structural_error(platform: str) -> None:
    rejected_at(with_changes(valid_mcp(), ("/platform", platform)), "/platform", "unknown 'platform'")


@pytest.mark.parametrize(("field", "pointer"), [("platform", "/platform"), ("tools", "/tools")])
def test_every_other_type_still_needs_platform_and_tools(field: str, pointer: str) -> None:
    for document in (
        valid_c("web"),
        valid_c("macos"),
        with_changes(valid_c("linux"), ("/execution", {"type": "stdio", "command": "x"})),
    ):
        rejected_at(
            with_changes(document, (f"/{field}", DELETE)), pointer, f"required field '{field}' is missing"
        )


def test_a_file_that_is_only_a_schema_version_still_lists_every_missing_field() -> None:
    result = load({"schemaVersion": "1.0"})

    assert [p.pointer for p in result.errors] == ["/version", "/platform", "/app", "/tools"]


def test_per_tool_execution_and_auth_are_errors_for_mcp() -> None:
    tool = mcp_tool(execution={"path": "/search"})
    rejected_at(
        with_changes(valid_mcp(), ("/tools", [tool])),
        "/tools/0/execution",
        "applies to http only, not 'mcp'",
    )
    auth = valid_c("web")["auth"]
    rejected_at(
        with_changes(valid_mcp(), ("/auth", auth)), "/auth", "auth applies to http execution only, not 'mcp'"
    )


def test_settings_of_other_types_are_warnings_in_both_directions() -> None:
    mcp = load(with_changes(valid_mcp(), ("/execution/baseUrl", "https://x.example")))
    stdio = load(
        with_changes(
            valid_c("linux"),
            (
                "/execution",
                {"type": "stdio", "command": "x", "url": "https://x.example", "cwd": "/", "headers": {}},
            ),
        )
    )

    assert [p.render() for p in mcp.problems] == [
        "/execution/baseUrl: warning: baseUrl is ignored for execution type 'mcp'"
    ]
    assert [p.render() for p in stdio.problems] == [
        "/execution/cwd: warning: cwd is ignored for execution type 'stdio'",
        "/execution/headers: warning: headers is ignored for execution type 'stdio'",
        "/execution/url: warning: url is ignored for execution type 'stdio'",
    ]


@pytest.mark.parametrize(
    ("annotations", "pointer", "says"),
    [
        ({"readOnlyHint": "yes"}, "/tools/0/annotations/readOnlyHint", "must be a boolean"),
        ({"title": 3}, "/tools/0/annotations/title", "must be a string"),
        ([], "/tools/0/annotations", "must be an object"),
    ],
)
def test_annotations_of_the_wrong_type_are_structural_errors(
    annotations: Any, pointer: str, says: str
) -> None:
    rejected_at(with_changes(valid_mcp(), ("/tools", [mcp_tool(annotations=annotations)])), pointer, says)


def test_an_unknown_annotation_is_a_warning() -> None:
    result = load(with_changes(valid_mcp(), ("/tools", [mcp_tool(annotations={"readOnlyHnt": True})])))

    assert [p.render() for p in result.problems] == [
        "/tools/0/annotations/readOnlyHnt: warning: unknown field 'readOnlyHnt' is ignored; "
        "did you mean 'readOnlyHint'?"
    ]


def test_dialects_a_and_b_have_no_mcp_type() -> None:
    rejected_at(
        with_changes(valid_a("linux"), ("/execution/type", "mcp")),
        "/execution/type",
        "unknown execution type",
    )
    rejected_at(
        with_changes(valid_b(), ("/platforms/linux/automation", "mcp")),
        "/platforms/linux/automation",
        "unknown automation type",
    )


def test_an_unknown_execution_type_lists_mcp_among_the_known_ones() -> None:
    document = with_changes(valid_mcp(), ("/execution/type", "mpc"), ("/platform", "linux"), ("/tools", []))
    message = rejected_at(document, "/execution/type")

    assert message.endswith("expected 'http', 'stdio', 'acp', 'apple-events', 'dbus', 'com' or 'mcp'")


# --------------------------------------------------------------------------- editor schema


def schema_validator() -> Any:
    return jsonschema_rs.validator_for(descriptor_json_schema())


def test_the_schema_accepts_both_transports_with_or_without_tools_and_annotations() -> None:
    validator = schema_validator()
    annotated = with_changes(
        valid_mcp(), ("/tools", [mcp_tool(annotations={"readOnlyHint": True, "title": "T"})])
    )

    for document in (
        valid_mcp(),
        valid_mcp("http"),
        annotated,
        with_changes(valid_mcp(), ("/platform", "linux")),
    ):
        assert [e.message for e in validator.iter_errors(document)] == []


@pytest.mark.parametrize(
    "document",
    [
        with_changes(valid_mcp(), ("/execution/url", "https://x.example")),
        with_changes(valid_mcp(), ("/execution/command", DELETE), ("/execution/args", DELETE)),
        with_changes(valid_mcp("http"), ("/execution/env", {"A": "b"})),
        with_changes(valid_mcp(), ("/execution/headers", {"A": "b"})),
        with_changes(valid_mcp(), ("/execution/env/TZ", 1)),
        with_changes(valid_mcp(), ("/execution/env/TZ", {"secret": "A", "env": "B"})),
        with_changes(valid_mcp(), ("/execution/type", "stdio")),  # then platform and tools are needed
        with_changes(valid_mcp(), ("/tools", [mcp_tool(annotations={"readOnlyHint": "yes"})])),
    ],
)
def test_the_schema_flags_what_the_gateway_rejects_for_mcp(document: JsonDict) -> None:
    assert not schema_validator().is_valid(document)
    assert load(document).errors


def test_the_schema_names_mcp_and_describes_its_fields() -> None:
    definitions = descriptor_json_schema()["definitions"]
    execution = definitions["CExecution"]

    assert "mcp" in execution["properties"]["type"]["enum"]
    assert {
        "if": {"properties": {"type": {"const": "mcp"}}},
        "then": {
            "oneOf": [{"required": ["command"]}, {"required": ["url"]}],
            "dependencies": {"args": ["command"], "env": ["command"], "cwd": ["command"], "headers": ["url"]},
        },
    } in execution["allOf"]
    for field in ("command", "args", "env", "cwd", "url", "headers"):
        assert "mcp" in execution["properties"][field]["description"], field
    assert "OS keyring" in definitions["CSecretRef"]["properties"]["secret"]["description"]
    assert set(definitions["CToolAnnotations"]["properties"]) == {
        "title",
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    }
