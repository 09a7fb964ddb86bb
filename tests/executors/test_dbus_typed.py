"""The DBus executor calling typed methods (dialect B `method` + `signature` + `args`), on a real
private bus: a test service, and the bus daemon itself through the shipped example descriptor."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.dbus import DbusExecutor
from tests.dbus_bus import PrivateBus, private_bus_or_fail
from tests.executors.conftest import invocation, load
from tests.executors.dbus_services import (
    OBJECT_PATH,
    SERVICE,
    TYPED_INTERFACE,
    TypedService,
    exported,
    variant_free,
    variant_signatures,
)
from tests.executors.test_dbus_execute import ADVERSARIAL
from tests.executors.test_dbus_types import dbus_text, json_values

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "org.freedesktop.DBus" / "aai.json"


def typed_tool(
    name: str, method: str, signature: str | None, args: list[str], **extra: Any
) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": name,
        "description": f"{name} for tests",
        "parameters": {"type": "object", "properties": {arg: {} for arg in args}, "required": args},
        "method": method,
        **extra,
    }
    if signature is not None:
        tool["signature"] = signature
        tool["args"] = args
    return tool


TOOLS = [
    typed_tool("echo", "Echo", "s", ["text"]),
    typed_tool("echo_json", "Echo", "s", ["text"], output_parser="json"),
    typed_tool("echo_all", "EchoAll", "as", ["texts"]),
    typed_tool("describe", "Describe", "a{sv}", ["hints"]),
    typed_tool("add", "Add", "iu", ["left", "right"]),
    typed_tool("wide", "Wide", "axat", ["signed", "unsigned"]),
    typed_tool("flags", "Flags", "", []),
    typed_tool("ratio", "Ratio", "db", ["value", "negate"]),
    typed_tool("json_request", "Json", None, ["anything"]),
    typed_tool("fail", "Fail", "", []),
    typed_tool("missing_method", "NoSuchMethod", "", []),
    typed_tool("sleep", "Sleep", "d", ["seconds"], timeout=0.3),
]


def typed_app() -> AppDescriptor:
    return load(
        {
            "schema_version": "1.0",
            "appId": "dev.aai.test.typed",
            "name": "Typed",
            "description": "typed methods",
            "version": "1.0",
            "platforms": {
                "linux": {
                    "automation": "dbus",
                    "service": SERVICE,
                    "object": OBJECT_PATH,
                    "interface": TYPED_INTERFACE,
                    "tools": TOOLS,
                }
            },
        }
    )


def example_app() -> AppDescriptor:
    source = Source(kind="file", location=str(EXAMPLE))
    return load_descriptor(EXAMPLE.read_bytes(), source, "linux")


@pytest.fixture(scope="module")
def bus() -> Iterator[PrivateBus]:
    with private_bus_or_fail() as running:
        yield running


@pytest.fixture
async def service(bus: PrivateBus) -> AsyncIterator[TypedService]:
    async with exported(bus.address) as (_, typed):
        yield typed


@pytest.fixture
async def executor(bus: PrivateBus) -> AsyncIterator[DbusExecutor]:
    running = DbusExecutor(environ=bus.env())
    yield running
    await running.aclose()


async def run(
    executor: DbusExecutor, app: AppDescriptor, tool: str, args: dict[str, Any] | None = None
) -> Any:
    return await executor.execute(invocation(app, tool, args))


async def failure(executor: DbusExecutor, app: AppDescriptor, tool: str, args: dict[str, Any]) -> AaiError:
    with pytest.raises(AaiError) as caught:
        await run(executor, app, tool, args)
    return caught.value


# --------------------------------------------------------------------------- the bus daemon itself


async def test_the_example_lists_the_names_on_the_bus(executor: DbusExecutor, service: TypedService) -> None:
    names = await run(executor, example_app(), "list_names")

    assert "org.freedesktop.DBus" in names
    assert SERVICE in names


async def test_the_example_answers_the_bus_id_owner_and_pid(
    executor: DbusExecutor, service: TypedService
) -> None:
    app = example_app()

    assert re.fullmatch(r"[0-9a-f]{32}", await run(executor, app, "get_id"))
    assert (await run(executor, app, "get_name_owner", {"name": SERVICE})).startswith(":1.")
    assert await run(executor, app, "name_has_owner", {"name": SERVICE}) is True
    assert await run(executor, app, "name_has_owner", {"name": "dev.aai.test.Nobody"}) is False
    assert await run(executor, app, "get_connection_unix_process_id", {"name": SERVICE}) == os.getpid()
    assert "org.freedesktop.DBus" in await run(executor, app, "list_activatable_names")


async def test_an_error_the_bus_daemon_answers_for_itself_is_its_dbus_error_not_a_missing_service(
    executor: DbusExecutor,
) -> None:
    error = await failure(executor, example_app(), "get_name_owner", {"name": "dev.aai.test.Nobody"})

    assert error.code == ErrorCode.EXECUTION_FAILED
    assert error.data["dbus_error"] == "org.freedesktop.DBus.Error.NameHasNoOwner"
    assert "dev.aai.test.Nobody" in error.message


# --------------------------------------------------------------------------- typed arguments and replies


@pytest.mark.parametrize("text", [t for t in ADVERSARIAL if "\x00" not in t])
async def test_adversarial_strings_arrive_byte_exact_as_string_arguments(
    executor: DbusExecutor, service: TypedService, text: str
) -> None:
    assert await run(executor, typed_app(), "echo", {"text": text}) == text
    assert service.received == [text]


async def test_a_nul_character_is_invalid_params_naming_the_parameter(
    executor: DbusExecutor, service: TypedService
) -> None:
    error = await failure(executor, typed_app(), "echo", {"text": "a\x00b"})

    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.data["violations"] == [
        {"path": "/text", "message": "DBus strings cannot contain the NUL character (U+0000)"}
    ]
    assert service.received == []


async def test_integers_are_range_checked_for_their_dbus_type(
    executor: DbusExecutor, service: TypedService
) -> None:
    app = typed_app()
    assert await run(executor, app, "add", {"left": -(2**31), "right": 2**32 - 1}) == 2**32 - 1 - 2**31

    error = await failure(executor, app, "add", {"left": 1, "right": -1})
    assert error.code == ErrorCode.INVALID_PARAMS
    assert "/right: -1 is out of range for a DBus uint32 (0 to 4294967295)" in error.message


async def test_arrays_and_dictionaries_of_variants_go_out_typed_and_come_back_as_json(
    executor: DbusExecutor, service: TypedService
) -> None:
    app = typed_app()
    hints = {"urgency": 2, "label": "x", "ratio": 0.5, "on": True, "tags": ["a"], "nested": {"k": 1}}

    assert await run(executor, app, "echo_all", {"texts": ["a", "b\nc"]}) == ["a", "b\nc"]
    assert await run(executor, app, "describe", {"hints": hints}) == hints
    assert variant_signatures(service.received[-1]) == {
        "urgency": "i",
        "label": "s",
        "ratio": "d",
        "on": "b",
        "tags": "as",
        "nested": "a{sv}",
    }


async def test_structs_and_byte_arrays_in_a_reply_become_arrays(
    executor: DbusExecutor, service: TypedService
) -> None:
    assert await run(executor, typed_app(), "flags") == [True, [0, 1, 255]]
    assert await run(executor, typed_app(), "ratio", {"value": 2, "negate": True}) == -2.0


async def test_a_string_reply_is_parsed_as_json_only_when_the_tool_says_so(
    executor: DbusExecutor, service: TypedService
) -> None:
    app = typed_app()

    assert await run(executor, app, "echo", {"text": '{"a": 1}'}) == '{"a": 1}'
    assert await run(executor, app, "echo_json", {"text": '{"a": 1}'}) == {"a": 1}
    error = await failure(executor, app, "echo_json", {"text": "plain"})
    assert error.code == ErrorCode.EXECUTION_FAILED
    assert 'output_parser "json"' in error.message


async def test_a_json_reply_holding_nan_or_nested_too_deeply_to_parse_is_execution_failed(
    executor: DbusExecutor, service: TypedService
) -> None:
    app = typed_app()

    nan = await failure(executor, app, "echo_json", {"text": '{"ratio": NaN}'})
    deep = await failure(executor, app, "echo_json", {"text": "[" * 100_000 + "]" * 100_000})

    assert nan.code == ErrorCode.EXECUTION_FAILED
    assert "NaN is not JSON" in nan.message
    assert deep.code == ErrorCode.EXECUTION_FAILED
    assert "the app's answer is nested deeper than 100 levels" in deep.message


async def test_a_method_without_signature_gets_the_json_request_and_its_json_reply_is_parsed(
    executor: DbusExecutor, service: TypedService
) -> None:
    result = await run(executor, typed_app(), "json_request", {"anything": ["x", 1]})

    assert result == {"seen": {"anything": ["x", 1]}}


async def test_a_dbus_error_from_a_typed_method_keeps_its_name_and_message(
    executor: DbusExecutor, service: TypedService
) -> None:
    error = await failure(executor, typed_app(), "fail", {})

    assert error.code == ErrorCode.EXECUTION_FAILED
    assert error.data["dbus_error"] == "dev.aai.test.Error.Denied"
    assert "the user said no" in error.message


async def test_an_unknown_method_says_which_descriptor_fields_to_check(
    executor: DbusExecutor, service: TypedService
) -> None:
    error = await failure(executor, typed_app(), "missing_method", {})

    assert error.data["dbus_error"] == "org.freedesktop.DBus.Error.UnknownMethod"
    assert "check the descriptor's object path" in error.message


async def test_a_dialect_b_timeout_in_seconds_stops_a_slow_typed_call(
    executor: DbusExecutor, service: TypedService
) -> None:
    error = await failure(executor, typed_app(), "sleep", {"seconds": 3})

    assert error.code == ErrorCode.TIMEOUT
    assert "within 300 ms" in error.message


async def test_64_bit_integer_arrays_go_out_typed_at_their_limits(
    executor: DbusExecutor, service: TypedService
) -> None:
    signed, unsigned = [-(2**63), 0, 2**63 - 1], [0, 2**64 - 1]
    assert await run(executor, typed_app(), "wide", {"signed": signed, "unsigned": unsigned}) == [
        signed,
        unsigned,
    ]
    assert service.received == [(signed, unsigned)]
    error = await failure(executor, typed_app(), "wide", {"signed": [2**63], "unsigned": []})
    assert error.code == ErrorCode.INVALID_PARAMS and "/signed/0" in error.message


# --------------------------------------------------------------------------- fuzzing over the bus


@pytest.fixture(scope="module")
def on_the_bus() -> Iterator[tuple[BlockingPortal, DbusExecutor, TypedService]]:
    """An executor and the typed service on a real bus of their own, in an event loop of their
    own, so that Hypothesis (which drives plain functions) can call through them again and again."""
    with private_bus_or_fail() as bus, start_blocking_portal("asyncio") as portal:
        executor = DbusExecutor(environ=bus.env())
        with portal.wrap_async_context_manager(exported(bus.address)) as (_, typed):
            yield portal, executor, typed
        portal.call(executor.aclose)


BUS_EXAMPLES = settings(max_examples=min(settings().max_examples, 500))  # each one a real round trip


@BUS_EXAMPLES
@given(st.dictionaries(dbus_text, json_values, max_size=5))
def test_any_json_object_reaches_a_real_service_as_a_sv_and_comes_back_equal(
    on_the_bus: tuple[BlockingPortal, DbusExecutor, TypedService], hints: dict[str, Any]
) -> None:
    portal, executor, service = on_the_bus
    assert portal.call(run, executor, typed_app(), "describe", {"hints": hints}) == hints
    assert variant_free(service.received[-1]) == hints


@BUS_EXAMPLES
@given(st.lists(dbus_text, max_size=8), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=8))
def test_any_strings_and_64_bit_integers_arrive_exactly_as_typed_arguments(
    on_the_bus: tuple[BlockingPortal, DbusExecutor, TypedService], texts: list[str], numbers: list[int]
) -> None:
    portal, executor, service = on_the_bus
    assert portal.call(run, executor, typed_app(), "echo_all", {"texts": texts}) == texts
    assert service.received[-1] == texts
    unsigned = [abs(n) for n in numbers]
    wide = {"signed": numbers, "unsigned": unsigned}
    assert portal.call(run, executor, typed_app(), "wide", wide) == [numbers, unsigned]
