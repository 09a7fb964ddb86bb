"""The rules every executor reads an app's JSON answer by (pure functions)."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.errors import AnswerTooDeepError
from aai_gateway.executors.answer_json import (
    MAX_ANSWER_DEPTH,
    check_answer_depth,
    loads_answer,
    nested_deeper_than,
    scan_json,
)


def nest(levels: int) -> Any:
    """`levels` levels of objects and arrays, alternating, with tuples among them."""
    value: Any = "leaf"
    for level in range(levels):
        value = [value] if level % 3 == 0 else {"k": value} if level % 3 == 1 else ("x", value)
    return value


@pytest.mark.parametrize("levels", [0, 1, 2, 50, MAX_ANSWER_DEPTH])
def test_values_up_to_the_limit_pass(levels: int) -> None:
    assert not nested_deeper_than(nest(levels), MAX_ANSWER_DEPTH)
    check_answer_depth(nest(levels), app_id="a", tool="t")


@pytest.mark.parametrize("levels", [MAX_ANSWER_DEPTH + 1, 5000])
def test_values_past_the_limit_are_refused_naming_app_tool_and_limit(levels: int) -> None:
    with pytest.raises(AnswerTooDeepError) as caught:
        check_answer_depth({"wide": list(range(1000)), "deep": nest(levels - 1)}, app_id="dev.a", tool="t")
    assert caught.value.data == {"app": "dev.a", "tool": "t", "max_depth": MAX_ANSWER_DEPTH}


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"x": -Infinity}'])
def test_nan_and_infinity_are_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="is not JSON"):
        loads_answer(text, app_id="a", tool="t")


def test_text_too_deep_for_the_parser_is_answer_too_deep_and_bytes_that_are_not_utf8_not_json() -> None:
    with pytest.raises(AnswerTooDeepError):
        loads_answer("[" * 100_000 + "]" * 100_000, app_id="a", tool="t")
    with pytest.raises(ValueError, match="not UTF-8"):
        loads_answer(b'"\xff"', app_id="a", tool="t")


def test_the_scan_reports_each_unwritable_value_with_its_escaped_pointer_and_counts_every_value() -> None:
    value = {
        "a~b": [1, True, None, {"c/d": "x\ud800"}],
        "n": (2.5, float("inf")),
        "\udc00": "ok",
        "fine": ["ascii", "ünïcode", {"deep": [[]]}],
    }

    scan = scan_json(value, max_depth=10, max_unwritable=10)

    assert sorted((u.pointer, u.reason) for u in scan.unwritable) == [
        ("/a~0b/3/c~1d", "text that is not valid Unicode (a lone surrogate U+D800)"),
        ("/n/1", "a number beyond the range of a 64-bit float (about 1.8e308)"),
        ("/\udc00", "text that is not valid Unicode (a lone surrogate U+DC00)"),
    ]
    assert scan.values == 17 and not scan.too_deep
    assert len(scan_json(value, max_unwritable=2).unwritable) == 2
    assert scan_json(value, max_depth=4, max_unwritable=0).too_deep  # {"fine": [{"deep": [[]]}]}
    assert not scan_json(value, max_depth=5, max_unwritable=0).too_deep
