"""A guide never costs more than `GUIDE_MAX_CHARS` (4,000 tokens at 4 characters a token) whatever
the app holds: a big app's guide is an index, the details of chosen operations come on request,
and schemas that expand through references are cut. Small apps keep their full guide (the
snapshot tests)."""

from __future__ import annotations

import json
from typing import Any

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.guide import GUIDE_MAX_CHARS, GuideOptions, render_guide, render_operations
from aai_gateway.guide.fields import TOO_LARGE
from tests.builders import c_descriptor

from .helpers import example_calls, make_app, make_tool, section

ENTRY = "app_com_example_test"


def big_app(count: int) -> AppDescriptor:
    tools = [
        make_tool(
            name=f"operation_{i:04d}",
            description=f"Operation number {i}: does one thing well. Then explains at length how.",
            parameters={
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "What the operation acts on"},
                    "mode": {"type": "string", "enum": ["fast", "careful"], "default": "careful"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["target"],
            },
        )
        for i in range(count)
    ]
    return make_app(*tools)


def test_a_150_operation_app_gets_an_index_within_the_bound() -> None:
    app = big_app(150)
    assert len(render_guide(app, max_chars=10**9)) > 3 * GUIDE_MAX_CHARS  # its full guide

    guide = render_guide(app, entry_tool=ENTRY)

    assert len(guide) <= GUIDE_MAX_CHARS
    assert "This app has 150 operations, too many to describe in one guide" in guide
    assert "- `operation_0000`: Operation number 0: does one thing well." in guide
    assert "- `operation_0149`: Operation number 149: does one thing well." in guide
    assert "**Parameters**" not in guide  # details come on request


def test_the_index_says_how_to_get_the_details_of_chosen_operations() -> None:
    guide = render_guide(big_app(150), entry_tool=ENTRY, reference="com.example.test")
    details = section(guide, "## Operation details")
    assert f'{ENTRY}({{"operations": ["operation_0000", "operation_0001"]}})' in details
    assert 'aai_search({"app": "com.example.test", "query": "<what you want to do>"})' in details


def test_an_app_without_an_entry_is_sent_to_search_for_details() -> None:
    details = section(render_guide(big_app(150), reference="com.example.test"), "## Operation details")
    assert (
        '- aai_search({"app": "com.example.test", "query": "operation_0000 operation_0001", "limit": 2}) '
        "gives the parameters and an example call of each operation it names." in details
    )
    assert "app_" not in details and '"operations"' not in details


def test_an_index_with_a_long_reference_and_no_entry_stays_within_the_bound() -> None:
    guide = render_guide(big_app(1_000), reference="https://" + "sub." * 60 + "example.com")
    assert len(guide) <= GUIDE_MAX_CHARS
    assert 'or read them all a page at a time with aai_search({"app": "https://sub.' in guide


def test_an_index_of_a_thousand_operations_counts_the_ones_it_cannot_list() -> None:
    guide = render_guide(big_app(1_000), entry_tool=ENTRY)
    assert len(guide) <= GUIDE_MAX_CHARS
    listed = guide.count("\n- `operation_")
    assert 50 < listed < 1_000
    assert f"- … and {1_000 - listed} more operations, not listed here: find them with aai_search(" in guide


def operation_text(guide: str, name: str) -> str:
    """An operation's section, without the footer that follows the last one."""
    return section(guide, f"### {name}").split("\n---\n")[0].rstrip("\n")


def test_the_details_of_chosen_operations_are_their_full_guide_sections() -> None:
    app = big_app(150)
    full = render_guide(app, max_chars=10**9)
    options = GuideOptions(entry_tool=ENTRY)

    details = render_operations(app, ["operation_0149", "operation_0007"], options)

    assert details.index("### operation_0149") < details.index("### operation_0007")
    for name in ("operation_0149", "operation_0007"):
        assert operation_text(details, name) == operation_text(full, name)
    assert set(example_calls(details)) == {"operation_0149", "operation_0007"}
    assert "### operation_0000" not in details


def test_operations_that_do_not_fit_in_one_answer_are_named_with_how_to_ask_for_them() -> None:
    app = big_app(150)
    names = [tool.name for tool in app.tools[:60]]

    details = render_operations(app, names, GuideOptions(entry_tool=ENTRY))

    assert len(details) <= GUIDE_MAX_CHARS
    shown = details.count("### operation_")
    assert 5 < shown < 60
    left = names[shown:]
    assert f"Not shown, to keep this answer short: {', '.join(left[:3])}" in details
    assert f'Ask for them with {ENTRY}({{"operations": ["{left[0]}", ' in details


def test_the_call_for_operations_that_do_not_fit_is_whole_however_many_and_long_their_names() -> None:
    bulky = {
        f"param_{k}": {"type": "string", "description": "Says a lot about itself. " * 20} for k in range(10)
    }
    names = [f"operation_with_a_name_as_long_as_names_may_get_{i:03d}" for i in range(50)]
    app = make_app(
        *(
            make_tool(
                name=name,
                description="Does something. " * 80,
                parameters={"type": "object", "properties": bulky},
            )
            for name in names
        )
    )

    for options in (GuideOptions(entry_tool=ENTRY), GuideOptions()):
        details = render_operations(app, names, options)

        assert len(details) <= GUIDE_MAX_CHARS
        left = names[details.count("### operation_") :]
        line = next(line for line in details.splitlines() if line.startswith("Not shown"))
        call = line.split("Ask for them with ", 1)[1]
        arguments = json.loads(call[call.index("(") + 1 : call.rindex(")")])
        assert arguments.get("operations", arguments.get("query", "").split()) == left


def expanding(width: int = 10, depth: int = 8) -> dict[str, Any]:
    """A schema of a few kilobytes that `$ref`s make describe `width ** depth` fields."""
    definitions: dict[str, Any] = {}
    for level in range(depth):
        inner = {"$ref": f"#/definitions/d{level + 1}"} if level + 1 < depth else {"type": "string"}
        definitions[f"d{level}"] = {
            "type": "object",
            "description": f"level {level}",
            "properties": {f"f{level}_{i}": inner for i in range(width)},
            "required": [f"f{level}_{i}" for i in range(width)],
        }
    return {
        "type": "object",
        "definitions": definitions,
        "properties": {"root": {"$ref": "#/definitions/d0"}},
        "required": ["root"],
    }


def test_a_tool_whose_schemas_expand_through_references_gets_a_bounded_guide() -> None:
    document = c_descriptor("dev.test.expanding", name="Expanding", type="http", baseUrl="http://127.0.0.1:9")
    document["tools"][0].update(parameters=expanding(), returns=expanding())
    loaded = load_text(json.dumps(document), Source(kind="file", location="expanding.json"), "linux")
    assert loaded.descriptor is not None
    assert len(json.dumps(document)) < 10_000

    guide = render_guide(loaded.descriptor, max_chars=10**9)  # one operation: its section alone

    assert len(guide) <= GUIDE_MAX_CHARS  # was 815,000 characters before the bound
    assert guide.count(TOO_LARGE) == 2  # parameters and returns both say they were cut
    [call] = example_calls(guide).values()
    assert "f0_0" in json.dumps(call["args"])  # a shortened example, still a call
    assert "Example shortened to fit the guide" in guide


def test_an_app_with_a_huge_description_and_many_aliases_gets_a_bounded_guide() -> None:
    app = make_app(aliases=tuple(f"alias{i}" for i in range(5_000))).model_copy(
        update={"description": "Words. " * 30_000}
    )
    guide = render_guide(app)
    assert len(guide) <= GUIDE_MAX_CHARS
    assert "- `do_it`: Do the thing." in guide
