"""Hostile values in one field of an otherwise valid descriptor: each is a problem of that file at its
JSON pointer, told in a short message, and nothing the loader does with them can raise.

The fuzzing of every field with such values is in test_hostile_value_fuzzing.py; these are the
root causes it found, one test each, and the safety net that catches what no test foresaw.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import checks, load_text
from aai_gateway.discovery.catalog import build_catalog
from aai_gateway.discovery.sources import Pattern, SourceSpec

from .helpers import (
    JsonDict,
    error_pointers,
    load,
    only_error,
    source,
    valid_a,
    valid_b,
    valid_c,
    with_changes,
)

DOCUMENTS = {"A": valid_a, "B": valid_b, "C": valid_c}
TOOL_POINTER = {"A": "/tools/0", "B": "/platforms/linux/tools/0", "C": "/tools/0"}
HUGE_VERSION = "1" + "0" * 5000 + ".0.0"


def rejected_at(document: JsonDict | str, pointer: str, *words: str) -> str:
    problem = only_error(load(document))
    assert problem.pointer == pointer, problem.render()
    for word in words:
        assert word in problem.message, problem.render()
    return problem.message


def with_literal(document: JsonDict, pointer: str, literal: str) -> str:
    """The document as JSON text with the value at `pointer` written as `literal` (JSON text that
    Python's json module cannot produce, such as an integer of 5,000 digits)."""
    mark = "\u2063literal\u2063"
    return json.dumps(with_changes(document, (pointer, mark))).replace(json.dumps(mark), literal)


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("dialect", ["A", "B", "C"])
def test_a_version_of_thousands_of_digits_is_too_long_at_version(dialect: str) -> None:
    document = with_changes(DOCUMENTS[dialect](), ("/version", HUGE_VERSION))

    message = rejected_at(document, "/version", "too long", "256 characters", "(5005 characters)")

    assert message.startswith("version '1000000000")
    assert len(message) < 200


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("pointer", "digits"),
    [
        ("/tools/0/parameters/properties/limit/minimum", 400),
        ("/tools/0/parameters/properties/limit/minimum", 5000),
        ("/tools/0/parameters/properties/limit/default", 310),
        ("/x-number", 4300),
    ],
)
def test_an_integer_beyond_every_float_is_refused_where_it_is_written(pointer: str, digits: int) -> None:
    text = with_literal(valid_c("web"), pointer, "-" + "9" * digits)

    rejected_at(text, pointer, "too large", "1.8e308")


def test_the_largest_integer_a_float_holds_is_still_a_number() -> None:
    largest = str(int(1.7976931348623157e308))
    text = with_literal(valid_c("web"), "/tools/0/parameters/properties/limit/maximum", largest)

    result = load(text)

    assert result.errors == []


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize("dialect", ["A", "B", "C"])
@pytest.mark.parametrize("pattern", ["a{99999999999}", "\\p{NoSuchProperty}"])
def test_a_pattern_the_argument_validator_cannot_compile_is_refused_at_the_pattern(
    dialect: str, pattern: str
) -> None:
    pointer = TOOL_POINTER[dialect] + "/parameters/properties/query/pattern"
    document = with_changes(DOCUMENTS[dialect](), (pointer, pattern))

    rejected_at(document, pointer, "cannot be used as a schema", "regex")


# --------------------------------------------------------------------------- messages stay short


@pytest.mark.parametrize(
    ("pointer", "words"),
    [
        ("/app/id", ("app id 'xxxxxxxx", "(100000 characters)")),
        ("/tools/0/name", ("tool name 'xxxxxxxx", "(100000 characters)")),
        ("/execution/baseUrl", ("baseUrl 'xxxxxxxx", "(100000 characters)")),
        ("/platform", ("unknown 'platform' \"xxxxxxxx", "(100002 characters)")),
        ("/tools/0/parameters/properties/query/type", ("not a JSON Schema type: 'xxxxxxxx",)),
        ("/tools/0/parameters/properties", ("invalid in parameters",)),
    ],
)
def test_a_huge_value_is_quoted_by_its_start_and_length(pointer: str, words: tuple[str, ...]) -> None:
    document = with_changes(valid_c("web"), (pointer, "x" * 100_000))

    message = rejected_at(document, pointer, *words)

    assert len(message) < 400, message[:500]


def test_a_placeholder_lists_at_most_a_few_of_the_declared_parameters() -> None:
    properties = {f"parameter_{i}": {"type": "string"} for i in range(1000)}
    document = with_changes(
        valid_b(),
        ("/platforms/linux/tools/0/parameters/properties", properties),
        ("/platforms/web/tools/0/parameters/properties", properties),
        ("/platforms/macos/tools/0/parameters/properties", properties),
    )

    result = load(document)

    assert error_pointers(result) == ["/platforms/macos/tools/0/script", "/platforms/web/tools/0/body/query"]
    for problem in result.errors:
        assert "names no declared parameter" in problem.message
        assert problem.message.endswith("parameter_102, … (1000 in all))")


def test_a_lone_surrogate_in_a_huge_string_is_quoted_by_its_start() -> None:
    text = json.dumps(valid_c("web")).replace('"Notes"', '"\\ud800' + "x" * 100_000 + '"', 1)

    message = rejected_at(text, "/app/name/en", "not valid Unicode text", "\\ud800", "(100001 characters)")

    assert len(message) < 200


# --------------------------------------------------------------------------- the safety net


@pytest.fixture
def broken_version_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that fails the way an unforeseen bug would."""

    def explode(*_args: Any, **_kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug in a check")

    monkeypatch.setattr(checks, "check_version", explode)


@pytest.mark.usefixtures("broken_version_check")
def test_an_unexpected_exception_while_loading_is_a_problem_of_that_file(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="aai_gateway.descriptor.loader"):
        result = load_text(json.dumps(valid_c("web")), source("apps/notes.json"), "linux")

    problem = only_error(result)
    assert problem.pointer == ""
    assert "ZeroDivisionError" in problem.message
    assert "bug in aai-gateway" in problem.message
    assert "report" in problem.message
    warning = next(r for r in caplog.records if r.levelno == logging.WARNING)
    assert "apps/notes.json" in warning.getMessage()
    assert "a bug in a check" not in warning.getMessage()  # exception text may quote the file
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)


@pytest.mark.usefixtures("broken_version_check")
def test_an_unexpected_exception_costs_one_file_of_the_catalog_not_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(valid_c("web")), encoding="utf-8")
    (tmp_path / "b.json").write_text(
        json.dumps(with_changes(valid_c("web"), ("/schemaVersion", 1))), encoding="utf-8"
    )  # a structural error: refused before any version check runs

    catalog = build_catalog([SourceSpec("test", tmp_path, Pattern.FILES, explicit=True)], "linux")

    assert catalog.entries == []
    reasons = {Path(s.path).name: s.reason for s in catalog.skipped}
    assert "ZeroDivisionError" in reasons["a.json"]
    assert "'schemaVersion' must be a string" in reasons["b.json"]
