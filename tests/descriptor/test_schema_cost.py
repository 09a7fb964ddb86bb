"""Schemas whose shared definitions multiply into more checks than any value should cost are
refused when the descriptor loads (a wrong value would otherwise keep jsonschema-rs busy for
hours, in the guide and on every call); recursive and ordinary schemas load as before."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.descriptor.schema_cost import MAX_CHECKS, CostlySchemaError, costly_value

from .helpers import JsonDict, load, only_error, valid_a, valid_b, valid_c, with_changes

DOCUMENTS = {"A": valid_a, "B": valid_b, "C": valid_c}
PARAMETERS = {
    "A": "/tools/0/parameters",
    "B": "/platforms/linux/tools/0/parameters",
    "C": "/tools/0/parameters",
}


def argument(schema: JsonDict, definitions: JsonDict) -> JsonDict:
    return {"type": "object", "properties": {"x": schema}, "required": ["x"], "definitions": definitions}


def alternatives_to_the_next(levels: int, width: int = 2) -> JsonDict:
    """`d0` is `anyOf` of `width` references to `d1`, which is the same for `d2`...: width**levels
    paths to the last one, in a few hundred bytes."""
    definitions: JsonDict = {
        f"d{i}": {"anyOf": [{"$ref": f"#/definitions/d{i + 1}"} for _ in range(width)]} for i in range(levels)
    }
    definitions[f"d{levels}"] = {"type": "integer"}
    return argument({"$ref": "#/definitions/d0"}, definitions)


def through_ids(levels: int) -> JsonDict:
    """The same as `alternatives_to_the_next`, with the references written as `$id` URIs."""
    definitions: JsonDict = {
        f"d{i}": {
            "$id": f"urn:aai:d{i}",
            "anyOf": [{"$ref": f"urn:aai:d{i + 1}"}, {"$ref": f"urn:aai:d{i + 1}"}],
        }
        for i in range(levels)
    }
    definitions[f"d{levels}"] = {"$id": f"urn:aai:d{levels}", "type": "integer"}
    return argument({"$ref": "urn:aai:d0"}, definitions)


def nested_lists_of_alternatives() -> JsonDict:
    """A recursive schema where each level of nesting triples the paths: `[[[[1]]]]` costs 3**4."""
    branch = {"type": "array", "items": {"$ref": "#/definitions/a"}}
    return argument({"$ref": "#/definitions/a"}, {"a": {"anyOf": [branch, dict(branch), dict(branch)]}})


def a_chain_of_references(length: int) -> JsonDict:
    definitions: JsonDict = {f"d{i}": {"$ref": f"#/definitions/d{i + 1}"} for i in range(length)}
    definitions[f"d{length}"] = {"type": "string"}
    return argument({"$ref": "#/definitions/d0"}, definitions)


@pytest.mark.parametrize("dialect", ["A", "B", "C"])
def test_alternatives_that_refer_to_alternatives_are_refused_at_the_parameters(dialect: str) -> None:
    pointer = PARAMETERS[dialect]
    document = with_changes(DOCUMENTS[dialect](), (pointer, alternatives_to_the_next(30)))

    problem = only_error(load(document))

    assert problem.pointer == pointer
    assert "too costly to check" in problem.message
    assert f"a value at /x would be checked against more than {MAX_CHECKS} subschemas" in problem.message


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (through_ids(30), "/x"),
        (nested_lists_of_alternatives(), "/x/*/*/*/*/*/*"),
        (a_chain_of_references(50_000), "/x"),
    ],
    ids=["references by $id", "alternatives multiplying with each level of nesting", "a 50000-link chain"],
)
def test_other_shapes_of_runaway_checking_are_refused_too(schema: JsonDict, where: str) -> None:
    document = with_changes(valid_c(), ("/tools/0/parameters", schema))

    problem = only_error(load(document))

    assert problem.pointer == "/tools/0/parameters"
    assert f"a value at {where} would be checked against more than {MAX_CHECKS}" in problem.message


def test_returns_schemas_are_held_to_the_same_bound() -> None:
    document = with_changes(valid_c(), ("/tools/0/returns", alternatives_to_the_next(30)))

    problem = only_error(load(document))

    assert problem.pointer == "/tools/0/returns"
    assert "returns is too costly to check" in problem.message


@pytest.mark.parametrize(
    "schema",
    [
        argument(
            {"$ref": "#/definitions/json"},
            {
                "json": {
                    "anyOf": [
                        {"type": ["string", "number", "boolean", "null"]},
                        {"type": "array", "items": {"$ref": "#/definitions/json"}},
                        {"type": "object", "additionalProperties": {"$ref": "#/definitions/json"}},
                    ]
                }
            },
        ),
        argument(
            {"$ref": "#/definitions/node"},
            {
                "node": {
                    "type": "object",
                    "properties": {
                        "left": {"$ref": "#/definitions/node"},
                        "right": {"$ref": "#/definitions/node"},
                        "children": {"type": "array", "items": {"$ref": "#/definitions/node"}},
                    },
                }
            },
        ),
        alternatives_to_the_next(8),
        a_chain_of_references(1_000),
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5_000)}},
    ],
    ids=["any JSON value", "a tree", "256 paths", "a 1000-link chain", "5000 properties"],
)
def test_recursive_shared_and_large_schemas_within_the_bound_load(schema: JsonDict) -> None:
    result = load(with_changes(valid_c(), ("/tools/0/parameters", schema)))

    assert result.errors == [], [p.render() for p in result.errors]


def test_a_schema_too_large_to_count_in_time_is_an_error_not_a_hang() -> None:
    wide: dict[str, Any] = {
        f"p{i}": {"type": "object", "properties": {"a": {"allOf": [{}]}}} for i in range(50_000)
    }

    with pytest.raises(CostlySchemaError, match="steps"):
        costly_value({"type": "object", "properties": wide})
