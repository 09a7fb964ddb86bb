"""An MCP server's own tools (its tools/list, from a server nobody vouches for) as canonical tools:
the rules a descriptor's tools obey, one tool left out per broken rule with its index, the app
never lost, and the list bounded."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.descriptor.mcp_tools import (
    MAX_DESCRIPTION_CHARS,
    convert,
    structured_content_problem,
    with_server_tools,
    without_server_tools,
)
from aai_gateway.descriptor.mcp_wire import (
    MAX_TOOL_BYTES,
    MAX_TOOLS,
    MAX_TOOLS_BYTES,
    bounded_tools,
)
from aai_gateway.descriptor.model import McpChannel
from aai_gateway.errors import Problem

from .helpers import JsonDict, load, valid_mcp, with_changes
from .test_schema_cost import alternatives_to_the_next

CHANNEL = McpChannel(command="uvx", args=("mcp-server-time",))
SEARCH_SCHEMA: JsonDict = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
    "required": ["query"],
}


def wire_tool(name: str = "search", **extra: Any) -> JsonDict:
    return {
        "name": name,
        "description": "Search the index",
        "inputSchema": copy.deepcopy(SEARCH_SCHEMA),
        **extra,
    }


def undeclared_app() -> AppDescriptor:
    descriptor = load(valid_mcp()).descriptor
    assert descriptor is not None and not descriptor.tools_declared
    return descriptor


def names(wire: Any) -> list[str]:
    return [tool.name for tool in convert(wire, CHANNEL).tools]


def problems(wire: Any) -> list[Problem]:
    return list(convert(wire, CHANNEL).problems)


def only_problem(wire: Any) -> Problem:
    found = problems(wire)
    assert len(found) == 1, [p.render() for p in found]
    return found[0]


# --------------------------------------------------------------------------- the shape of a tool


def test_a_server_tool_is_the_tool_an_mcp_descriptor_would_declare_with_the_same_content() -> None:
    annotations = {"title": "Search", "readOnlyHint": True, "openWorldHint": False}
    output = {"type": "object", "properties": {"hits": {"type": "array"}}}
    declared_document = with_changes(
        valid_mcp(),
        (
            "/tools",
            [
                {
                    "name": "search",
                    "description": "Search the index",
                    "parameters": SEARCH_SCHEMA,
                    "returns": output,
                    "annotations": annotations,
                }
            ],
        ),
    )
    declared = load(declared_document).descriptor
    assert declared is not None

    app, taken = with_server_tools(
        undeclared_app(), [wire_tool(outputSchema=output, annotations=annotations, _meta={"x": 1})]
    )

    assert taken.problems == ()
    assert app.tools == declared.tools
    assert [s.tools for s in app.sections] == [s.tools for s in declared.sections]
    assert app.server_tools_read and not app.tools_declared


def test_every_platform_section_gets_the_servers_tools_and_the_host_is_active() -> None:
    app, _ = with_server_tools(undeclared_app(), [wire_tool()])

    assert [(s.platform, [t.name for t in s.tools]) for s in app.sections] == [
        ("macos", ["search"]),
        ("linux", ["search"]),
        ("windows", ["search"]),
    ]
    assert app.platform == "linux"
    assert app.tools == app.sections[1].tools
    assert without_server_tools(app) == undeclared_app()


def test_a_descriptor_that_declares_its_tools_never_takes_the_servers() -> None:
    declared = load(with_changes(valid_mcp(), ("/tools", []))).descriptor
    assert declared is not None

    with pytest.raises(ValueError, match="declares its tools itself"):
        with_server_tools(declared, [wire_tool()])


def test_a_top_level_title_stands_in_for_an_annotation_title_and_unknown_fields_are_ignored() -> None:
    tool = wire_tool(title="Find things", icons=[{"src": "x"}], execution={"taskSupport": "optional"})
    tool["annotations"] = {"destructiveHint": False, "x-vendor": {"any": "thing"}}

    (converted,) = convert([tool], CHANNEL).tools

    assert converted.annotations is not None
    assert converted.annotations.title == "Find things"
    assert converted.annotations.destructive_hint is False
    assert converted.annotations.read_only_hint is None


def test_a_2020_12_schema_is_checked_as_draft_07_and_another_dialect_is_refused() -> None:
    newer = {**SEARCH_SCHEMA, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    older = {**SEARCH_SCHEMA, "$schema": "http://json-schema.org/draft-04/schema#"}

    result = convert([wire_tool(inputSchema=newer), wire_tool("old", inputSchema=older)], CHANNEL)

    assert [t.name for t in result.tools] == ["search"]
    assert result.tools[0].parameters == SEARCH_SCHEMA
    (problem,) = result.problems
    assert problem.pointer == "/tools/1/inputSchema/$schema"
    assert problem.message.endswith("; the tool is left out")


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "bad", ["", "1st", "with space", "a/b", "x" * 65, "名前", "tool\u202e", "a\nb"], ids=repr
)
def test_a_tool_whose_name_breaks_the_dialect_c_rules_is_left_out_with_its_index(bad: str) -> None:
    wire = [wire_tool("first"), wire_tool(bad), wire_tool("last")]

    problem = only_problem(wire)

    assert names(wire) == ["first", "last"]
    assert problem.pointer == "/tools/1/name"
    assert problem.message.startswith("tool name ")
    assert problem.message.endswith("at most 64 characters; the tool is left out")


@pytest.mark.parametrize("name", [None, 42, ["x"], {"n": 1}], ids=repr)
def test_a_tool_without_a_string_name_is_left_out(name: Any) -> None:
    tool = wire_tool()
    tool["name"] = name

    problem = only_problem([tool])

    assert problem.pointer == "/tools/0/name"
    assert "tool 0 has no name" in problem.message


def test_a_second_tool_of_the_same_name_is_left_out_and_the_first_kept() -> None:
    wire = [wire_tool(description="one"), wire_tool(description="two")]

    result = convert(wire, CHANNEL)

    assert [t.description for t in result.tools] == ["one"]
    (problem,) = result.problems
    assert problem.pointer == "/tools/1/name"
    assert "duplicate tool name 'search' (first defined at /tools/0)" in problem.message


# --------------------------------------------------------------------------- entries and schemas


@pytest.mark.parametrize("entry", [5, "search", None, [], True], ids=repr)
def test_an_entry_that_is_not_an_object_is_left_out(entry: Any) -> None:
    wire = [entry, wire_tool()]

    problem = only_problem(wire)

    assert names(wire) == ["search"]
    assert problem.pointer == "/tools/0"
    assert "not a tool object; the tool is left out" in problem.message


def test_a_tool_list_that_is_not_an_array_yields_no_tools() -> None:
    assert only_problem({"tools": []}).message == "the tool list is an object, not an array"


def nested(levels: int) -> JsonDict:
    schema: JsonDict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        (nested(5_000), "/tools/1", "is nested more than 64 levels deep"),
        (alternatives_to_the_next(30), "/tools/1/inputSchema", "too costly to check"),
        ({"$ref": "https://evil.example/schema.json"}, "/tools/1/inputSchema", "remote reference"),
        ({"type": "strnig"}, "/tools/1/inputSchema/type", "not a JSON Schema type"),
        ({"type": "array"}, "/tools/1/inputSchema/type", 'must describe an object ("type": "object")'),
        ("not a schema", "/tools/1/inputSchema", "must be a JSON Schema object"),
        ({"type": "object", "maximum": float("nan")}, "/tools/1", "a number that is not finite"),
        ({"type": "object", "description": "\ud800"}, "/tools/1", "a string that is not Unicode text"),
        ({"type": "object", 1: "key"}, "/tools/1", "a key that is not Unicode text"),
        ({"type": "object", "x": b"bytes"}, "/tools/1", "holds a bytes, which is not JSON"),
    ],
    ids=[
        "deep",
        "$ref bomb",
        "remote $ref",
        "bad type",
        "not an object",
        "not a dict",
        "NaN",
        "surrogate",
        "int key",
        "bytes",
    ],
)
def test_a_tool_whose_input_schema_is_unusable_is_left_out_and_the_others_kept(
    schema: Any, pointer: str, words: str
) -> None:
    wire = [wire_tool("first"), wire_tool("broken", inputSchema=schema), wire_tool("last")]

    problem = only_problem(wire)

    assert names(wire) == ["first", "last"]
    assert problem.pointer == pointer
    assert words in problem.message
    assert problem.message.endswith("; the tool is left out") and problem.severity == "error"


def test_a_tool_without_an_input_schema_is_left_out() -> None:
    tool = wire_tool()
    del tool["inputSchema"]

    problem = only_problem([tool])

    assert (problem.pointer, problem.message) == (
        "/tools/0/inputSchema",
        "tool 'search' has no inputSchema; the tool is left out",
    )


def test_an_output_schema_is_held_to_the_checks_of_returns() -> None:
    wire = [wire_tool("a", outputSchema=alternatives_to_the_next(30)), wire_tool("b", outputSchema=None)]

    problem = only_problem(wire)

    assert names(wire) == ["b"]
    assert problem.pointer == "/tools/0/outputSchema"
    assert "outputSchema is too costly to check" in problem.message


def test_a_tool_larger_than_its_limit_is_left_out() -> None:
    huge = wire_tool("huge", description="x" * (MAX_TOOL_BYTES + 1))

    problem = only_problem([huge, wire_tool()])

    assert problem.pointer == "/tools/0"
    assert f"a tool may have at most {MAX_TOOL_BYTES}" in problem.message


# --------------------------------------------------------------------------- bounds


def test_ten_thousand_tools_are_cut_to_the_first_thousand_with_one_problem() -> None:
    wire = [wire_tool(f"t{i}") for i in range(10_000)]

    result = convert(wire, CHANNEL)

    assert [t.name for t in result.tools] == [f"t{i}" for i in range(MAX_TOOLS)]
    (problem,) = result.problems
    assert problem.pointer == "/tools"
    assert "the server listed more than 1000 tools" in problem.message
    assert "those from tool 1000 on are left out" in problem.message


def test_tools_beyond_the_total_size_are_left_out() -> None:
    big = "y" * (MAX_TOOL_BYTES - 1_000)
    wire = [wire_tool(f"t{i}", description=big) for i in range(40)]
    fitting = MAX_TOOLS_BYTES // (MAX_TOOL_BYTES - 500)

    result = convert(wire, CHANNEL)

    assert len(result.tools) == fitting
    assert [p.pointer for p in result.problems] == ["/tools"] + [
        f"/tools/{i}/description" for i in range(fitting)
    ]
    assert f"the {40 - fitting} from tool {fitting} on are left out" in result.problems[0].message


def test_what_a_snapshot_keeps_still_names_each_left_out_tool_at_the_servers_index() -> None:
    wire: list[Any] = [wire_tool("a"), {"name": "deep", "inputSchema": nested(100)}, wire_tool("c")]
    wire += [wire_tool(f"more{i}") for i in range(MAX_TOOLS)]

    kept = bounded_tools(wire)
    result = convert(json.loads(json.dumps(kept)), CHANNEL, listed=len(wire))

    assert len(kept) == MAX_TOOLS and kept[1] == {"$omitted": kept[1]["$omitted"], "name": "deep"}
    assert [p.pointer for p in result.problems] == ["/tools", "/tools/1"]
    assert "those from tool 1000 on are left out" in result.problems[0].message
    assert "tool 1 ('deep') is nested more than 64 levels deep" in result.problems[1].message


# --------------------------------------------------------------------------- text and annotations


def test_what_a_reader_cannot_see_is_removed_from_descriptions_and_titles() -> None:
    tags = "\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # IGNORE, invisible
    hidden = f"Lists files\u202e\u2066 and\x1b[2J {tags}\x85"
    tool = wire_tool(description=hidden + "\r\nSecond line\tend", title="Li\u200fst\nfiles")

    result = convert([tool], CHANNEL)

    (converted,) = result.tools
    assert converted.description == "Lists files and \nSecond line\tend"  # the whole `ESC [2J`
    assert converted.annotations is not None and converted.annotations.title == "List files"
    assert [(p.pointer, p.message, p.severity) for p in result.problems] == [
        (
            "/tools/0/description",
            "description of tool 'search': 1 terminal escape sequence removed",
            "warning",
        ),
        (
            "/tools/0/description",
            "description of tool 'search': 9 invisible or control characters removed",
            "warning",
        ),
        ("/tools/0/title", "title of tool 'search': 1 invisible or control character removed", "warning"),
    ]


def test_a_terminals_escape_sequences_are_removed_whole() -> None:
    title = "Title \x1b[31mRED\x1b[0m \x1b]0;pwned\x07evil \x1b(Bok \x1b]8;;https://x.example\x1b\\link\x9b1m"
    tool = wire_tool(title=title)

    (converted,) = convert([tool], CHANNEL).tools

    assert converted.annotations is not None and converted.annotations.title == "Title RED evil ok link"


def test_a_long_description_is_cut() -> None:
    (converted,) = convert([wire_tool(description="word " * 5_000)], CHANNEL).tools

    assert MAX_DESCRIPTION_CHARS - 2 <= len(converted.description) <= MAX_DESCRIPTION_CHARS
    assert converted.description.endswith("…")


@pytest.mark.parametrize(
    ("field", "value"),
    [("description", 42), ("description", ["a"]), ("title", {"t": 1})],
)
def test_a_description_or_title_of_the_wrong_type_is_ignored_with_a_warning(field: str, value: Any) -> None:
    result = convert([wire_tool(**{field: value})], CHANNEL)

    (converted,) = result.tools
    assert (converted.description or "x") if field == "title" else converted.description == ""
    (problem,) = result.problems
    assert (problem.pointer, problem.severity) == (f"/tools/0/{field}", "warning")


def test_annotations_of_the_wrong_type_are_ignored_and_the_right_ones_kept() -> None:
    tool = wire_tool(
        annotations={"readOnlyHint": "yes", "destructiveHint": 1, "idempotentHint": True, "title": 5}
    )

    result = convert([tool], CHANNEL)

    (converted,) = result.tools
    assert converted.annotations is not None
    assert (converted.annotations.read_only_hint, converted.annotations.destructive_hint) == (None, None)
    assert converted.annotations.idempotent_hint is True and converted.annotations.title is None
    assert [p.pointer for p in result.problems] == [
        "/tools/0/annotations/destructiveHint",
        "/tools/0/annotations/readOnlyHint",
        "/tools/0/annotations/title",
    ]


def test_annotations_that_are_not_an_object_are_ignored() -> None:
    result = convert([wire_tool(annotations=["readOnlyHint"])], CHANNEL)

    assert result.tools[0].annotations is None
    assert [p.message for p in result.problems] == [
        "annotations are an array, not an object; they are ignored"
    ]


def test_structured_content_is_checked_in_time_linear_in_it_whatever_the_schemas_patterns() -> None:
    """`^(a+)+$` backtracks in Python's `re` for 2 ** n steps on n `a`s and a `!`: this content
    would not be checked before the universe ends; jsonschema-rs checks it at once."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}

    problem = structured_content_problem(schema, {"s": "a" * 100_000 + "!"})

    assert problem is not None and problem.startswith("/s: ") and "does not match" in problem
    assert structured_content_problem(schema, {"s": "a" * 100_000}) is None


def test_an_output_schema_that_a_listed_tool_could_not_have_is_the_problem_of_its_content() -> None:
    remote = {"type": "object", "properties": {"s": {"$ref": "https://example.com/schema.json"}}}

    problem = structured_content_problem(remote, {"s": "x"})

    assert problem is not None and problem.startswith("its outputSchema cannot be used")
