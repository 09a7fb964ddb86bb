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
