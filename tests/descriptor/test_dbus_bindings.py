"""Typed DBus bindings in dialect B (`signature` + `args`), and the DBus signature parser behind them."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.descriptor.dbus_signature import SignatureError, complete_types, describe
from aai_gateway.descriptor.model import DbusCall

from .helpers import JsonDict, load, only_error, rendered, valid_b, with_changes

TOOL = "/platforms/linux/tools/0"


def typed(signature: Any, args: Any = None, **parameters: Any) -> JsonDict:
    """valid_b() whose linux tool takes typed arguments (`query` string and `limit` integer)."""
    changes: list[tuple[str, Any]] = [(f"{TOOL}/signature", signature)]
    if args is not None:
        changes.append((f"{TOOL}/args", args))
    for pointer, value in parameters.items():
        changes.append((f"{TOOL}/parameters/{pointer.replace('__', '/')}", value))
    return with_changes(valid_b(), *changes)


@pytest.mark.parametrize(
    ("signature", "types"),
    [
        ("", []),
        ("s", ["s"]),
        ("sa{sv}(ii)aay", ["s", "a{sv}", "(ii)", "aay"]),
        ("a(sa{s(iv)})x", ["a(sa{s(iv)})", "x"]),
        ("a{oa{sa{sv}}}", ["a{oa{sa{sv}}}"]),
    ],
)
def test_a_signature_splits_into_its_complete_types(signature: str, types: list[str]) -> None:
    assert complete_types(signature) == types


@pytest.mark.parametrize(
    ("signature", "words"),
    [
        ("a", "ends in the middle"),
        ("a{vs}", "dictionary key must be a basic type"),
        ("a{sss}", "exactly one key type and one value type"),
        ("{ss}", "only allowed right after 'a'"),
        ("()", "empty struct"),
        ("(ii", "never closed"),
        ("i)", "closes nothing"),
        ("z", "not a DBus type code"),
        ("a" * 33 + "s", "nested more than 32 deep"),
        ("s" * 256, "longer than 255"),
    ],
)
def test_a_broken_signature_says_what_is_wrong(signature: str, words: str) -> None:
    with pytest.raises(SignatureError, match=words):
        complete_types(signature)


def test_types_have_readable_names() -> None:
    assert describe("a{sv}") == "dictionary of string to variant"
    assert describe("aay") == "array of array of byte"


def test_signature_and_args_become_the_tools_dbus_call() -> None:
    document = typed("si", ["query", "limit"], required=["query", "limit"])

    result = load(document)

    assert result.descriptor is not None and result.problems == []
    call = result.descriptor.tools[0].call
    assert call == DbusCall(method="Search", signature="si", args=("query", "limit"))


def test_an_empty_signature_calls_without_arguments() -> None:
    result = load(with_changes(typed(""), (f"{TOOL}/parameters", {"type": "object"})))

    assert result.problems == []
    assert result.descriptor is not None
    assert result.descriptor.tools[0].call == DbusCall(method="Search", signature="", args=())


@pytest.mark.parametrize(
    ("document", "pointer", "words"),
    [
        (typed("a{vs}", ["query"]), f"{TOOL}/signature", ("'a{vs}' is not a DBus signature", "basic type")),
        (typed("ss", ["query"]), f"{TOOL}/args", ("takes 2 argument(s) but args names 1",)),
        (typed("s"), f"{TOOL}/signature", ("takes 1 argument(s) but args names 0",)),
        (typed("s", ["nope"]), f"{TOOL}/args/0", ("'nope' is not a parameter of this tool", "limit, query")),
        (typed("i", ["query"]), f"{TOOL}/args/0", ("declared as string", "'i' (int32)")),
        (typed("h", ["query"]), f"{TOOL}/signature", ("unix file descriptor",)),
        (
            with_changes(valid_b(), (f"{TOOL}/args", ["query"])),
            f"{TOOL}/args",
            ("args needs signature",),
        ),
        (typed(7, ["query"]), f"{TOOL}/signature", ("a string",)),
    ],
)
def test_a_typed_binding_that_cannot_work_is_rejected_where_it_is_written(
    document: JsonDict, pointer: str, words: tuple[str, ...]
) -> None:
    problem = only_error(load(document))

    assert problem.pointer == pointer, problem.render()
    for word in words:
        assert word in problem.message, problem.render()


def test_an_optional_parameter_passed_as_an_argument_is_a_warning() -> None:
    result = load(typed("si", ["query", "limit"]))

    assert result.descriptor is not None
    assert rendered(result) == [
        f"{TOOL}/args/1: warning: parameter 'limit' is optional but DBus needs a value for every "
        "argument: make it required or give it a default"
    ]
