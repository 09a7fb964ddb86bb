"""The Android executor against a stand-in `adb` on a temporary PATH (no device is involved)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.android import NEEDS_ADB, AndroidExecutor
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry

from .mobile_support import EVENT, call, calls, planwise, stand_in

pytestmark = pytest.mark.anyio

ADB = r"""
mode = open(os.path.join(here, "mode")).read().strip()
if mode == "sleep":
    time.sleep(30)
if mode == "nodevice":
    sys.stderr.write("adb: no devices/emulators found\n")
    sys.exit(1)
if mode == "crash":
    sys.stderr.write("something broke\n")
    sys.exit(3)
if "broadcast" in args:
    print("Broadcasting: Intent { act=A flg=0x400000 pkg=com.example.planwise }")
    if mode == "deep":
        print('Broadcast completed: result=-1, data="' + "[" * 100000 + "]" * 100000 + '"')
    else:
        print('Broadcast completed: result=-1, data="{\"event_id\": \"e-1\"}"' if mode == "json" else
              'Broadcast completed: result=0, data="saved"')
elif "start" in args:
    if mode == "unresolved":
        print("Error: Activity not started, unable to resolve Intent")
    else:
        print("Starting: Intent { act=A }\nStatus: ok\nComplete")
elif "content" in args and mode == "late":  # the app writes its result a moment after the intent
    count = len(open(os.path.join(here, "calls.jsonl")).read().splitlines())
    print("No result found." if count < 4 else "Row: 0 event_id=e-9")
elif "content" in args and mode == "empty":
    print("No result found.")
elif "content" in args:
    print("Row: 0 event_id=e-1, title=Dentist, location=NULL")
    print("Row: 1 event_id=e-2, title=Lunch, Bob, location=Cafe")
"""


ENV_LOG = r"""
with open(os.path.join(here, "env.json"), "w") as log:
    json.dump(dict(os.environ), log)
"""


def adb_executor(
    tmp_path: Path, mode: str, serial: str | None = "emulator-5554", **more: str
) -> tuple[AndroidExecutor, Path]:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "adb", ADB + ENV_LOG)
    (bin_dir / "mode").write_text(mode, encoding="utf-8")
    environ = {"PATH": str(bin_dir), **more}
    if serial is not None:
        environ["ANDROID_SERIAL"] = serial
    return AndroidExecutor(environ=environ), bin_dir


async def test_a_broadcast_tool_runs_am_broadcast_and_answers_the_result_data_as_json(tmp_path: Path) -> None:
    executor, bin_dir = adb_executor(tmp_path, "json")
    result = await executor.execute(_call("create_event", {**EVENT, "title": "it's $(id)"}))
    assert result == {"event_id": "e-1"}
    [argv] = calls(bin_dir)
    assert argv[:7] == [
        "-s",
        "emulator-5554",
        "shell",
        "am",
        "broadcast",
        "-a",
        "com.example.planwise.action.CREATE_EVENT",
    ]
    assert argv[9:12] == ["--es", "title", "'it'\\''s $(id)'"]


async def test_broadcast_data_nested_too_deeply_to_read_is_execution_failed(tmp_path: Path) -> None:
    executor, _ = adb_executor(tmp_path, "deep")
    with pytest.raises(AaiError) as caught:
        await executor.execute(_call("create_event", EVENT))
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert "the app's answer is nested deeper than 100 levels" in caught.value.message


async def test_broadcast_data_that_is_not_json_comes_back_with_the_result_code(tmp_path: Path) -> None:
    executor, _ = adb_executor(tmp_path, "text", serial=None)
    assert await executor.execute(_call("create_event", EVENT)) == {"result_code": 0, "data": "saved"}


async def test_a_content_provider_tool_queries_the_result_uri_after_starting_the_intent(
    tmp_path: Path,
) -> None:
    executor, bin_dir = adb_executor(tmp_path, "rows", serial=None)
    arguments = {"from": "2025-06-03T00:00:00Z", "to": "2025-06-04T00:00:00Z", "calendar": "Work"}
    result = await executor.execute(_call("list_events", arguments))
    assert result == {
        "rows": [
            {"event_id": "e-1", "title": "Dentist", "location": None},
            {"event_id": "e-2", "title": "Lunch, Bob", "location": "Cafe"},
        ]
    }
    started, queried = calls(bin_dir)
    assert started[:4] == ["shell", "am", "start", "-W"]
    assert queried == ["shell", "content", "query", "--uri", "content://com.example.planwise.provider/events"]


async def test_an_intent_nobody_handles_is_an_execution_failure(tmp_path: Path) -> None:
    executor, bin_dir = adb_executor(tmp_path, "unresolved")
    with pytest.raises(AaiError, match="unable to resolve Intent") as caught:
        await executor.execute(_call("list_events", {"from": "a", "to": "b"}))
    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert len(calls(bin_dir)) == 1  # no query after a failed intent


async def test_no_device_is_service_unavailable_and_other_adb_failures_execution_failed(
    tmp_path: Path,
) -> None:
    executor, _ = adb_executor(tmp_path, "nodevice")
    with pytest.raises(AaiError, match="no devices") as caught:
        await executor.execute(_call("create_event", EVENT))
    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    (tmp_path / "bin" / "mode").write_text("crash", encoding="utf-8")
    with pytest.raises(AaiError, match="code 3: something broke") as caught:
        await executor.execute(_call("create_event", EVENT))
    assert caught.value.code is ErrorCode.EXECUTION_FAILED


async def test_an_adb_that_hangs_is_stopped_at_the_tool_timeout(tmp_path: Path) -> None:
    executor, _ = adb_executor(tmp_path, "sleep")
    started = time.monotonic()
    with pytest.raises(AaiError) as caught:
        await executor.execute(_call("create_event", EVENT, timeout_ms=300))
    assert caught.value.code is ErrorCode.TIMEOUT
    assert time.monotonic() - started < 5


async def test_an_argument_am_cannot_carry_is_invalid_params(tmp_path: Path) -> None:
    executor, bin_dir = adb_executor(tmp_path, "json")
    with pytest.raises(AaiError) as caught:
        await executor.execute(_call("create_event", {**EVENT, "notes": "a\0b"}))
    assert caught.value.code is ErrorCode.INVALID_PARAMS
    assert calls(bin_dir) == []


def test_without_adb_on_path_the_tool_says_what_it_needs(tmp_path: Path) -> None:
    tool = planwise("android").tool("create_event")
    assert tool is not None
    assert AndroidExecutor(environ={"PATH": str(tmp_path)}).unavailable_reason(tool) == NEEDS_ADB
    registry = default_registry(ExecutorSettings(environ={"PATH": str(tmp_path)}))
    assert registry.unavailable_reason(tool) == NEEDS_ADB


def _call(tool: str, arguments: dict[str, Any], *, timeout_ms: int | None = None) -> Invocation:
    return call(planwise("android"), tool, dict(arguments), timeout_ms=timeout_ms)


async def test_a_result_the_app_writes_a_moment_late_is_still_read(tmp_path: Path) -> None:
    executor, bin_dir = adb_executor(tmp_path, "late")
    result = await executor.execute(_call("list_events", {"from": "a", "to": "b"}))
    assert result == {"rows": [{"event_id": "e-9"}]}
    assert len([c for c in calls(bin_dir) if "content" in c]) == 3  # asked again until it came


async def test_a_provider_with_no_rows_answers_no_rows_after_asking_again_a_few_times(tmp_path: Path) -> None:
    executor, bin_dir = adb_executor(tmp_path, "empty")
    assert await executor.execute(_call("list_events", {"from": "a", "to": "b"})) == {"rows": []}
    assert len([c for c in calls(bin_dir) if "content" in c]) >= 2


async def test_adb_gets_the_variables_it_needs_and_nothing_else_of_the_gateways_environment(
    tmp_path: Path,
) -> None:
    executor, bin_dir = adb_executor(
        tmp_path, "json", ANDROID_ADB_SERVER_PORT="5038", GITHUB_TOKEN="ghp_secret", AAI_GATEWAY_CONFIG="/x"
    )
    await executor.execute(_call("create_event", EVENT))
    seen = json.loads((bin_dir / "env.json").read_text(encoding="utf-8"))
    assert seen["ANDROID_ADB_SERVER_PORT"] == "5038" and seen["ANDROID_SERIAL"] == "emulator-5554"
    assert "GITHUB_TOKEN" not in seen and "AAI_GATEWAY_CONFIG" not in seen
