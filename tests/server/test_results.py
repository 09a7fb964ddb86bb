"""Tool results are always writable as JSON: what cannot be written never leaves as a result."""

from __future__ import annotations

import json

import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.server import results


@pytest.mark.parametrize(
    "value",
    [{"x": "a\ud800"}, {"a\udc00": 1}, "\udfff", {"x": float("inf")}, [float("nan")]],
    ids=["surrogate in a value", "surrogate in a key", "surrogate alone", "infinity", "NaN"],
)
def test_a_success_that_cannot_be_written_raises_so_the_server_reports_internal_error(value: object) -> None:
    with pytest.raises(ValueError):  # UnicodeEncodeError, or json refusing NaN and Infinity
        results.success(value)


def test_an_errors_lone_surrogates_are_written_in_letters_and_its_code_kept() -> None:
    error = AaiError("bad \udfff thing", {"app_said": {"k\ud800": "v\udc00"}}, ErrorCode.AUTH_DENIED)

    text = results.failure(error).content[0].text  # type: ignore[union-attr]

    text.encode("utf-8")
    assert json.loads(text) == {
        "error": {
            "code": "AUTH_DENIED",
            "message": "bad \\udfff thing",
            "data": {"app_said": {"k\\ud800": "v\\udc00"}},
        }
    }


def test_an_object_result_is_compact_json_text_and_the_same_object_as_structured_content() -> None:
    value = {"name": "Zoë", "tags": ["a", "b"], "nested": {"n": 1.5, "ok": True, "none": None}}

    result = results.success(value)

    text = result.content[0].text  # type: ignore[union-attr]
    assert text == '{"name":"Zoë","tags":["a","b"],"nested":{"n":1.5,"ok":true,"none":null}}'
    assert json.loads(text) == value
    assert result.structured_content == value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([1, {"a": [2, 3]}], '[1,{"a":[2,3]}]'),
        (42, "42"),
        (None, "null"),
        ("as it is: {\n}", "as it is: {\n}"),
    ],
    ids=["array", "number", "null", "text"],
)
def test_other_results_are_compact_json_text_or_the_text_itself_without_structured_content(
    value: object, text: str
) -> None:
    result = results.success(value)

    assert result.content[0].text == text  # type: ignore[union-attr]
    assert result.structured_content is None
