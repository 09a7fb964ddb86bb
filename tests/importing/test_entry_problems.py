"""What is wrong with one entry is reported at its location and never keeps the other entries
out; messages name keys and kinds, never a value (it may be a credential)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aai_gateway.importing import ConfigReport, read_config, same_named
from aai_gateway.importing.model import CODEX, VSCODE
from tests.importing.helpers import lit, names, problems_of

SECRET = "s3cr3t-EXAMPLE-value"


def write_json(tmp_path: Path, document: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def read(tmp_path: Path, servers: dict[str, Any], client: str | None = None) -> ConfigReport:
    return read_config(write_json(tmp_path, {"mcpServers": servers}), client)


def assert_no_secret_in(report: ConfigReport) -> None:
    assert all(SECRET not in problem.message for problem in report.problems)


def test_an_entry_without_command_or_url_is_an_error_and_the_others_are_still_read(tmp_path: Path) -> None:
    report = read(tmp_path, {"empty": {"env": {"A": "b"}}, "ok": {"command": "uvx"}, "text": "uvx git"})
    assert names(report.servers) == ["ok"]
    assert problems_of(report.problems) == [
        ("/mcpServers/empty", "error", "has neither a command nor a url; it describes no server"),
        ("/mcpServers/text", "error", "server 'text' is a string; expected an object"),
    ]


def test_values_of_the_wrong_type_are_errors_that_name_the_kind_never_the_value(tmp_path: Path) -> None:
    report = read(
        tmp_path,
        {
            "port": {"command": "node", "args": ["--port", 8080, ["nested"]]},
            "envs": {"command": "node", "env": {"TOKEN": 12345, "OK": "x"}},
            "cmd": {"command": ["npx", SECRET]},
            "ok": {"command": "node", "args": ["server.js"]},
        },
    )
    assert names(report.servers) == ["ok"]
    assert problems_of(report.problems) == [
        ("/mcpServers/port/args/1", "error", "args[1] is a number; expected a string"),
        ("/mcpServers/port/args/2", "error", "args[2] is an array; expected a string"),
        ("/mcpServers/envs/env/TOKEN", "error", "env.TOKEN is a number; expected a string"),
        ("/mcpServers/cmd/command", "error", "command is an array; expected a string"),
    ]
    assert_no_secret_in(report)


def test_unknown_keys_are_warnings_and_known_client_settings_are_listed_as_not_carried_over(
    tmp_path: Path,
) -> None:
    report = read(
        tmp_path, {"git": {"command": "uvx", "args": ["mcp-server-git"], "timeout": 5, "comand": "x"}}
    )
    assert report.servers[0].ignored_keys == ("timeout", "comand")
    assert problems_of(report.problems) == [
        ("/mcpServers/git/comand", "warning", "unknown key 'comand'; ignored")
    ]


def test_a_remote_entry_with_stdio_keys_keeps_the_url_and_warns_about_the_rest(tmp_path: Path) -> None:
    report = read(
        tmp_path, {"api": {"type": "http", "url": "https://a.example/mcp", "args": ["x"], "env": {}}}
    )
    assert report.servers[0].url == lit("https://a.example/mcp")
    assert report.servers[0].args == ()
    assert problems_of(report.problems) == [
        ("/mcpServers/api", "warning", "args, env not used for a remote server; ignored")
    ]


def test_transport_problems_name_what_to_write_instead(tmp_path: Path) -> None:
    report = read(
        tmp_path,
        {
            "ws": {"type": "ws", "url": "wss://a.example/mcp"},
            "both": {"command": "node", "url": "https://a.example/mcp"},
            "no-command": {"type": "stdio", "args": ["x"]},
            "no-url": {"type": "http"},
            "socket": {"type": "http", "url": "unix:///tmp/server.sock"},
            "ftp": {"url": "ftp://a.example/mcp"},
            "relative": {"url": "/mcp"},
        },
    )
    assert report.servers == ()
    assert problems_of(report.problems) == [
        (
            "/mcpServers/ws/type",
            "error",
            "transport type 'ws' is not supported: the gateway speaks stdio and Streamable HTTP "
            "(type 'stdio' or 'http')",
        ),
        ("/mcpServers/both", "error", "has both a command and a URL; say which it is with 'type'"),
        ("/mcpServers/no-command", "error", "is a stdio server without a command"),
        ("/mcpServers/no-url", "error", "is a remote (http) server without a url"),
        (
            "/mcpServers/socket/url",
            "error",
            "url names a local socket or pipe, which the gateway cannot connect to",
        ),
        ("/mcpServers/ftp/url", "error", "url is not an http or https URL (scheme 'ftp')"),
        ("/mcpServers/relative/url", "error", "url is not an http or https URL (no scheme)"),
    ]


def test_header_and_environment_values_a_request_or_process_cannot_carry_are_errors(tmp_path: Path) -> None:
    report = read(
        tmp_path,
        {
            "crlf": {
                "url": "https://a.example/mcp",
                "headers": {"Authorization": f"Bearer {SECRET}\r\nX-Evil: 1"},
            },
            "name": {"url": "https://a.example/mcp", "headers": {"Bad Header": "x"}},
            "host": {"url": "https://a.example/mcp", "headers": {"Host": "evil.example", "X-Ok": "1"}},
            "nul": {"command": "node", "env": {"A": "x\u0000y", "B=C": "d"}},
            "surrogate": {"command": "node", "args": ["\ud800"]},
        },
    )
    assert names(report.servers) == ["host"]
    assert report.servers[0].headers == {"X-Ok": lit("1")}
    assert problems_of(report.problems) == [
        (
            "/mcpServers/crlf/headers/Authorization",
            "error",
            "the value of header 'Authorization' contains a line break or another control character "
            "(CR, LF or NUL, ...; only tab is allowed), which an HTTP header cannot carry",
        ),
        ("/mcpServers/name/headers/Bad Header", "error", "'Bad Header' is not a valid HTTP header name"),
        (
            "/mcpServers/host/headers/Host",
            "warning",
            "header 'Host' is set by the gateway's HTTP client itself; not carried over",
        ),
        ("/mcpServers/nul/env/A", "error", "env.A holds a NUL character, which no process can be given"),
        ("/mcpServers/nul/env/B=C", "error", "'B=C' cannot be the name of an environment variable"),
        (
            "/mcpServers/surrogate/args/0",
            "error",
            "args[0] is not valid Unicode text (it holds a lone surrogate)",
        ),
    ]
    assert_no_secret_in(report)


def test_names_with_path_separators_or_control_characters_are_kept_exactly(tmp_path: Path) -> None:
    hostile = ["../../etc/passwd", "a/b~c", "tab\there", "nul\u0000", "", "ünïcode 🚀"]
    report = read(tmp_path, {name: {"command": "node"} for name in hostile})
    assert names(report.servers) == hostile
    assert [server.json_pointer for server in report.servers] == [
        "/mcpServers/..~1..~1etc~1passwd",
        "/mcpServers/a~1b~0c",
        "/mcpServers/tab\there",
        "/mcpServers/nul\u0000",
        "/mcpServers/",
        "/mcpServers/ünïcode 🚀",
    ]


def test_a_name_defined_twice_in_one_object_is_a_warning_and_the_last_one_counts(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"mcpServers": {"git": {"command": "old"}, "git": {"command": "uvx", "env": {"A": "1", "A": "2"}}}}',
        encoding="utf-8",
    )
    report = read_config(path)
    assert [(s.name, s.command) for s in report.servers] == [("git", lit("uvx"))]
    assert report.servers[0].env == {"A": lit("2")}
    assert problems_of(report.problems) == [
        (
            "/mcpServers/git",
            "warning",
            "server 'git' is defined more than once; the client uses the last one",
        ),
        ("/mcpServers/git/env/A", "warning", "key 'A' appears more than once; the client uses the last one"),
    ]


def test_the_same_name_in_several_files_and_scopes_is_reported_for_the_import_to_tell_apart(
    tmp_path: Path,
) -> None:
    first = read_config(write_json(tmp_path, {"mcpServers": {"git": {"command": "a"}}}, "a.json"))
    second = read_config(
        write_json(
            tmp_path,
            {
                "mcpServers": {"git": {"command": "b"}},
                "projects": {"/p": {"mcpServers": {"git": {"command": "c"}}}},
            },
            "b.json",
        )
    )
    duplicates = same_named([*first.servers, *second.servers])
    assert list(duplicates) == ["git"]
    assert [(s.config_file.name, s.json_pointer) for s in duplicates["git"]] == [
        ("a.json", "/mcpServers/git"),
        ("b.json", "/mcpServers/git"),
        ("b.json", "/projects/~1p/mcpServers/git"),
    ]


def test_an_undefined_vscode_input_is_a_warning(tmp_path: Path) -> None:
    path = write_json(
        tmp_path, {"inputs": [{"id": 3}], "servers": {"a": {"command": "x", "env": {"K": "${input:k}"}}}}
    )
    report = read_config(path, VSCODE)
    assert problems_of(report.problems) == [
        ("/inputs/0", "warning", "an input needs a string id; skipped"),
        ("/servers/a/env/K", "warning", "env.K refers to input 'k', which inputs does not define"),
    ]
    assert report.servers[0].env["K"].references[0].defined is False


def test_codex_entries_codex_itself_refuses_are_errors_located_by_toml_path(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[mcp_servers.inline]\n"
        f'url = "https://a.example/mcp"\nbearer_token = "{SECRET}"\n'
        "[mcp_servers.both]\n"
        'command = "node"\nurl = "https://a.example/mcp"\n'
        "[mcp_servers.nothing]\n"
        "enabled = true\n"
        '[mcp_servers."odd name"]\n'
        'command = "node"\nargs = ["a", 1]\nenv_vars = ["OK", { name = "ALSO" }, 3]\n'
        "[mcp_servers.fine]\n"
        'command = "node"\nenv_vars = [{ name = "HOME", source = "local" }]\n',
        encoding="utf-8",
    )
    report = read_config(path)
    assert report.client == CODEX
    assert names(report.servers) == ["fine"]
    assert problems_of(report.problems) == [
        (
            "mcp_servers.inline.bearer_token",
            "error",
            "Codex refuses an inline bearer_token; put the token in an environment variable and name it with "
            "bearer_token_env_var",
        ),
        ("mcp_servers.both", "error", "has both command and url; Codex refuses such an entry"),
        ("mcp_servers.nothing", "error", "server 'nothing' has neither command nor url"),
        ('mcp_servers."odd name".env_vars.2', "error", "must be a variable name or a table with a name"),
        ('mcp_servers."odd name".args.1', "error", "args[1] is a number; expected a string"),
    ]
    assert_no_secret_in(report)
