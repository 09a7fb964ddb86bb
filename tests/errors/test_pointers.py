"""JSON pointers (RFC 6901) name where a problem is: every token escaped, whatever it holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.errors.base import json_pointer


def test_the_whole_document_is_the_empty_pointer() -> None:
    assert json_pointer() == ""


def test_tilde_and_slash_are_escaped_in_that_order() -> None:
    assert json_pointer("tools", 3, "a/b", "~1", "") == "/tools/3/a~1b/~01/"


@given(st.lists(st.one_of(st.integers(min_value=0), st.text(alphabet="ab/~ 名", max_size=6)), max_size=6))
def test_a_pointer_is_each_token_escaped_after_a_slash(tokens: list[str | int]) -> None:
    expected = "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)
    assert json_pointer(*tokens) == expected
