"""How much of a list of names a message repeats (`quoting.listed`)."""

from __future__ import annotations

from aai_gateway.descriptor.quoting import LISTED_ITEMS, listed


def test_a_few_names_are_listed_whole_and_many_are_cut_with_how_many_in_all() -> None:
    assert listed(["a", "b"]) == "a, b"
    names = [f"n{i}" for i in range(LISTED_ITEMS + 3)]
    assert listed(names) == ", ".join(names[:LISTED_ITEMS]) + f", … ({LISTED_ITEMS + 3} in all)"


def test_how_many_are_listed_and_how_long_a_name_stays_whole_can_be_chosen() -> None:
    ids = ["com.example.a-rather-long-app-id", "dev.b", "dev.c"]
    assert listed(ids, most=2, whole_up_to=64) == "com.example.a-rather-long-app-id, dev.b, … (3 in all)"
    assert listed(ids, most=2).startswith("com.example.a-ra… (32 characters)")
