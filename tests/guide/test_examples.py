"""Example arguments: always valid for the bundled and spec tools, valid for generated schemas,
and built from the best hint a schema offers."""

from __future__ import annotations

import json
import math
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor.model import Tool
from aai_gateway.guide import example_arguments
from aai_gateway.guide.patterns import pattern_example

from .helpers import every_tool

JsonDict = dict[str, Any]


def valid(schema: JsonDict, value: Any) -> bool:
    return bool(jsonschema_rs.Draft7Validator(schema).is_valid(value))


def obj(properties: JsonDict, required: list[str] | None = None, **extra: Any) -> JsonDict:
    return {"type": "object", "properties": properties, "required": required or [], **extra}


def only(schema: JsonDict, name: str = "value") -> Any:
    """The example value of one required property with `schema`."""
    return example_arguments(obj({name: schema}, [name]))[name]


# --------------------------------------------------------------------------- real descriptors


@pytest.mark.parametrize(("label", "tool"), every_tool(), ids=[label for label, _ in every_tool()])
def test_the_example_of_every_bundled_and_spec_tool_is_valid(label: str, tool: Tool) -> None:
    args = example_arguments(tool.parameters)
    assert valid(tool.parameters, args), (label, args)


def test_every_required_property_appears_in_the_example() -> None:
    for _, tool in every_tool():
        required = tool.parameters.get("required", [])
        assert set(required) <= set(example_arguments(tool.parameters))


# --------------------------------------------------------------------------- generated schemas

NAMES = st.sampled_from(
    ["name", "title", "query", "email", "url", "id", "task_id", "path", "date", "due", "limit", "count",
     "body", "tags", "start", "end", "to", "from", "level", "price", "x", "flag", "value", "items"]
)  # fmt: skip
FORMATS = st.sampled_from(["date", "date-time", "time", "email", "uri", "uuid", "ipv4", "hostname"])
PATTERNS = st.sampled_from(
    ["^[a-z]+$", "^[A-Z]{2}$", "^\\d{3}-\\d{4}$", "^(foo|bar)[0-9]*$", "^[^\\s,]{1,40}$"]
)


@st.composite
def integers(draw: st.DrawFn, kind: str = "integer") -> JsonDict:
    schema: JsonDict = {"type": kind}
    low = draw(st.none() | st.integers(-1000, 1000))
    span = draw(st.integers(12, 500))  # room for a multiple of 5 between exclusive bounds
    if low is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
    if draw(st.booleans()):
        schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = (low or 0) + span
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([1, 2, 5]))
    if draw(st.booleans()):
        schema["default"] = draw(st.integers(-5, 5))
    return schema


@st.composite
def strings(draw: st.DrawFn) -> JsonDict:
    choice = draw(st.sampled_from(["plain", "length", "format", "pattern", "enum"]))
    schema: JsonDict = {"type": "string"}
    if choice == "length":
        low = draw(st.integers(0, 20))
        schema.update(minLength=low, maxLength=low + draw(st.integers(0, 20)))
    elif choice == "format":
        schema["format"] = draw(FORMATS)
    elif choice == "pattern":
        schema["pattern"] = draw(PATTERNS)
    elif choice == "enum":
        schema["enum"] = draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5, unique=True))
    if draw(st.booleans()):
        schema["description"] = draw(st.sampled_from(["e.g. 42", 'e.g. "Focus"', "e.g. the name", "Plain."]))
    return schema


LEAVES = st.one_of(
    strings(),
    integers(),
    integers("number"),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.just({"type": ["string", "null"]}),
    st.builds(lambda v: {"const": v}, st.integers() | st.text(max_size=5)),
    st.just({"enum": [1, "two", None]}),
    st.just({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
    st.just({"anyOf": [{"type": "integer", "minimum": 10}, {"type": "null"}]}),
    st.just({"$ref": "#/definitions/shared"}),
    st.just({}),
)


def containers(children: st.SearchStrategy[JsonDict]) -> st.SearchStrategy[JsonDict]:
    @st.composite
    def objects(draw: st.DrawFn) -> JsonDict:
        properties = draw(st.dictionaries(NAMES, children, max_size=6))
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
        schema = obj(properties, required)
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    @st.composite
    def arrays(draw: st.DrawFn) -> JsonDict:
        schema: JsonDict = {"type": "array", "items": draw(children)}
        unique = draw(st.booleans())
        low = draw(st.integers(0, 1 if unique else 3))
        schema["minItems"] = low
        if draw(st.booleans()):
            schema["maxItems"] = low + draw(st.integers(0, 3))
        if unique:
            schema["uniqueItems"] = True
        return schema

    return objects() | arrays()


PROPERTY_SCHEMAS = st.recursive(LEAVES, containers, max_leaves=12)


@given(
    properties=st.dictionaries(NAMES, PROPERTY_SCHEMAS, max_size=8),
    data=st.data(),
)
def test_generated_schemas_get_valid_examples(properties: JsonDict, data: st.DataObject) -> None:
    required = data.draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
    schema = obj(properties, required, additionalProperties=data.draw(st.booleans()))
    schema["definitions"] = {"shared": {"type": "object", "properties": {"id": {"type": "integer"}}}}
    args = example_arguments(schema)
    assert valid(schema, args), args
    assert set(required) <= set(args)


# --------------------------------------------------------------------------- choices


def test_at_most_three_optional_properties_are_added_to_the_required_ones() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(8)}
    args = example_arguments(obj(properties, ["p7"]))
    assert list(args) == ["p0", "p1", "p2", "p7"]


def test_nested_objects_show_at_most_two_optional_properties() -> None:
    inner = obj({f"p{i}": {"type": "string"} for i in range(5)})
    assert list(example_arguments(obj({"outer": inner}, ["outer"]))["outer"]) == ["p0", "p1"]


def test_optional_properties_with_a_meaningful_default_are_left_out_when_others_exist() -> None:
    schema = obj({"limit": {"type": "integer", "default": 20}, "tag": {"type": "string"}})
    assert example_arguments(schema) == {"tag": "work"}


def test_an_optional_property_with_a_default_is_shown_with_another_value() -> None:
    schema = obj({"direction": {"enum": ["next", "previous"], "default": "next"}})
    assert example_arguments(schema) == {"direction": "previous"}
    assert example_arguments(obj({"flag": {"type": "boolean", "default": True}})) == {"flag": False}


def test_alternatives_that_name_each_other_are_not_both_shown() -> None:
    schema = obj(
        {
            "start": {"type": "string", "format": "date-time"},
            "end": {"type": "string", "format": "date-time", "description": "Or give durationMinutes."},
            "durationMinutes": {"type": "integer", "minimum": 1},
        },
        ["start"],
    )
    assert list(example_arguments(schema)) == ["start", "end"]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "examples": ["from examples"], "default": "d"}, "from examples"),
        ({"type": "string", "example": "from example", "default": "d"}, "from example"),
        ({"type": "integer", "default": 7, "minimum": 0}, 7),
        ({"const": "fixed"}, "fixed"),
        ({"enum": ["first", "second"]}, "first"),
        ({"type": "string", "format": "date"}, "2025-06-30"),
        ({"type": "string", "format": "email"}, "alex@example.com"),
        ({"type": "string", "format": "uuid"}, "123e4567-e89b-12d3-a456-426614174000"),
        ({"type": "string", "format": "ipv4"}, "192.0.2.10"),
        ({"type": "string", "description": 'A playlist, e.g. "Focus".'}, "Focus"),
        ({"type": "integer", "description": "Status code, e.g. 404 or 503."}, 404),
        (
            {"type": "array", "items": {"type": "string"}, "description": 'e.g. ["pdf", "docx"]'},
            ["pdf", "docx"],
        ),
        ({"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"}, "AAA-00"),
        ({"type": "integer", "minimum": 0, "maximum": 100}, 50),
        ({"type": "integer", "exclusiveMinimum": 0}, 1),
        ({"type": "number", "exclusiveMaximum": 0}, -0.5),
        ({"type": "string", "minLength": 10}, "examplexxx"),
        ({"type": "string", "maxLength": 3}, "exa"),
        ({"type": ["null", "boolean"]}, True),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True}, [1, 2, 3]),
    ],
)
def test_values_come_from_the_best_hint_the_schema_offers(schema: JsonDict, expected: Any) -> None:
    assert only(schema) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("title", "Quarterly report"),
        ("query", "quarterly report"),
        ("email", "alex@example.com"),
        ("homepage_url", "https://example.com"),
        ("project_id", "project_123"),
        ("sessionId", "session_123"),
        ("path", "/home/user/Documents/report.txt"),
        ("due", "2025-06-30"),
        ("message", "Hello from the assistant"),
        ("tag", "work"),
    ],
)
def test_string_values_are_guessed_from_the_property_name(name: str, expected: str) -> None:
    assert only({"type": "string"}, name) == expected


def test_number_values_are_guessed_from_the_name_within_the_bounds() -> None:
    assert only({"type": "integer", "minimum": 1, "maximum": 100}, "limit") == 10
    assert only({"type": "integer", "minimum": 50, "maximum": 100}, "limit") == 75
    assert only({"type": "integer"}, "durationMinutes") == 30


def test_a_folder_path_gets_a_folder() -> None:
    assert only({"type": "string", "description": "Folder to list."}, "path") == "/home/user/project"


def test_array_items_are_named_after_the_singular_of_the_array() -> None:
    assert only({"type": "array", "items": {"type": "string"}}, "tags") == ["work"]


def test_local_references_are_resolved() -> None:
    schema = obj({"who": {"$ref": "#/definitions/person"}}, ["who"])
    schema["definitions"] = {"person": obj({"email": {"type": "string", "format": "email"}}, ["email"])}
    assert example_arguments(schema) == {"who": {"email": "alex@example.com"}}


def test_recursive_references_terminate_with_a_valid_value() -> None:
    node = obj(
        {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/n"}}}
    )
    node["required"] = ["name", "children"]
    schema = obj({"root": {"$ref": "#/definitions/n"}}, ["root"])
    schema["definitions"] = {"n": node}
    args = example_arguments(schema)
    assert valid(schema, args), args


def test_all_of_parts_are_merged() -> None:
    schema = obj(
        {"item": {"allOf": [obj({"a": {"type": "integer"}}, ["a"]), obj({"b": {"type": "boolean"}}, ["b"])]}},
        ["item"],
    )
    assert example_arguments(schema) == {"item": {"a": 1, "b": True}}


def test_min_properties_pulls_in_more_optional_properties() -> None:
    schema = obj(
        {
            "id": {"type": "string"},
            "a": {"type": "integer", "default": 1},
            "b": {"type": "integer", "default": 2},
        },
        ["id"],
    )
    schema.update(minProperties=3, additionalProperties=False)
    args = example_arguments(schema)
    assert valid(schema, args) and len(args) == 3


def test_a_schema_without_properties_gives_empty_arguments() -> None:
    assert example_arguments({"type": "object"}) == {}
    assert example_arguments({}) == {}


# --------------------------------------------------------------------------- patterns


@pytest.mark.parametrize(
    "pattern",
    [
        "^[A-Za-z_-][A-Za-z0-9_-]*(\\.[A-Za-z_-][A-Za-z0-9_-]*)+$",
        "^([01]\\d|2[0-3]):[0-5]\\d$",
        "^[^\\s,]{1,40}$",
        "^\\d{4}-\\d{2}-\\d{2}( \\d{2}:\\d{2})?$",
        "^(?:abc|def)+x?$",
        "^(a)\\1$",
        "^\\w+@\\w+\\.com$",
        "[0-9a-f]{32}",
    ],
)
def test_a_pattern_example_matches_its_pattern(pattern: str) -> None:
    text = pattern_example(pattern)
    assert text is not None
    assert valid({"type": "string", "pattern": pattern}, text)


def test_extra_repetitions_make_a_pattern_example_longer() -> None:
    assert pattern_example("^a+$") == "a"
    assert pattern_example("^a+$", extra=3) == "aaaa"


def test_a_pattern_python_cannot_parse_gives_no_example() -> None:
    assert pattern_example("(unclosed") is None


# --------------------------------------------------------------------------- hostile schemas


def test_a_min_length_beyond_any_memory_gives_a_short_example() -> None:
    string = {"type": "string", "minLength": 10**18}

    args = example_arguments({"type": "object", "properties": {"s": string}, "required": ["s"]})

    assert isinstance(args["s"], str) and len(args["s"]) <= 1_010


def test_a_min_items_of_millions_gives_a_short_example() -> None:
    array = {"type": "array", "items": {}, "minItems": 10**7}
    schema = {"type": "object", "properties": {"xs": array}, "required": ["xs"]}

    args = example_arguments(schema)

    assert len(args["xs"]) <= 20


@pytest.mark.parametrize(
    "number",
    [
        {"type": "number", "minimum": 1e308, "maximum": 1.5, "multipleOf": 0.5},
        {"type": "number", "minimum": 1.7e308, "maximum": 0, "multipleOf": 1e-300},
        {"type": "integer", "minimum": 10**400},
    ],
    ids=["a step past the float range", "a tiny step from a huge start", "an integer beyond every float"],
)
def test_bounds_and_steps_at_the_float_limits_give_a_number_without_overflowing(number: JsonDict) -> None:
    args = example_arguments({"type": "object", "properties": {"weight": number}, "required": ["weight"]})

    value = args["weight"]
    assert isinstance(value, int) or math.isfinite(value)


@pytest.mark.parametrize(
    "description",
    ["e.g. 1" + "0" * 5000, "for example " + "[" * 100_000],
    ids=["5000-digit number", "100000 open brackets"],
)
def test_a_description_quoting_no_usable_json_value_gives_an_ordinary_example(description: str) -> None:
    schema = {"type": "object", "properties": {"weight": {"type": "number", "description": description}}}

    args = example_arguments({**schema, "required": ["weight"]})

    assert args == {"weight": 1}


def test_a_description_quoting_infinity_never_puts_it_in_an_example() -> None:
    options = {"type": "object", "description": 'Options, e.g. {"scale": 1e999}'}

    args = example_arguments({"type": "object", "properties": {"options": options}, "required": ["options"]})

    json.dumps(args, allow_nan=False)
