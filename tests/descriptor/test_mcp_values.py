"""The env and header values of an `mcp` execution: a literal string, `{"secret": NAME}` (the OS
keyring, bound to this descriptor) or `{"env": VAR}` (the gateway's own environment).

Names must be usable (environment variable names, HTTP header names, secret names), literal
values must be sendable, and a literal that looks like a credential is a warning that says how
to move it into the keyring. No message ever repeats a literal value: it may be a credential.
"""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.descriptor.model import McpChannel
from aai_gateway.descriptor.secret_shapes import looks_like_secret

from .helpers import JsonDict, load, rendered, valid_c, valid_mcp, with_changes
from .test_validation_rules import rejected_at

SECRET_VALUE = "sk-live-4f9a0c"


def with_env(name: str, value: Any) -> JsonDict:
    return with_changes(valid_mcp(), ("/execution/env", {name: value}))


def with_header(name: str, value: Any) -> JsonDict:
    return with_changes(valid_mcp("http"), ("/execution/headers", {name: value}))


def pointer_of(name: str, *, header: bool) -> str:
    return f"/execution/{'headers' if header else 'env'}/{name.replace('~', '~0').replace('/', '~1')}"


# --------------------------------------------------------------------------- value shapes


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (1, 'value must be a string, {"secret": "NAME"} or {"env": "VARIABLE"}, not an integer (1)'),
        (True, "not a boolean (true)"),
        (None, "not null"),
        (["a"], "not an array"),
    ],
)
@pytest.mark.parametrize("header", [False, True])
def test_a_value_that_is_neither_a_string_nor_a_reference_is_a_structural_error(
    value: Any, says: str, header: bool
) -> None:
    document = with_header("X-A", value) if header else with_env("A", value)

    rejected_at(document, pointer_of("X-A" if header else "A", header=header), says)


@pytest.mark.parametrize("value", [{}, {"secret": "A", "env": "B"}, {"name": "A"}])
def test_a_reference_must_hold_exactly_one_of_secret_and_env(value: JsonDict) -> None:
    rejected_at(with_env("A", value), "/execution/env/A", "exactly one of 'secret'", "or 'env'")


@pytest.mark.parametrize(("value", "key"), [({"secret": 5}, "secret"), ({"env": ["X"]}, "env")])
def test_a_reference_whose_name_is_not_a_string_is_an_error_at_the_name(value: JsonDict, key: str) -> None:
    rejected_at(with_env("A", value), f"/execution/env/A/{key}", f"'{key}' must be a string")


def test_an_unknown_field_of_a_reference_is_a_warning() -> None:
    result = load(with_env("A", {"secret": "A", "note": "from the import"}))

    assert result.descriptor is not None
    assert [p.render() for p in result.problems] == [
        "/execution/env/A/note: warning: unknown field 'note' is ignored; known fields: secret"
    ]


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["A", "_x", "GITHUB_TOKEN", "tz9"])
def test_environment_variable_names_of_letters_digits_and_underscores_are_accepted(name: str) -> None:
    assert load(with_env(name, "v")).errors == []


@pytest.mark.parametrize("name", ["", "9LIVES", "MY-VAR", "A B", "A=B", "PATH\x00", "Ä"])
def test_an_environment_variable_name_that_a_process_cannot_hold_is_an_error(name: str) -> None:
    rejected_at(
        with_env(name, "v"), pointer_of(name, header=False), "environment variable name", "letters, digits"
    )


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Bad Name", "is not a valid HTTP header name"),
        ("X:Y", "is not a valid HTTP header name"),
        ("", "is not a valid HTTP header name"),
        ("Content-Length", "is set by the gateway's HTTP client itself"),
        ("Host", "is set by the gateway's HTTP client itself"),
        ("Mcp-Session-Id", "is set by the MCP client itself"),
        ("mcp-protocol-version", "is set by the MCP client itself"),
    ],
)
def test_a_header_name_the_descriptor_may_not_set_is_an_error(name: str, says: str) -> None:
    rejected_at(with_header(name, "v"), pointer_of(name, header=True), f"header name {name!r} {says}")


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "authorization", "my.secret-1", "a" * 128])
def test_secret_names_of_letters_digits_dot_dash_and_underscore_are_accepted(name: str) -> None:
    result = load(with_env("A", {"secret": name}))

    assert result.errors == [], rendered(result)
    assert isinstance(channel := result.descriptor.sections[0].channel, McpChannel)  # type: ignore[union-attr]
    assert channel.secret_names == (name,)


@pytest.mark.parametrize(
    "name", ["", "a b", "../etc/passwd", "a/b", "credential/web/x", "ü", "a\nb", "a" * 129]
)
def test_a_secret_name_with_other_characters_or_length_is_an_error(name: str) -> None:
    message = rejected_at(with_env("A", {"secret": name}), "/execution/env/A/secret", "secret name")

    assert message.endswith("must be 1 to 128 letters, digits, '_', '.' or '-'")


@pytest.mark.parametrize("name", ["", "MY-VAR", "1X", "A B"])
def test_an_environment_reference_to_an_impossible_variable_name_is_an_error(name: str) -> None:
    rejected_at(
        with_header("X-A", {"env": name}), "/execution/headers/X-A/env", "is not an environment variable name"
    )


# --------------------------------------------------------------------------- literal values


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\x00b", "a\x7fb"])
def test_a_header_value_with_a_line_break_or_control_character_is_an_error_that_does_not_quote_it(
    value: str,
) -> None:
    message = rejected_at(
        with_header("X-Plain", SECRET_VALUE + value), "/execution/headers/X-Plain", "header value"
    )

    assert "control character" in message
    assert SECRET_VALUE not in message


def test_a_header_value_with_a_tab_is_accepted() -> None:
    assert load(with_header("X-Plain", "a\tb")).errors == []


def test_an_environment_value_with_a_nul_character_is_an_error_but_a_line_break_is_not() -> None:
    message = rejected_at(with_env("A", SECRET_VALUE + "\x00"), "/execution/env/A", "NUL character")

    assert SECRET_VALUE not in message
    assert load(with_env("A", "line one\nline two")).errors == []


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("GITHUB_TOKEN", False),
        ("OPENAI_API_KEY", False),
        ("DB_PASSWORD", False),
        ("GH_PAT", False),
        ("AWS_SECRET_ACCESS_KEY", False),
        ("apikey", False),
        ("authToken", False),
        ("Authorization", True),
        ("X-Api-Key", True),
        ("Cookie", True),
        ("X-Auth", True),
        ("Proxy-Authorization", True),
    ],
)
def test_a_literal_value_whose_name_looks_like_a_secret_is_a_warning_naming_the_keyring_command(
    name: str, header: bool
) -> None:
    result = load(with_header(name, SECRET_VALUE) if header else with_env(name, SECRET_VALUE))

    assert result.descriptor is not None, "a warning, not an error: the user is not locked out"
    [warning] = result.warnings
    assert warning.pointer == pointer_of(name, header=header)
    assert f"{'header' if header else 'environment variable'} {name!r} looks like a secret" in warning.message
    assert f"run `aai-gateway auth set time --secret {name}`" in warning.message
    assert f'write {{"secret": "{name}"}} here' in warning.message
    assert '{"env": "VARIABLE"}' in warning.message
    assert SECRET_VALUE not in warning.message


@pytest.mark.parametrize(
    "name", ["TZ", "PATH", "PATTERN", "KEYBOARD_LAYOUT", "GIT_AUTHOR_NAME", "MONKEY", "LANG"]
)
def test_a_literal_value_whose_name_does_not_look_like_a_secret_is_fine(name: str) -> None:
    result = load(with_env(name, "value"))

    assert result.problems == [], rendered(result)


@pytest.mark.parametrize(
    ("name", "value", "header"),
    [
        ("Proxy", "Bearer abc.def", True),
        ("DATABASE_URL", "postgresql://shop:hunter2@localhost/shop", False),
        ("GH", "ghp_EXAMPLEexample0123456789EXAMPLEexam", False),
    ],
)
def test_a_literal_value_shaped_like_a_secret_is_a_warning_whatever_its_name(
    name: str, value: str, header: bool
) -> None:
    result = load(with_header(name, value) if header else with_env(name, value))

    [warning] = result.warnings
    assert "looks like a secret written in plain text" in warning.message
    assert value not in warning.message


def test_an_empty_secret_looking_value_holds_no_secret_and_is_fine() -> None:
    assert load(with_env("GITHUB_TOKEN", "")).problems == []


def test_a_secret_name_the_keyring_cannot_take_is_replaced_by_name_in_the_hint() -> None:
    result = load(with_header("X Token", SECRET_VALUE))

    assert [p.pointer for p in result.errors] == ["/execution/headers/X Token"]  # not a header name
    [warning] = result.warnings

    assert "--secret NAME`" in warning.message


def test_names_too_long_to_repeat_are_replaced_by_placeholders_in_the_hint() -> None:
    long_name = "GITHUB_TOKEN_" + "X" * 100
    document = with_changes(
        valid_mcp(), ("/app/id", "com." + "a" * 100), ("/execution/env", {long_name: "v"})
    )
    [warning] = load(document).warnings

    assert (
        'run `aai-gateway auth set <app> --secret NAME` and write {"secret": "NAME"} here' in warning.message
    )
    assert len(warning.message) < 400


@pytest.mark.parametrize("value", ["${GITHUB_TOKEN}", "Bearer ${input:token}", "${env:HOME}/x"])
def test_a_literal_value_with_a_placeholder_is_a_warning_that_nothing_is_replaced(value: str) -> None:
    result = load(with_env("GITHUB_TOKEN", value))

    assert result.descriptor is not None
    [warning] = result.warnings
    assert warning.pointer == "/execution/env/GITHUB_TOKEN"
    assert "passes as written (it replaces nothing)" in warning.message
    assert '{"env": "VARIABLE"}' in warning.message


def test_references_are_never_warned_about_whatever_their_names() -> None:
    document = with_changes(
        valid_mcp(),
        ("/execution/env", {"GITHUB_TOKEN": {"secret": "GITHUB_TOKEN"}, "API_KEY": {"env": "API_KEY"}}),
    )

    assert load(document).problems == []


def test_the_secret_detector_matches_words_not_every_substring() -> None:
    assert [n for n in ("xApiKey", "X_AUTH", "SECRET", "session_cookie") if not looks_like_secret(n)] == []
    assert [n for n in ("PATH", "AUTHOR", "KEYS_DIR", "TZ", "HOME") if looks_like_secret(n)] == []


# --------------------------------------------------------------------------- other types


@pytest.mark.parametrize(
    "execution", [{"type": "stdio", "command": "x"}, {"type": "acp", "start": {"command": "x"}}]
)
@pytest.mark.parametrize("reference", [{"secret": "A"}, {"env": "A"}])
def test_references_in_the_env_of_another_type_are_an_error(execution: JsonDict, reference: JsonDict) -> None:
    document = with_changes(valid_c("linux"), ("/execution", {**execution, "env": {"A": reference}}))

    message = rejected_at(document, "/execution/env/A")
    assert message == (
        f"secret and environment references are for execution type 'mcp'; {execution['type']!r} takes "
        "env values as strings"
    )
