"""The loader's fast path (jiter, one walk) takes only files the exact parser accepts, gives the
same document, and lets a schema skip the deep checks only when they would find nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor.checks import (
    DEEP_CHECK_KEYS,
    _compile_problem,
    _cost_problem,
    check_schema,
    may_be_costly_or_uncompilable,
    problems_with_schemas_plain,
)
from aai_gateway.descriptor.limits import MAX_NESTING
from aai_gateway.descriptor.loader import _parse_exactly, _plainly_valid

from .helpers import spec_fixture_paths
from .test_loader_fuzzing import encoded, json_values


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5).flatmap(encoded))
def test_the_fast_parse_takes_only_what_the_exact_parser_takes_and_reads_it_the_same(
    data: str | bytes,
) -> None:
    plain = _plainly_valid(data)
    document, problems = _parse_exactly(data)
    if plain is not None:
        assert problems == []
        assert plain.document == document
        assert json.dumps(plain.document, sort_keys=True) == json.dumps(document, sort_keys=True)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": {"b": 1, "\\u0062": 2}}',
        '{"a": 1e999}',
        '{"a": -1e999}',
        '{"a": 1' + "0" * 400 + "}",
        '{"a": [' + str(int(sys.float_info.max) + 1) + "]}",
        '{"a": {"b": -' + str(int(sys.float_info.max) * 2) + "}}",
        '{"a": "\\ud800"}',
        '{"a": NaN}',
        "[1]",
        "null",
        '{"a": ' + "[" * MAX_NESTING + "]" * MAX_NESTING + "}",
        b'{"a": "\xff"}',
    ],
)
def test_a_file_that_breaks_a_rule_is_left_to_the_exact_parser(text: str | bytes) -> None:
    assert _plainly_valid(text) is None


def test_a_file_nested_up_to_the_limit_takes_the_fast_path() -> None:
    depth = MAX_NESTING - 1
    plain = _plainly_valid('{"a": ' + "[" * depth + "]" * depth + "}")
    assert plain is not None


@pytest.mark.parametrize("key", ["$ref", "$id", "pattern", "patternProperties"])
def test_a_file_with_a_reference_or_a_regular_expression_anywhere_gets_the_deep_schema_checks(
    key: str,
) -> None:
    document = {"tools": [{"parameters": {"type": "object", "properties": {"x": {"enum": [{key: 1}]}}}}]}
    plain = _plainly_valid(json.dumps(document))
    assert plain is not None
    assert not plain.schemas_plain


@pytest.mark.parametrize("key", ["\\u0024ref", "$\\u0069d", "patt\\u0065rn", "\\u0070atternProperties"])
def test_a_key_of_the_deep_checks_spelled_with_escapes_still_gets_them(key: str) -> None:
    text = '{"tools": [{"parameters": {"properties": {"x": {"KEY": "a+"}}}}]}'.replace("KEY", key)
    plain = _plainly_valid(text)
    assert plain is not None
    assert not plain.schemas_plain


DEEP_KEYS = st.sampled_from([*sorted(DEEP_CHECK_KEYS), "type", "a", "$"])
NESTED = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.text(max_size=3)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(DEEP_KEYS, children, max_size=3)
    ),
    max_leaves=15,
)


def has_deep_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(key in DEEP_CHECK_KEYS or has_deep_key(item) for key, item in value.items())
    return isinstance(value, list) and any(has_deep_key(item) for item in value)


@given(NESTED, st.booleans())
def test_schemas_are_plain_exactly_when_no_object_anywhere_has_a_key_of_the_deep_checks(
    value: Any, ascii_only: bool
) -> None:
    plain = _plainly_valid(json.dumps({"v": value}, ensure_ascii=ascii_only))
    assert plain is not None
    assert plain.schemas_plain is not has_deep_key(value)


def test_a_file_with_more_objects_than_one_value_may_be_checked_against_gets_the_deep_schema_checks() -> None:
    document: dict[str, Any] = {"items": [{} for _ in range(2_001)]}
    plain = _plainly_valid(json.dumps(document))
    assert plain is not None
    assert not plain.schemas_plain


PLAIN_SCHEMAS = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]),
            "description": st.text(max_size=5),
            "maxLength": st.integers(0, 10**25),
            "minimum": st.floats(allow_nan=False, allow_infinity=False),
            "multipleOf": st.floats(min_value=1e-300, max_value=1e300),
            "format": st.sampled_from(["date", "email", "uri", "no-such-format", "regex"]),
            "enum": st.lists(st.one_of(st.integers(), st.text(max_size=3)), min_size=1, max_size=3),
        },
    ),
    lambda children: st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.just("object"),
                "properties": st.dictionaries(st.text(max_size=4), children, max_size=3),
            }
        ),
        st.fixed_dictionaries({"type": st.just("array"), "items": children}),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"not": children}),
        st.fixed_dictionaries({"if": children, "then": children, "else": children}),
        st.fixed_dictionaries({"additionalProperties": children, "propertyNames": st.just({"maxLength": 3})}),
    ),
    max_leaves=12,
)


@given(PLAIN_SCHEMAS)
def test_a_schema_without_references_or_regexes_that_the_meta_schema_passes_passes_the_deep_checks(
    schema: dict[str, Any],
) -> None:
    assert not may_be_costly_or_uncompilable(schema)
    fast = problems_with_schemas_plain(
        True, lambda: check_schema(schema, "/p", what="parameters", must_be_object=False)
    )
    if not fast:  # the meta-schema passed it: the deep checks it skipped find nothing either
        assert _cost_problem(schema, "/p", "parameters") is None
        assert _compile_problem(schema, "/p", "parameters") is None


def test_a_regular_expression_the_engine_cannot_compile_is_still_found() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "a{99999999}"}}}
    assert may_be_costly_or_uncompilable(schema)
    assert check_schema(schema, "/p", what="parameters", must_be_object=True)


@pytest.mark.parametrize(
    "path", [p for p in spec_fixture_paths() if p.suffix == ".json"], ids=lambda p: p.name
)
def test_every_spec_example_takes_the_fast_path_and_reads_as_the_exact_parser_reads_it(path: Path) -> None:
    data = path.read_bytes()
    plain = _plainly_valid(data)
    assert plain is not None
    assert plain.document == _parse_exactly(data)[0]


def test_an_ordinary_schema_is_known_plain_and_passes_without_the_deep_checks() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 10}}, "required": ["q"]}
    assert not may_be_costly_or_uncompilable(schema)
    checked = problems_with_schemas_plain(
        True, lambda: check_schema(schema, "/p", what="parameters", must_be_object=True)
    )
    assert checked == []
