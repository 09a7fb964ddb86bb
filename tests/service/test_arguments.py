"""Arguments checked before any executor sees them: the schema, defaults, and valid Unicode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, Tool
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.service.arguments import (
    EVERY_VIOLATION_VALUES,
    MAX_LISTED_VIOLATIONS,
    MAX_VIOLATION_CHARS,
    MAX_VIOLATIONS_CHARS,
    ArgumentValidator,
)
from tests.consent.apps import local_app


def test_a_lone_surrogate_anywhere_is_invalid_params_naming_where() -> None:
    app = local_app(tools=("create",))
    arguments = {"text": "ok\ud800", "nested": {"k\udfff": ["fine", "\ud83d"]}}
    with pytest.raises(AaiError) as caught:
        ArgumentValidator().prepare(app, app.tools[0], arguments)
    assert caught.value.code is ErrorCode.INVALID_PARAMS
    assert caught.value.data["violations"] == [
        {"path": "/nested/k\udfff", "message": "text that is not valid Unicode (a lone surrogate U+DFFF)"},
        {"path": "/nested/k\udfff/1", "message": "text that is not valid Unicode (a lone surrogate U+D83D)"},
        {"path": "/text", "message": "text that is not valid Unicode (a lone surrogate U+D800)"},
    ]


def test_text_beyond_the_basic_plane_is_valid() -> None:
    app = local_app(tools=("create",))
    prepared = ArgumentValidator().prepare(app, app.tools[0], {"text": "🍅 漢字"})
    assert prepared["text"] == "🍅 漢字"


def tool_with(parameters: dict[str, Any]) -> tuple[AppDescriptor, Tool]:
    app = local_app(tools=("create",))
    return app, app.tools[0].model_copy(update={"parameters": parameters})


def refusal(parameters: dict[str, Any], arguments: dict[str, Any]) -> AaiError:
    app, tool = tool_with(parameters)
    with pytest.raises(AaiError) as caught:
        ArgumentValidator().prepare(app, tool, arguments)
    assert caught.value.code is ErrorCode.INVALID_PARAMS
    return caught.value


TAGS = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string", "minLength": 3}}},
}


def test_a_number_beyond_float_range_is_invalid_params_naming_where() -> None:
    """JSON `1e400` arrives as infinity: no JSON writer, so no app, can take it."""
    error = refusal({"type": "object"}, {"n": [1.5, float("inf")], "m": float("-inf")})

    assert error.data["violations"] == [
        {"path": "/m", "message": "a number beyond the range of a 64-bit float (about 1.8e308)"},
        {"path": "/n/1", "message": "a number beyond the range of a 64-bit float (about 1.8e308)"},
    ]


def test_the_violations_reported_are_capped_and_the_rest_counted() -> None:
    error = refusal(TAGS, {"tags": [1] * 5000})

    violations = error.data["violations"]
    assert len(violations) == MAX_LISTED_VIOLATIONS
    assert [v["path"] for v in violations[:3]] == ["/tags/0", "/tags/1", "/tags/2"]  # in document order
    assert error.data["violations_complete"] is False
    assert error.data["violations_unlisted"] == 5000 - MAX_LISTED_VIOLATIONS
    assert error.message.endswith(f"(and {5000 - 10} more)")


def test_long_violation_messages_are_cut_and_their_total_size_is_capped() -> None:
    many_long = {"tags": ["x" * 100_000] * 40}
    error = refusal(
        {"type": "object", "properties": {"tags": {"type": "array", "items": {"maxLength": 3}}}}, many_long
    )

    violations = error.data["violations"]
    assert all(len(v["message"]) <= MAX_VIOLATION_CHARS for v in violations)
    assert sum(len(v["message"]) + len(v["path"]) for v in violations) <= MAX_VIOLATIONS_CHARS
    assert error.data["violations_unlisted"] == 40 - len(violations)
    assert len(json.dumps(error.to_payload())) < 4 * MAX_VIOLATIONS_CHARS


def test_arguments_with_too_many_values_to_check_for_every_violation_report_the_first() -> None:
    """jsonschema-rs builds every error before yielding one: 20 000 here, millions in 4 MiB."""
    error = refusal(TAGS, {"tags": ["fine", *[1] * (EVERY_VIOLATION_VALUES * 2)]})

    assert error.data["violations"] == [{"path": "/tags/1", "message": '1 is not of type "string"'}]
    assert error.data["violations_complete"] is False
    assert "further violations were not looked for" in error.message


def test_many_lone_surrogates_are_capped_like_schema_violations() -> None:
    error = refusal({"type": "object"}, {"texts": ["\ud800"] * 5000})

    assert len(error.data["violations"]) == MAX_LISTED_VIOLATIONS
    assert error.data["violations_complete"] is False


# --------------------------------------------------------------------------- compiled schemas

COUNT = {"type": "object", "properties": {"n": {"type": "integer"}}}
WORD = {"type": "object", "properties": {"n": {"type": "string"}}}


def test_a_refreshed_tool_at_the_address_of_its_freed_predecessor_is_checked_against_its_own_schema() -> None:
    # A refreshed web app frees its old tools; CPython hands the memory, and so the id, of a
    # freed object to the next object of its size. A validator found by id would be the old one.
    validator = ArgumentValidator()
    app = local_app(tools=("create",))
    for _ in range(100):
        old = app.tools[0].model_copy(update={"parameters": COUNT})
        assert validator.prepare(app, old, {"n": 1}) == {"n": 1}
        freed = id(old)
        del old
        new = app.tools[0].model_copy(update={"parameters": WORD})
        if id(new) == freed:
            break
    else:
        pytest.fail("no new tool was ever placed at a freed tool's address: the case cannot be set up here")

    assert validator.prepare(app, new, {"n": "one"}) == {"n": "one"}
    with pytest.raises(AaiError) as caught:
        validator.prepare(app, new, {"n": 1})
    assert caught.value.data["violations"] == [{"path": "/n", "message": '1 is not of type "string"'}]
