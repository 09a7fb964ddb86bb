"""JSON ↔ DBus value conversion for typed DBus arguments (pure; no bus)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from dbus_fast import Variant
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor.dbus_signature import INTEGER_RANGES
from aai_gateway.executors.dbus_types import DbusValueError, guess_variant, reply_to_json, to_dbus, to_json


def rejected(value: Any, type_code: str) -> str:
    with pytest.raises(DbusValueError) as caught:
        to_dbus(value, type_code, "/p")
    return caught.value.message


@pytest.mark.parametrize("code", sorted(INTEGER_RANGES))
def test_each_integer_type_takes_exactly_its_range(code: str) -> None:
    low, high = INTEGER_RANGES[code]

    assert to_dbus(low, code, "/p") == low
    assert to_dbus(high, code, "/p") == high
    assert "out of range" in rejected(low - 1, code)
    assert "out of range" in rejected(high + 1, code)


def test_integers_reject_booleans_and_fractions_but_take_whole_floats() -> None:
    assert to_dbus(3.0, "i", "/p") == 3
    assert "got a number" in rejected(3.5, "i")
    assert "got a boolean" in rejected(True, "i")
    assert "got a string" in rejected("3", "i")


def test_strings_refuse_nul_and_lone_surrogates_and_keep_everything_else() -> None:
    text = 'quote" back\\ $(x) `y` \n emoji 🎉 RTL \u202e'
    assert to_dbus(text, "s", "/p") == text
    assert "NUL" in rejected("a\x00b", "s")
    assert "not valid Unicode" in rejected("\ud800", "s")


def test_object_paths_and_signatures_are_checked() -> None:
    assert to_dbus("/org/example/Item_1", "o", "/p") == "/org/example/Item_1"
    assert to_dbus("/", "o", "/p") == "/"
    assert "not a DBus object path" in rejected("org/example", "o")
    assert "not a DBus object path" in rejected("/trailing/", "o")
    assert to_dbus("a{sv}", "g", "/p") == "a{sv}"
    assert "not a DBus signature" in rejected("a{vs}", "g")


def test_byte_arrays_become_bytes_and_structs_need_their_length() -> None:
    assert to_dbus([0, 255], "ay", "/p") == b"\x00\xff"
    assert to_dbus([1, "x"], "(is)", "/p") == [1, "x"]
    assert "expected an array of 2 items" in rejected([1], "(is)")


def test_a_wrong_value_deep_inside_is_reported_with_its_json_pointer() -> None:
    with pytest.raises(DbusValueError) as caught:
        to_dbus({"a/b": [1, "two"]}, "a{sai}", "/p")

    assert caught.value.path == "/p/a~1b/1"


def test_dictionary_keys_of_number_types_are_written_as_numbers() -> None:
    assert to_dbus({"7": "seven", "-1": "minus"}, "a{is}", "/p") == {7: "seven", -1: "minus"}
    assert to_dbus({"true": 1}, "a{bi}", "/p") == {True: 1}
    assert "not an integer" in rejected({"seven": "x"}, "a{is}")


def test_null_has_no_dbus_form() -> None:
    assert "null has no DBus form" in rejected(None, "v")
    assert "got null" in rejected(None, "s")


def test_variants_are_guessed_from_the_json_type() -> None:
    assert guess_variant(1, "/p") == Variant("i", 1)
    assert guess_variant(2**40, "/p") == Variant("x", 2**40)
    assert guess_variant(2**63, "/p") == Variant("t", 2**63)
    assert guess_variant(1.5, "/p") == Variant("d", 1.5)
    assert guess_variant([1, 2.5], "/p").signature == "ad"
    assert guess_variant([1, "x"], "/p").signature == "av"
    assert guess_variant([], "/p").signature == "av"
    assert guess_variant({"k": [True]}, "/p").signature == "a{sv}"


def test_replies_become_json_values() -> None:
    assert reply_to_json([]) is None
    assert reply_to_json(["one"]) == "one"
    assert reply_to_json([1, "two"]) == [1, "two"]
    assert to_json({7: Variant("ay", b"\x01"), "s": (1, 2)}) == {"7": [1], "s": [1, 2]}
    assert to_json({False: 0}) == {"false": 0}
    assert to_json(math.nan) is None


dbus_text = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"))
json_scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | dbus_text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(dbus_text, inner, max_size=5),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_without_null_survives_a_variant_round_trip(value: Any) -> None:
    assert to_json(guess_variant(value, "")) == value


@given(st.lists(dbus_text))
def test_string_arrays_survive_a_round_trip(value: list[str]) -> None:
    assert to_json(to_dbus(value, "as", "")) == value
