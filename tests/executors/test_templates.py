"""`${param}` substitution in JSON templates and `{param}` placeholders in URL paths (pure)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.executors.templates import (
    MISSING,
    OMIT,
    lookup,
    placeholder_names,
    substitute,
    substitute_path,
    text_of,
)


def test_a_string_that_is_one_placeholder_keeps_the_arguments_json_type() -> None:
    arguments: dict[str, Any] = {
        "tags": ["a", "b"],
        "meta": {"k": 1},
        "n": 3,
        "ratio": 0.5,
        "flag": False,
        "nothing": None,
        "text": "hi",
    }
    template = {name: "${" + name + "}" for name in arguments}

    result = substitute(template, arguments)

    assert result.value == arguments
    assert result.consumed == frozenset(arguments)


def test_placeholders_inside_a_longer_string_become_text_and_non_strings_compact_json() -> None:
    arguments = {"name": "Ada", "n": 3, "flag": True, "tags": ["a", "b"], "meta": {"k": "v"}, "none": None}

    result = substitute("${name}/${n}/${flag}/${tags}/${meta}/${none}", arguments)

    assert result.value == 'Ada/3/true/["a","b"]/{"k":"v"}/null'


def test_a_missing_optional_argument_drops_the_key_or_item_and_empties_embedded_text() -> None:
    template = {"q": "${q}", "limit": "${limit}", "label": "limit=${limit}", "list": ["${limit}", "x"]}

    result = substitute(template, {"q": "cats"})

    assert result.value == {"q": "cats", "label": "limit=", "list": ["x"]}
    assert substitute("${missing}", {}).value is OMIT


def test_dotted_placeholders_reach_into_nested_objects_and_arrays() -> None:
    arguments = {"user": {"name": "Ada", "langs": ["en", "fr"]}, "a.b": "literal key wins"}

    result = substitute({"n": "${user.name}", "l": "${user.langs.1}", "k": "${a.b}"}, arguments)

    assert result.value == {"n": "Ada", "l": "fr", "k": "literal key wins"}
    assert result.consumed == frozenset({"user", "a.b"})
    assert lookup(arguments, "user.missing") is MISSING
    assert lookup(arguments, "user.langs.9") is MISSING


def test_values_that_look_like_placeholders_are_not_expanded_again() -> None:
    arguments = {"a": "${b}", "b": "secret"}

    assert substitute("x ${a} y", arguments).value == "x ${b} y"
    assert substitute({"v": "${a}"}, arguments).value == {"v": "${b}"}


def test_keys_numbers_and_text_without_placeholders_stay_as_written() -> None:
    template = {"${x}": 1, "n": 2.5, "t": True, "s": "plain $ {x} {x} $x", "z": None}

    assert substitute(template, {"x": "v"}).value == template


def test_placeholder_names_lists_every_template_string() -> None:
    assert placeholder_names({"a": "${x}-${y.z}", "b": ["${w}", 3], "${k}": "no"}) == ["x", "y.z", "w"]


def test_path_placeholders_in_both_spellings_are_encoded_by_the_callers_function() -> None:
    result = substitute_path("/u/{id}/files/${name}", {"id": 7, "name": "a b"}, lambda v: quote(text_of(v)))

    assert result.text == "/u/7/files/a%20b"
    assert result.consumed == frozenset({"id", "name"})
    assert result.missing == ()


def test_path_placeholders_report_missing_null_and_empty_arguments() -> None:
    result = substitute_path("/{a}/{b}/{c}/{d}", {"b": None, "c": "", "d": "ok"}, text_of)

    assert result.missing == ("a", "b")
    assert result.empty == ("c",)
    assert result.text == "////ok"


def test_literal_braces_that_are_not_parameter_names_are_left_alone() -> None:
    assert substitute_path("/x/{1bad}/{ok}", {"ok": "y"}, text_of).text == "/x/{1bad}/y"


# --------------------------------------------------------------------------- property


# Literal template text never contains `${`, so the only placeholder is the one under test: a
# sibling such as "${a}" would be a second placeholder and no counterexample.
literal_text = st.text(max_size=8).filter(lambda t: "${" not in t and not t.endswith("$"))
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | literal_text


@st.composite
def template_with_slot(draw: st.DrawFn) -> tuple[Any, list[str | int], bool, str, str]:
    """A JSON template with `${v}` at a random position: returns the template, the path to
    the slot, whether the slot is the whole string, and the literal text around it."""
    whole = draw(st.booleans())
    prefix = "" if whole else draw(literal_text)
    suffix = "" if whole else draw(literal_text.filter(lambda t: t != "" or prefix != ""))
    template: Any = prefix + "${v}" + suffix
    path: list[str | int] = []
    for _ in range(draw(st.integers(0, 3))):
        siblings = draw(st.lists(json_scalars, max_size=3))
        if draw(st.booleans()):
            keys = draw(st.lists(st.text(max_size=4), min_size=1, max_size=4, unique=True))
            key = keys[-1]
            template = {**dict(zip(keys[:-1], siblings, strict=False)), key: template}
            path.insert(0, key)
        else:
            index = draw(st.integers(0, len(siblings)))
            template = [*siblings[:index], template, *siblings[index:]]
            path.insert(0, index)
    return template, path, whole, prefix, suffix


@given(template_with_slot(), st.text())
def test_any_string_substituted_into_any_template_position_comes_back_exactly(
    case: tuple[Any, list[str | int], bool, str, str], value: str
) -> None:
    template, path, whole, prefix, suffix = case

    result = substitute(template, {"v": value})
    slot: Any = json.loads(json.dumps(result.value))
    for step in path:
        slot = slot[step]

    assert slot == (value if whole else prefix + value + suffix)
    assert result.consumed == frozenset({"v"})
