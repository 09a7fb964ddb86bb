"""Parameters and returns in the guide: nesting, types, constraints, references."""

from __future__ import annotations

import jsonschema_rs

from aai_gateway.guide import render_guide

from .helpers import (
    EXAMPLES_DIR,
    example_calls,
    load,
    make_app,
    make_tool,
    section,
)

# --------------------------------------------------------------------------- parameters and returns


def test_nested_object_fields_are_indented_under_their_parent() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "com.example.ledgerdesk" / "aai.json", "windows"))
    assert (
        "- customer (object, required): Who is billed. An existing customer is matched by email, "
        "otherwise by name.\n"
        "  - name (string, required, non-empty)\n"
        "  - email (email string, optional)\n"
        "  - vatId (string, optional): Customer VAT or tax id, if any.\n"
        "  - address (object, optional)\n"
        "    - street (string, optional)\n"
        "    - city (string, required)\n"
        "    - postalCode (string, optional)\n"
        "    - country (string, required, pattern `^[A-Z]{2}$`): ISO 3166-1 alpha-2 code, e.g. DE.\n"
    ) in guide


def test_fields_of_objects_inside_arrays_are_indented_under_the_array() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "com.example.ledgerdesk" / "aai.json", "windows"))
    assert (
        "- lineItems (array of object, required, 1–200 items): What is billed.\n"
        "  - description (string, required, non-empty)\n"
        "  - quantity (number, optional, > 0, default 1)\n"
    ) in guide


def test_enums_defaults_and_required_markers_are_shown() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"))
    assert "- message (string, required): Text to send.\n" in guide
    assert '  - priority ("low" | "normal" | "high", optional, default "normal")\n' in guide
    assert "- repeat (integer, optional, 1 to 10, default 1): How many times" in guide


def test_constraints_of_every_kind_are_shown() -> None:
    parameters = {
        "type": "object",
        "properties": {
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "step": {"type": "integer", "multipleOf": 5, "minimum": 0},
            "code": {"type": "string", "minLength": 2, "maxLength": 2, "pattern": "^[A-Z]+$"},
            "ids": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "minItems": 1,
                "uniqueItems": True,
            },
            "when": {"type": ["string", "null"], "format": "date-time"},
            "kind": {"const": "fixed"},
            "mode": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "blob": {},
        },
        "required": ["ratio"],
        "minProperties": 2,
    }
    guide = render_guide(make_app(make_tool(parameters=parameters)))
    assert "**Parameters** (at least 2 fields):\n" in guide
    assert "- ratio (number, required, > 0, <= 1)\n" in guide
    assert "- step (integer, optional, >= 0, multiple of 5)\n" in guide
    assert "- code (string, optional, 2 chars, pattern `^[A-Z]+$`)\n" in guide
    assert "- ids (array of integer, optional, at least 1 item, unique, each >= 1)\n" in guide
    assert "- when (date-time string | null, optional)\n" in guide
    assert '- kind ("fixed", optional)\n' in guide
    assert "- mode (string | integer, optional)\n" in guide
    assert "- blob (any, optional)\n" in guide


def test_returns_are_described_with_their_fields() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"))
    assert (
        "**Returns**: object — What the server received, echoed back.\n\n"
        "- method (string)\n"
        "- url (string)\n"
        "- args (object with string values, optional): Query-string arguments.\n"
    ) in section(guide, "### echo_message")
    assert "**Returns**" not in section(guide, "### get_status")


def test_identical_returns_point_to_the_first_tool_that_describes_them() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"))
    assert "**Returns**: same as echo_message.\n" in section(guide, "### delayed_reply")


def test_nullable_structured_returns_show_the_fields_of_the_object() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.timetracker" / "aai.json"))
    assert "**Returns**: object | null\n\n- id (string)\n- project (string)\n" in section(
        guide, "### stopTimer"
    )


def test_several_structured_alternatives_are_listed_as_options() -> None:
    returns = {
        "oneOf": [
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
            {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
        ]
    }
    guide = render_guide(make_app(make_tool(returns=returns)))
    assert "- option 1 (object)\n  - ok (boolean)\n- option 2 (object)\n  - error (string)\n" in guide


def test_local_references_are_followed_and_recursion_stops() -> None:
    parameters = {
        "type": "object",
        "definitions": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/node"}},
                },
                "required": ["label"],
            }
        },
        "properties": {"tree": {"$ref": "#/definitions/node", "description": "The whole tree"}},
        "required": ["tree"],
    }
    guide = render_guide(make_app(make_tool(parameters=parameters)))
    assert (
        "- tree (object, required): The whole tree\n"
        "  - label (string, required)\n"
        "  - children (array of object, optional): Same structure as an enclosing field.\n"
    ) in guide
    args = example_calls(guide)["do_it"]["args"]
    assert jsonschema_rs.Draft7Validator(parameters).is_valid(args)


def test_an_integer_bound_larger_than_any_float_is_printed_whole() -> None:
    # The loader refuses such numbers; the guide must not depend on that to render at all.
    tool = make_tool(
        "count", parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": 10**400}}}
    )

    guide = render_guide(make_app(tool))

    assert f"- n (integer, optional, >= 1{'0' * 400})" in guide
