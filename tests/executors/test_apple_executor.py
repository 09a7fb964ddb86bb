"""The macOS executors against a stand-in `osascript` (a Python script on a temporary PATH that
records its argv and stdin and answers as told). Nothing here ran on a real macOS: the real
osascript, Apple Events and app permissions are untested."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, ExecutionType, Source, load_descriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.apple import AppleEventsExecutor, AppleScriptExecutor
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from tests.executors.dispatch import dispatched

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

STAND_IN = """#!{python}
import json, sys, time
from pathlib import Path
here = Path(__file__).parent
script = sys.stdin.read()
with open(here / "calls.jsonl", "a") as calls:
    calls.write(json.dumps({{"argv": sys.argv[1:], "stdin": script}}) + "\\n")
mode = json.loads((here / "mode.json").read_text())
if mode.get("sleep"):
    time.sleep(mode["sleep"])
sys.stderr.write(mode.get("stderr", ""))
sys.stdout.write(mode.get("stdout", ""))
sys.exit(mode.get("exit", 0))
"""


class FakeOsascript:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "osascript"
        self.path.write_text(STAND_IN.format(python=sys.executable))
        self.path.chmod(0o755)
        self.answer()

    def answer(self, stdout: str = "", stderr: str = "", exit: int = 0, sleep: float = 0) -> None:
        mode = {"stdout": stdout, "stderr": stderr, "exit": exit, "sleep": sleep}
        (self.folder / "mode.json").write_text(json.dumps(mode))

    def calls(self) -> list[dict[str, Any]]:
        lines = (self.folder / "calls.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]


@pytest.fixture
def osascript(tmp_path: Path) -> FakeOsascript:
    return FakeOsascript(tmp_path)


def load(name: str, kind: str = "file") -> AppDescriptor:
    path = EXAMPLES / name / "aai.json"
    location = str(path) if kind == "file" else "https://evil.example/.well-known/aai.json"
    return load_descriptor(path.read_bytes(), Source(kind=kind, location=location), "macos")


def call(
    app: AppDescriptor, tool: str, arguments: dict[str, Any], timeout_ms: int | None = None
) -> Invocation:
    found = app.tool(tool)
    assert found is not None
    if timeout_ms is not None:
        found = found.model_copy(update={"timeout_ms": timeout_ms})
    return Invocation(app, found, arguments, "req-1")


def scripts(osascript: FakeOsascript) -> AppleScriptExecutor:
    return AppleScriptExecutor(environ={"PATH": str(osascript.folder)}, platform="darwin")


async def test_a_jxa_tool_sends_its_script_on_stdin_and_returns_the_parsed_json(
    osascript: FakeOsascript,
) -> None:
    osascript.answer(stdout='{"state":"paused","track":null}\n')
    result = await scripts(osascript).execute(call(load("com.apple.Music"), "play", {"query": "$(id) `id`"}))
    assert result == {"state": "paused", "track": None}
    [made] = osascript.calls()
    assert made["argv"] == ["-l", "JavaScript", "-"]
    assert 'const query = __aai.t["query"];' in made["stdin"]
    assert made["stdin"].startswith(
        'var __aai = JSON.parse("{\\"v\\":{},\\"t\\":{\\"query\\":\\"$(id) `id`\\"}}");\n'
    )


async def test_a_record_result_is_parsed_from_source_form(osascript: FakeOsascript) -> None:
    app = load("com.example.planwise")
    invocation = call(app, "delete_event", {"event_id": 'e"1'})
    assert invocation.tool.call is not None
    record_call = invocation.tool.call.model_copy(update={"output_parser": "result as record"})
    invocation = Invocation(
        app, invocation.tool.model_copy(update={"call": record_call}), {"event_id": 'e"1'}, "r"
    )
    osascript.answer(stdout='{deleted:true, ids:{"e\\"1"}, count:1}\n')
    assert await scripts(osascript).execute(invocation) == {"deleted": True, "ids": ['e"1'], "count": 1}
    [made] = osascript.calls()
    assert made["argv"] == ["-l", "AppleScript", "-s", "s", "-"]
    assert '(first event whose id is "e\\"1")' in made["stdin"]


async def test_a_result_nested_too_deeply_to_read_is_execution_failed_as_json_or_as_a_record(
    osascript: FakeOsascript,
) -> None:
    music = call(load("com.apple.Music"), "play", {"query": "x"})
    planwise = call(load("com.example.planwise"), "delete_event", {"event_id": "e1"})
    assert planwise.tool.call is not None
    record_call = planwise.tool.call.model_copy(update={"output_parser": "result as record"})
    planwise = Invocation(
        planwise.app, planwise.tool.model_copy(update={"call": record_call}), {"event_id": "e1"}, "r"
    )
    failures = []
    for invocation, deep in (
        (music, "[" * 100_000 + "]" * 100_000),
        (planwise, "{" * 100_000 + "}" * 100_000),
    ):
        osascript.answer(stdout=deep + "\n")
        with pytest.raises(AaiError) as caught:
            await scripts(osascript).execute(invocation)
        failures.append(caught.value)
    osascript.answer(stdout='{"state":"playing"}\n')
    after = await scripts(osascript).execute(music)

    assert [f.code for f in failures] == [ErrorCode.EXECUTION_FAILED] * 2
    assert all("the app's answer is nested deeper than 100 levels" in f.message for f in failures)
    assert after == {"state": "playing"}


async def test_a_script_that_runs_too_long_is_stopped_with_timeout(osascript: FakeOsascript) -> None:
    osascript.answer(sleep=30)
    started = time.monotonic()
    with pytest.raises(AaiError) as caught:
        await scripts(osascript).execute(call(load("com.apple.Music"), "pause", {}, timeout_ms=300))
    assert caught.value.code == ErrorCode.TIMEOUT
    assert time.monotonic() - started < 5


async def test_an_error_on_stderr_is_execution_failed_with_osascripts_message(
    osascript: FakeOsascript,
) -> None:
    osascript.answer(stderr="execution error: Music got an error: Can't get playlist. (-1728)\n", exit=1)
    with pytest.raises(AaiError) as caught:
        await scripts(osascript).execute(call(load("com.apple.Music"), "pause", {}))
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert "Can't get playlist. (-1728)" in caught.value.message
    assert caught.value.data["osa_error"] == -1728


async def test_a_missing_automation_permission_says_where_to_grant_it(osascript: FakeOsascript) -> None:
    osascript.answer(
        stderr="execution error: Not authorized to send Apple events to Music. (-1743)\n", exit=1
    )
    with pytest.raises(AaiError, match="Privacy & Security > Automation"):
        await scripts(osascript).execute(call(load("com.apple.Music"), "pause", {}))


async def test_an_apple_event_carries_the_json_request_and_returns_the_apps_result(
    osascript: FakeOsascript,
) -> None:
    response = {"version": "1.0", "request_id": "req-1", "status": "success", "result": {"running": True}}
    osascript.answer(stdout=json.dumps(response) + "\n")
    executor = AppleEventsExecutor(environ={"PATH": str(osascript.folder)}, platform="darwin")
    result = await executor.execute(
        call(load("dev.aai.example.timetracker"), "startTimer", {"project": "é\"'"})
    )
    assert result == {"running": True}
    [made] = osascript.calls()
    assert made["argv"][:2] == ["-", "dev.aai.example.TimeTracker"]
    assert json.loads(made["argv"][2]) == {
        "version": "1.0",
        "request_id": "req-1",
        "tool": "startTimer",
        "params": {"project": "é\"'"},
    }
    assert "«event AAI call» (item 2 of argv)" in made["stdin"]
    assert "é" not in made["stdin"]


async def test_an_apps_error_response_keeps_its_code(osascript: FakeOsascript) -> None:
    response = {"version": "1.0", "status": "error", "error": {"code": "NOT_FOUND", "message": "no timer"}}
    osascript.answer(stdout=json.dumps(response))
    executor = AppleEventsExecutor(environ={"PATH": str(osascript.folder)}, platform="darwin")
    with pytest.raises(AaiError) as caught:
        await executor.execute(call(load("dev.aai.example.timetracker"), "stopTimer", {}))
    assert caught.value.code == ErrorCode.NOT_FOUND


async def test_a_descriptor_from_the_web_never_runs_a_script(osascript: FakeOsascript) -> None:
    with pytest.raises(AaiError) as caught:
        await dispatched(scripts(osascript), call(load("com.apple.Music", kind="web"), "pause", {}))
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert not (osascript.folder / "calls.jsonl").exists()


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the behaviour off macOS")
async def test_off_macos_both_executors_say_they_need_macos() -> None:
    tool = load("com.apple.Music").tool("pause")
    assert tool is not None
    for executor in (AppleScriptExecutor(environ={}), AppleEventsExecutor(environ={})):
        reason = executor.unavailable_reason(tool)
        assert reason is not None and "needs macOS (osascript)" in reason
    with pytest.raises(AaiError) as caught:
        await AppleScriptExecutor(environ={}).execute(call(load("com.apple.Music"), "pause", {}))
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE


def test_without_osascript_on_path_the_reason_says_so(tmp_path: Path) -> None:
    tool = load("com.apple.Music").tool("pause")
    assert tool is not None
    reason = AppleScriptExecutor(environ={"PATH": str(tmp_path)}, platform="darwin").unavailable_reason(tool)
    assert reason is not None and "osascript was not found" in reason


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the behaviour off macOS")
def test_the_default_registry_has_an_executor_for_every_macos_execution_type() -> None:
    registry = default_registry(ExecutorSettings(environ={"PATH": "/usr/bin"}))
    music, tracker = load("com.apple.Music"), load("dev.aai.example.timetracker")
    pause, start = music.tool("pause"), tracker.tool("startTimer")
    assert pause is not None and start is not None
    assert pause.execution_type == ExecutionType.JXA and start.execution_type == ExecutionType.APPLE_EVENTS
    for tool in (pause, start):  # the reason is the macOS executors' own, not "no executor"
        assert "needs macOS (osascript)" in (registry.unavailable_reason(tool) or "")
