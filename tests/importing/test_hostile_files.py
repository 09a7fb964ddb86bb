"""Files that are not what they claim to be: each is one located problem, never an exception,
and nothing reads more than the cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aai_gateway.importing import MAX_CONFIG_BYTES, read_config
from tests.importing.helpers import names, problems_of


def write(tmp_path: Path, text: str, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def only_problem(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> tuple[str, str, str]:
    report = read_config(path, max_bytes=max_bytes)
    assert report.servers == ()
    assert report.format is None
    [problem] = problems_of(report.problems)
    assert report.problems[0].file == str(path)
    return problem


def test_a_file_larger_than_the_cap_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {}}' + " " * 1000)
    assert only_problem(path, max_bytes=100) == (
        "",
        "error",
        "is larger than 100 bytes, more than any MCP client configuration; not read",
    )
    assert MAX_CONFIG_BYTES >= 100 * 1024 * 1024  # ~/.claude.json is known to reach 100 MB


def test_a_fifo_a_folder_and_a_missing_file_are_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    assert only_problem(fifo) == ("", "error", "is not a regular file")
    assert only_problem(tmp_path) == ("", "error", "is not a regular file")
    assert only_problem(tmp_path / "missing.json") == (
        "",
        "error",
        "cannot be read: No such file or directory",
    )


def test_text_that_is_not_utf8_is_reported_with_its_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"mcpServers": {"caf\xe9": {"command": "x"}}}')
    assert only_problem(path) == ("", "error", "is not UTF-8 text (byte 20: invalid continuation byte)")


def test_bad_json_is_reported_at_its_line_and_column_even_after_comments(tmp_path: Path) -> None:
    path = write(
        tmp_path, '{\n  // servers\n  "mcpServers": {\n    "a": {"command": "x"} /* c */ "b": 1\n  }\n}\n'
    )
    assert only_problem(path) == ("", "error", "invalid JSON at line 4 column 35: Expecting ',' delimiter")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {"a": {"command": NaN}}}', "invalid JSON: NaN is not a JSON value"),
        ('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON is nested too deeply to read"),
        ('{"n": 1' + "0" * 5000 + "}", "invalid JSON: "),
    ],
)
def test_json_that_no_client_could_use_is_one_problem(tmp_path: Path, text: str, message: str) -> None:
    pointer, severity, found = only_problem(write(tmp_path, text))
    assert (pointer, severity) == ("", "error")
    assert found.startswith(message)


def test_toml_nested_too_deeply_or_malformed_is_one_problem(tmp_path: Path) -> None:
    deep = write(tmp_path, "a = " + "[" * 100_000 + "]" * 100_000, "deep.toml")
    assert only_problem(deep) == ("", "error", "TOML is nested too deeply to read")
    broken = write(tmp_path, "[mcp_servers.git]\ncommand = \n", "broken.toml")
    assert only_problem(broken) == ("", "error", "invalid TOML: Invalid value (at line 2, column 11)")


def test_a_document_that_is_not_an_object_or_has_no_servers_says_what_was_expected(tmp_path: Path) -> None:
    assert only_problem(write(tmp_path, "[1, 2]", "array.json")) == (
        "",
        "error",
        "holds an array, not a configuration object",
    )
    pointer, _, message = only_problem(write(tmp_path, '{"editor.fontSize": 14}', "settings.json"))
    assert (pointer, message.split(":")[0]) == ("", "holds no MCP server configuration")
    assert only_problem(write(tmp_path, 'model = "x"\n', "config.toml"))[2].startswith("holds no MCP server")


def test_a_servers_section_of_the_wrong_kind_is_located(tmp_path: Path) -> None:
    report = read_config(write(tmp_path, '{"mcpServers": ["git"]}'))
    assert problems_of(report.problems) == [
        ("/mcpServers", "error", "is an array; expected an object of servers by name")
    ]


def test_a_byte_order_mark_and_deep_values_inside_an_entry_do_not_stop_the_read(tmp_path: Path) -> None:
    deep_arg = "[" * 500 + "]" * 500
    path = write(
        tmp_path,
        '\ufeff{"mcpServers": {"deep": {"command": "x", "args": ['
        + deep_arg
        + ']}, "ok": {"command": "y"}}}',
    )
    report = read_config(path)
    assert names(report.servers) == ["ok"]
    assert problems_of(report.problems) == [
        ("/mcpServers/deep/args/0", "error", "args[0] is an array; expected a string")
    ]
