"""The DBus executor with AAI-native services (`Execute(s) -> s`), on a real private bus."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.dbus import DbusExecutor
from tests.builders import c_descriptor
from tests.dbus_bus import PrivateBus, private_bus_or_fail
from tests.executors.conftest import invocation, load
from tests.executors.dbus_services import AAI_INTERFACE, OBJECT_PATH, SERVICE, AaiService, exported

pytestmark = pytest.mark.anyio

ADVERSARIAL = [
    "double \"quotes\" and 'single'",
    "back\\slash \\n \\u0000 \\\\",
    "$(rm -rf ~) `id` ${HOME} %s %n",
    "line one\nline two\r\nthree\ttab",
    "emoji 🎉👩‍👩‍👧 and a lone-looking \u200d joiner",
    "RTL \u202eevil\u202c עברית العربية",
    "NUL \x00 in the middle",
    "</busconfig><!-- xml -->",
    "",
]


def aai_app(*, service: str = SERVICE, timeout_ms: int = 10_000) -> AppDescriptor:
    document = c_descriptor(
        "dev.aai.test.app",
        type="dbus",
        service=service,
        objectPath=OBJECT_PATH,
        interface=AAI_INTERFACE,
        timeout=timeout_ms,
    )
    document["tools"] = [
        {"name": name, "description": f"{name} for tests", "parameters": {"type": "object"}}
        for name in ("echo", "fail", "sleep", "garbage", "raise")
    ]
    return load(document)


@pytest.fixture(scope="module")
def bus() -> Iterator[PrivateBus]:
    with private_bus_or_fail() as running:
        yield running


@pytest.fixture
async def service(bus: PrivateBus) -> AsyncIterator[AaiService]:
    async with exported(bus.address) as (aai, _):
        yield aai


@pytest.fixture
async def executor(bus: PrivateBus) -> AsyncIterator[DbusExecutor]:
    running = DbusExecutor(environ=bus.env())
    yield running
    await running.aclose()


async def failure(executor: DbusExecutor, app: AppDescriptor, tool: str, args: dict[str, Any]) -> AaiError:
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, tool, args))
    return caught.value


async def test_execute_gets_the_json_request_and_its_result_is_returned(
    executor: DbusExecutor, service: AaiService
) -> None:
    result = await executor.execute(invocation(aai_app(), "echo", {"text": "hi", "n": [1, 2]}))

    assert result == {"text": "hi", "n": [1, 2]}
    assert json.loads(service.requests[0]) == {
        "version": "1.0",
        "request_id": "test-1",
        "tool": "echo",
        "params": {"text": "hi", "n": [1, 2]},
    }


@pytest.mark.parametrize("text", ADVERSARIAL)
async def test_adversarial_strings_arrive_byte_exact_inside_the_json_request(
    executor: DbusExecutor, service: AaiService, text: str
) -> None:
    result = await executor.execute(invocation(aai_app(), "echo", {"text": text, text: "as a key"}))

    assert result == {"text": text, text: "as a key"}
    assert json.loads(service.requests[-1])["params"] == {"text": text, text: "as a key"}


async def test_text_that_is_not_unicode_is_invalid_params_and_never_sent(
    executor: DbusExecutor, service: AaiService
) -> None:
    error = await failure(executor, aai_app(), "echo", {"text": "lone \ud800 surrogate"})

    assert error.code == ErrorCode.INVALID_PARAMS
    assert "not valid Unicode" in error.message
    assert service.requests == []


async def test_an_error_response_keeps_the_apps_code_and_message(
    executor: DbusExecutor, service: AaiService
) -> None:
    error = await failure(executor, aai_app(), "fail", {})

    assert error.code == ErrorCode.NOT_FOUND
    assert "no 7" in error.message
    assert error.data["app_error_code"] == "NOT_FOUND"


async def test_an_answer_that_is_not_json_is_execution_failed_showing_its_start(
    executor: DbusExecutor, service: AaiService
) -> None:
    error = await failure(executor, aai_app(), "garbage", {})

    assert error.code == ErrorCode.EXECUTION_FAILED
    assert error.data["output_start"] == "this is not JSON"


async def test_a_dbus_error_reply_keeps_the_dbus_error_name_and_message(
    executor: DbusExecutor, service: AaiService
) -> None:
    error = await failure(executor, aai_app(), "raise", {})

    assert error.code == ErrorCode.EXECUTION_FAILED
    assert "dev.aai.test.Error.Broken: the frobnicator broke" in error.message
    assert error.data["dbus_error"] == "dev.aai.test.Error.Broken"
    assert error.data["dbus_message"] == "the frobnicator broke"


async def test_a_missing_service_is_service_unavailable_naming_it(executor: DbusExecutor) -> None:
    error = await failure(executor, aai_app(service="dev.aai.test.Nobody"), "echo", {})

    assert error.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "'dev.aai.test.Nobody' is not on the session bus" in error.message
    assert error.data["dbus_error"] == "org.freedesktop.DBus.Error.ServiceUnknown"


async def test_a_call_that_outlives_its_timeout_is_a_timeout_and_the_connection_stays_usable(
    executor: DbusExecutor, service: AaiService
) -> None:
    app = aai_app(timeout_ms=300)
    with anyio.fail_after(5):
        error = await failure(executor, app, "sleep", {"seconds": 3})

    assert error.code == ErrorCode.TIMEOUT
    assert "within 300 ms" in error.message
    assert await executor.execute(invocation(app, "echo", {"after": "timeout"})) == {"after": "timeout"}


async def test_many_calls_in_flight_from_the_first_one_on_share_one_connection(
    executor: DbusExecutor, service: AaiService
) -> None:
    app = aai_app()
    results: dict[int, Any] = {}

    async def one(index: int) -> None:
        results[index] = await executor.execute(invocation(app, "sleep", {"seconds": 0.05, "i": index}))

    async with anyio.create_task_group() as tasks:
        for index in range(64):
            tasks.start_soon(one, index)

    assert results == {i: {"seconds": 0.05, "i": i} for i in range(64)}
    assert len(service.senders) == 64
    assert len(set(service.senders)) == 1
