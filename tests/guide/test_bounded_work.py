"""The guide is built while a request waits: whatever a descriptor's schemas hold, building it
takes a bounded amount of work. These tests count work instead of timing it: each patches a
step the guide repeats and fails as soon as the count passes what a bounded guide needs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from aai_gateway.descriptor import Source, load_text
from aai_gateway.guide import example_arguments, hints, patterns, render_guide
from aai_gateway.guide.examples import _Builder
from aai_gateway.guide.fields import TOO_LARGE
from aai_gateway.guide.schema import Resolver
from tests.builders import c_descriptor

from .helpers import make_app, make_tool

JsonDict = dict[str, Any]
HOSTILE_PATTERN = "^(?=(a+)+c)a{30}$"  # Python's `re` takes hours to test "aaa…a" against it


class TooMuchWorkError(AssertionError):
    pass


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, limit: int) -> list[int]:
    """Wrap `owner.name` to fail once it is called more than `limit` times; the count so far."""
    original: Callable[..., Any] = getattr(owner, name)
    calls = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > limit:
            raise TooMuchWorkError(f"{name} called more than {limit} times")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def one_argument(schema: JsonDict, **extra: Any) -> JsonDict:
    return {"type": "object", "properties": {"x": schema}, "required": ["x"], **extra}


def loaded(parameters: JsonDict) -> Any:
    """A descriptor with these parameters, through the loader's checks (as every guide's app is)."""
    document = c_descriptor("dev.test.bounded", name="Bounded", type="http", baseUrl="http://127.0.0.1:9")
    document["tools"][0]["parameters"] = parameters
    result = load_text(json.dumps(document), Source(kind="file", location="bounded.json"), "linux")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


# --------------------------------------------------------------------------- patterns


def test_a_descriptor_pattern_is_never_run_by_pythons_regex_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    compile_pattern = re._compile  # type: ignore[attr-defined]  # what re.search & co. call

    def refuse_the_descriptors_pattern(pattern: Any, flags: Any) -> Any:
        if pattern == HOSTILE_PATTERN:
            raise AssertionError("the descriptor's pattern reached Python's backtracking regex engine")
        return compile_pattern(pattern, flags)

    monkeypatch.setattr(re, "_compile", refuse_the_descriptors_pattern)
    ways_in: dict[str, Callable[[], object]] = {  # what this test relies on (re._compile is private)
        "re.compile": lambda: re.compile(HOSTILE_PATTERN),
        "re.search": lambda: re.search(HOSTILE_PATTERN, ""),
        "re.fullmatch": lambda: re.fullmatch(HOSTILE_PATTERN, ""),
    }
    for name, run_it in ways_in.items():
        with pytest.raises(AssertionError, match="reached Python's backtracking regex engine"):
            run_it()
            pytest.fail(
                f"{name} no longer goes through re._compile, so this test cannot see a pattern "
                "reaching Python's regex engine: watch the engine another way"
            )
    app = loaded(one_argument({"type": "string", "pattern": HOSTILE_PATTERN}))

    guide = render_guide(app)

    assert "a{30}" in guide  # the pattern is shown; its example is whatever the checked candidates gave


def test_nested_repetitions_give_no_example_after_a_bounded_amount_of_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    count_calls(monkeypatch, patterns, "_name", limit=1_000_000)
    count_calls(monkeypatch, patterns, "_emit", limit=50_000)  # an empty body repeated is work too

    assert patterns.pattern_example("^((a{1000}){1000}){1000}$") is None
    assert patterns.pattern_example("^(((?:){1000}){1000}){1000}$") is None


# --------------------------------------------------------------------------- schemas


def sharing_at_every_level(levels: int) -> JsonDict:
    """Each level has two properties that both refer to the next level: 2**levels fields to list,
    though every value is checked against one schema (so the loader accepts it)."""
    definitions: JsonDict = {
        f"d{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/definitions/d{i + 1}"},
                "b": {"$ref": f"#/definitions/d{i + 1}"},
            },
            "required": ["a", "b"],
        }
        for i in range(levels)
    }
    definitions[f"d{levels}"] = {"type": "integer", "minimum": 5, "maximum": 1}  # no value fits
    return one_argument({"$ref": "#/definitions/d0"}, definitions=definitions)


def test_definitions_shared_at_every_level_give_a_bounded_guide(monkeypatch: pytest.MonkeyPatch) -> None:
    app = loaded(sharing_at_every_level(30))
    count_calls(monkeypatch, Resolver, "resolve", limit=1_000_000)

    guide = render_guide(app)

    assert '"x": {"a": {"a": ' in guide  # the example call still shows the argument, as far as it got


def test_a_schema_too_large_to_list_says_so_at_the_end_of_its_fields() -> None:
    properties = {f"p{i}": {"type": "string", "description": "d" * 2_000} for i in range(2_000)}
    app = make_app(make_tool(parameters={"type": "object", "properties": properties}))

    guide = render_guide(app)

    assert TOO_LARGE in guide
    assert "- p10 (string" in guide and "- p1999 (string" not in guide


def test_an_enum_whose_values_all_fail_is_tried_only_in_part(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_calls(monkeypatch, _Builder, "fits", limit=100_000)
    schema = one_argument({"type": "string", "enum": list(range(200_000))})

    example_arguments(schema)

    assert calls[0] < 1_000


def test_a_huge_constant_is_shown_by_its_start() -> None:
    app = make_app(make_tool(parameters=one_argument({"const": "x" * 100_000})))

    guide = render_guide(app)

    assert f'"{"x" * 199}…' in guide
    assert "x" * 1_000 not in guide


def test_hints_are_looked_for_only_at_the_start_of_a_description() -> None:
    assert hints.quoted_examples("e.g. 42") == [42]
    assert hints.quoted_examples("x" * hints.SEARCHED_CHARACTERS + " e.g. 42") == []


class CountedSchema(dict[str, Any]):
    """A returns schema that counts how often it is compared with another."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountedSchema.comparisons += 1
        return dict.__eq__(self, other)

    __hash__ = None  # a dict: unhashable


def test_tools_with_returns_schemas_are_not_each_compared_with_every_other() -> None:
    tools = [
        make_tool(name=f"t{i}").model_copy(
            update={"returns": CountedSchema(type="object", description=f"r{i}")}
        )
        for i in range(300)
    ]
    CountedSchema.comparisons = 0

    # Unbounded on purpose: 300 operations make an index within the default bound, and this
    # test is about the full guide's own work.
    guide = render_guide(make_app(*tools), max_chars=10**9)

    assert CountedSchema.comparisons < 300
    assert guide.count("**Returns**: object — r") == 300
