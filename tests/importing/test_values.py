"""Each client's reference syntax, and only that client's, splits a value into text and
references."""

from __future__ import annotations

import pytest

from aai_gateway.importing import ConfigValue, Reference
from aai_gateway.importing.model import (
    CLAUDE_CODE,
    CLAUDE_DESKTOP,
    CODEX,
    CURSOR,
    GEMINI,
    GENERIC,
    VSCODE,
    WINDSURF,
)
from aai_gateway.importing.values import Input, parse_value
from tests.importing.helpers import env, lit, value, variable


@pytest.mark.parametrize(
    ("client", "text", "expected"),
    [
        (CLAUDE_CODE, "${TOKEN}", value(env("TOKEN"))),
        (
            CLAUDE_CODE,
            "${BASE:-https://a.example/x}/mcp",
            value(env("BASE", "${BASE:-https://a.example/x}", "https://a.example/x"), "/mcp"),
        ),
        (CLAUDE_CODE, "${env:TOKEN}", lit("${env:TOKEN}")),
        (CLAUDE_CODE, "$TOKEN", lit("$TOKEN")),
        (CURSOR, "Bearer ${env:TOKEN}", value("Bearer ", env("TOKEN", "${env:TOKEN}"))),
        (CURSOR, "${userHome}${/}x", value(variable("userHome"), variable("/"), "x")),
        (CURSOR, "${TOKEN}", lit("${TOKEN}")),
        (
            VSCODE,
            "${env:HOME}/${workspaceFolder}",
            value(env("HOME", "${env:HOME}"), "/", variable("workspaceFolder")),
        ),
        (
            VSCODE,
            "${config:python.path}",
            value(Reference("variable", "config:python.path", "${config:python.path}")),
        ),
        (GEMINI, "$A-${B}", value(env("A", "$A"), "-", env("B"))),
        (GEMINI, "${B:-x}", lit("${B:-x}")),
        (
            WINDSURF,
            "${file:/run/secrets/token}",
            value(Reference("file", "/run/secrets/token", "${file:/run/secrets/token}")),
        ),
        (WINDSURF, "${TOKEN}", lit("${TOKEN}")),
        (GENERIC, "${env:A}${B}", value(env("A", "${env:A}"), env("B"))),
        (CLAUDE_DESKTOP, "${TOKEN} $TOKEN ${env:TOKEN}", lit("${TOKEN} $TOKEN ${env:TOKEN}")),
        (CODEX, "${TOKEN}", lit("${TOKEN}")),
        (CLAUDE_CODE, "no references", lit("no references")),
        (CLAUDE_CODE, "price: $5 ${", lit("price: $5 ${")),
    ],
)
def test_each_client_resolves_its_own_reference_forms(client: str, text: str, expected: ConfigValue) -> None:
    parsed = parse_value(text, client)
    assert parsed == expected
    assert parsed.raw == text


def test_a_vscode_input_carries_its_description_and_whether_it_is_a_password() -> None:
    inputs = {"key": Input("key", "API key", True), "name": Input("name", None, False)}
    parsed = parse_value("${input:key}:${input:name}:${input:other}", VSCODE, inputs)
    assert parsed.references == (
        Reference("input", "key", "${input:key}", secret=True, description="API key"),
        Reference("input", "name", "${input:name}"),
        Reference("input", "other", "${input:other}", defined=False),
    )


def test_a_literal_value_says_so_and_an_empty_one_has_no_parts() -> None:
    assert lit("x").is_literal and lit("x").parts == ("x",)
    assert lit("") == ConfigValue("", ())
    assert not value("Bearer ", env("T")).is_literal
