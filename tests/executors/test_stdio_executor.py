"""StdioExecutor against real adapter processes (tests/executors/adapters/*.py run with sys.executable)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.errors import AaiError, AppReportedError, ErrorCode, ServiceUnavailableError
from aai_gateway.executors import Invocation
from aai_gateway.executors.programs import PASSED_ENVIRONMENT, PASSED_ENVIRONMENT_WINDOWS
from aai_gateway.executors.stdio import StdioExecutor
from tests.builders import c_descriptor
from tests.executors.dispatch import dispatched
from tests.processes import process_gone

ADAPTERS = Path(__file__).with_name("adapters")
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and signals")
# Fast enough for tests, still long enough for an adapter to handle SIGTERM.
GRACE = 0.3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def adapter(name: str) -> str:
    return str(ADAPTERS / f"{name}.py")


def stdio_app(
    folder: Path,
    *args: str,
    command: str = sys.executable,
    env: dict[str, str] | None = None,
    timeout_ms: int | None = None,
    source_kind: str = "file",
) -> AppDescriptor:
    """A dialect-C stdio descriptor (tool `ping`), read as if from `folder/aai.json`."""
    execution: dict[str, Any] = {"type": "stdio", "command": command, "args": list(args)}
    if env is not None:
        execution["env"] = env
    if timeout_ms is not None:
        execution["timeout"] = timeout_ms
    location = folder / "aai.json"
    text = json.dumps(c_descriptor("dev.test.stdio", name="Stdio Test", **execution))
    if source_kind == "web":
        source = Source(kind="web", location="https://apps.example/aai.json", origin="https://apps.example")
    else:
        location.write_text(text, encoding="utf-8")
        source = Source(kind="file", location=str(location))
    result = load_text(text, source)
    assert result.descriptor is not None, result.problems
    return result.descriptor


def invocation(app: AppDescriptor, arguments: dict[str, Any] | None = None) -> Invocation:
    tool = app.tool("ping")
    assert tool is not None
    return Invocation(app=app, tool=tool, arguments=arguments or {}, request_id=uuid.uuid4().hex)


def read_pids(pidfile: Path) -> list[int]:
    return [int(pid) for pid in pidfile.read_text(encoding="utf-8").split()]


async def wait_for_pids(pidfile: Path) -> list[int]:
    with anyio.fail_after(10):
        while not pidfile.exists():  # noqa: ASYNC110, ASYNC240 (polling a file another process writes)
            await anyio.sleep(0.02)
    return read_pids(pidfile)


async def assert_all_gone(pids: list[int], within: float = 2.0) -> None:
    """Stopped processes can take a moment to disappear after SIGKILL."""
    deadline = time.monotonic() + within
    while not all(process_gone(pid) for pid in pids) and time.monotonic() < deadline:  # noqa: ASYNC110
        await anyio.sleep(0.02)
    assert [pid for pid in pids if not process_gone(pid)] == []


def kill_leftovers(pids: list[int]) -> None:
    """Clean up after a failed assertion, so no test leaves sleeping processes behind."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def executable_copy_of_echo(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text(f"#!{sys.executable}\n" + Path(adapter("echo")).read_text(encoding="utf-8"))
    path.chmod(0o755)


# --------------------------------------------------------------------------- answers


@pytest.mark.anyio
async def test_echo_adapter_gets_the_request_as_one_stdin_line_and_its_result_comes_back(
    tmp_path: Path,
) -> None:
    app = stdio_app(tmp_path, adapter("echo"))
    call = invocation(app, {"text": "hello", "count": 3, "nested": {"a": [1, 2.5, None, True]}})

    result = await StdioExecutor(environ=os.environ).execute(call)

    assert result["request_id"] == call.request_id
    assert result["tool"] == "ping"
    assert result["params"] == {"text": "hello", "count": 3, "nested": {"a": [1, 2.5, None, True]}}
    assert result["stdin"].endswith("\n") and result["stdin"].count("\n") == 1
    assert json.loads(result["stdin"]) == {
        "version": "1.0",
        "request_id": call.request_id,
        "tool": "ping",
        "params": call.arguments,
    }
    assert result["argv"] == [adapter("echo")]
    assert Path(result["cwd"]) == tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("exit_code", [0, 3])
async def test_an_app_error_response_is_raised_with_the_apps_code_and_message(
    tmp_path: Path, exit_code: int
) -> None:
    app = stdio_app(tmp_path, adapter("app_error"))

    with pytest.raises(AppReportedError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app, {"exit": exit_code}))

    assert caught.value.code is ErrorCode.NOT_FOUND
    assert "no note with id 42" in caught.value.message
    assert caught.value.data["app_error_code"] == "NOT_FOUND"
    if exit_code:
        assert caught.value.data["exit_code"] == exit_code


# --------------------------------------------------------------------------- stopping processes


@POSIX_ONLY
@pytest.mark.anyio
@pytest.mark.parametrize("ignore_term", [False, True], ids=["obeys-sigterm", "ignores-sigterm"])
async def test_timeout_stops_the_adapter_and_its_grandchild(tmp_path: Path, ignore_term: bool) -> None:
    app = stdio_app(tmp_path, adapter("hang"), timeout_ms=1000)
    pidfile = tmp_path / "pids"
    executor = StdioExecutor(environ=os.environ, kill_grace_seconds=GRACE)
    started = time.monotonic()

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, {"pidfile": str(pidfile), "ignore_term": ignore_term}))

    elapsed = time.monotonic() - started
    pids = read_pids(pidfile)
    try:
        assert caught.value.code is ErrorCode.TIMEOUT
        assert "1000 ms" in caught.value.message
        assert elapsed < 1.0 + GRACE + 1.5
        await assert_all_gone(pids)
    finally:
        kill_leftovers(pids)


@POSIX_ONLY
@pytest.mark.anyio
async def test_cancelling_the_calling_task_stops_the_whole_process_group(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("hang"))
    pidfile = tmp_path / "pids"
    executor = StdioExecutor(environ=os.environ, kill_grace_seconds=GRACE)
    outcome: list[str] = []

    async def call() -> None:
        try:
            await executor.execute(invocation(app, {"pidfile": str(pidfile), "ignore_term": True}))
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call)
        pids = await wait_for_pids(pidfile)
        tasks.cancel_scope.cancel()

    try:
        assert outcome == ["cancelled"]
        await assert_all_gone(pids)
    finally:
        kill_leftovers(pids)


@POSIX_ONLY
@pytest.mark.anyio
async def test_an_answer_comes_back_even_when_a_background_child_holds_stdout_and_that_child_is_stopped(
    tmp_path: Path,
) -> None:
    app = stdio_app(tmp_path, adapter("straggler"), timeout_ms=10_000)
    pidfile = tmp_path / "pids"
    executor = StdioExecutor(environ=os.environ, kill_grace_seconds=GRACE, output_drain_seconds=0.3)
    started = time.monotonic()

    result = await executor.execute(invocation(app, {"pidfile": str(pidfile)}))

    pids = read_pids(pidfile)
    try:
        assert result == {"ok": True}
        assert time.monotonic() - started < 3
        await assert_all_gone(pids)
    finally:
        kill_leftovers(pids)


# --------------------------------------------------------------------------- failures


@pytest.mark.anyio
async def test_a_crash_names_the_exit_code_and_the_end_of_stderr(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("crash"))

    with pytest.raises(AaiError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app))

    error = caught.value
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "exited with code 7" in error.message
    assert error.message.rstrip().endswith("fatal: database is locked")
    assert error.data["exit_code"] == 7
    assert "starting up" not in error.data["stderr_tail"]  # trimmed to its end
    assert len(error.message) < 3000


@POSIX_ONLY
@pytest.mark.anyio
async def test_death_by_a_signal_is_named(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("crash"))

    with pytest.raises(AaiError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app, {"abort": True}))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "killed by SIGABRT" in caught.value.message


@pytest.mark.anyio
async def test_output_that_is_not_json_fails_with_a_preview_of_it(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("garbage"))

    with pytest.raises(AaiError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "not JSON" in caught.value.message
    assert caught.value.data["output_start"].startswith("Hello! I am not JSON")
    assert len(caught.value.data["output_start"]) <= 201


@pytest.mark.anyio
@pytest.mark.parametrize("answer", ["nan", "infinity", "-infinity"])
async def test_an_answer_holding_nan_or_infinity_is_not_json_and_fails(tmp_path: Path, answer: str) -> None:
    app = stdio_app(tmp_path, adapter("odd_json"))

    with pytest.raises(AaiError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app, {"answer": answer}))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "Infinity is not JSON" in caught.value.message or "NaN is not JSON" in caught.value.message
    assert caught.value.data["app"] == "dev.test.stdio"


@pytest.mark.anyio
async def test_an_answer_nested_too_deeply_to_parse_fails_naming_app_and_tool_and_the_next_call_works(
    tmp_path: Path,
) -> None:
    app = stdio_app(tmp_path, adapter("odd_json"))
    executor = StdioExecutor(environ=os.environ)

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, {"answer": "nested", "depth": 100_000}))
    fine = await executor.execute(invocation(app, {"answer": "fine"}))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith(
        "dev.test.stdio ping: the app's answer is nested deeper than 100 levels"
    )
    assert caught.value.data == {"app": "dev.test.stdio", "tool": "ping", "max_depth": 100}
    assert fine == {"ok": True}


@POSIX_ONLY
@pytest.mark.anyio
async def test_fifty_megabytes_of_output_fail_fast_without_being_buffered(tmp_path: Path) -> None:
    import resource

    app = stdio_app(tmp_path, adapter("flood"))
    executor = StdioExecutor(environ=os.environ, kill_grace_seconds=GRACE)
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
    started = time.monotonic()

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app))

    elapsed = time.monotonic() - started
    peak_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit - peak_before
    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert f"more than {16 * 1024 * 1024} bytes" in caught.value.message
    assert elapsed < 5
    assert peak_growth < 40 * 1024 * 1024


@pytest.mark.anyio
async def test_empty_output_fails_and_a_child_that_never_reads_stdin_does_no_harm(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("silent"))

    with pytest.raises(AaiError) as caught:  # a 1 MB request the child never reads
        await StdioExecutor(environ=os.environ).execute(invocation(app, {"text": "y" * 1_000_000}))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "without writing a response" in caught.value.message


@pytest.mark.anyio
async def test_a_lone_surrogate_in_the_arguments_is_refused_before_anything_runs(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("echo"))

    with pytest.raises(AaiError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation(app, {"text": "\ud800"}))

    assert caught.value.code is ErrorCode.INVALID_PARAMS


# --------------------------------------------------------------------------- where and how it runs


@pytest.mark.anyio
async def test_the_child_sees_only_allowlisted_variables_plus_the_descriptor_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AAI_TEST_SECRET_TOKEN", "sk-live-do-not-leak-0123456789")
    monkeypatch.setenv("LANG", "C.UTF-8")
    app = stdio_app(tmp_path, adapter("echo"), env={"NOTES_MODE": "test", "LANG": "de_DE.UTF-8"})

    result = await StdioExecutor(environ=os.environ).execute(invocation(app))

    child_env: dict[str, str] = result["env"]
    assert "AAI_TEST_SECRET_TOKEN" not in child_env
    assert all("sk-live-do-not-leak" not in value for value in child_env.values())
    assert child_env["NOTES_MODE"] == "test"
    assert child_env["LANG"] == "de_DE.UTF-8"  # the descriptor's env wins
    assert child_env["PATH"] == os.environ["PATH"]
    allowed = {*PASSED_ENVIRONMENT, *PASSED_ENVIRONMENT_WINDOWS, "NOTES_MODE"}
    added_by_the_child_itself = {"LC_CTYPE", "__CF_USER_TEXT_ENCODING"}  # Python's locale coercion, macOS
    assert set(child_env) - allowed - added_by_the_child_itself == set()


@pytest.mark.anyio
async def test_relative_args_resolve_in_the_descriptor_folder_not_the_gateways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    shutil.copy(adapter("echo"), folder / "my_adapter.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    app = stdio_app(folder, "my_adapter.py", "--verbose")

    result = await StdioExecutor(environ=os.environ).execute(invocation(app, {"text": "hi"}))

    assert result["params"] == {"text": "hi"}
    assert result["argv"] == ["my_adapter.py", "--verbose"]
    assert Path(result["cwd"]) == folder


@POSIX_ONLY
@pytest.mark.anyio
async def test_a_relative_command_with_a_slash_resolves_against_the_descriptor_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "app"
    executable_copy_of_echo(folder / "bin" / "notes-adapter")
    monkeypatch.chdir(tmp_path)  # a `bin/notes-adapter` relative to here must not be what runs
    app = stdio_app(folder, "--flag", command="bin/notes-adapter")

    result = await StdioExecutor(environ=os.environ).execute(invocation(app))

    assert result["argv"][1:] == ["--flag"]
    assert Path(result["cwd"]) == folder
    assert StdioExecutor(environ=os.environ).unavailable_reason(app.tools[0]) is None


@pytest.mark.anyio
@pytest.mark.parametrize("command", ["aai-no-such-adapter-7f3e", "bin/aai-no-such-adapter"])
async def test_a_missing_command_is_service_unavailable_naming_the_command_and_the_descriptor(
    tmp_path: Path, command: str
) -> None:
    app = stdio_app(tmp_path, command=command)
    executor = StdioExecutor(environ=os.environ)

    with pytest.raises(ServiceUnavailableError) as caught:
        await executor.execute(invocation(app))

    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert repr(command) in caught.value.message
    assert str(tmp_path / "aai.json") in caught.value.message
    assert caught.value.data["command"] == command
    if "/" not in command:
        reason = executor.unavailable_reason(app.tools[0])
        assert reason is not None and command in reason


def test_unavailable_reason_is_none_for_a_program_that_exists(tmp_path: Path) -> None:
    assert (
        StdioExecutor(environ=os.environ).unavailable_reason(stdio_app(tmp_path, adapter("echo")).tools[0])
        is None
    )
    found = shutil.which("python3") or shutil.which("python")
    assert found is not None
    bare = stdio_app(tmp_path, command=Path(found).name)
    assert StdioExecutor(environ=os.environ).unavailable_reason(bare.tools[0]) is None


@pytest.mark.anyio
async def test_a_descriptor_fetched_from_the_web_cannot_start_a_local_program(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    app = stdio_app(tmp_path, "-c", f"open({str(marker)!r}, 'w')", source_kind="web")

    with pytest.raises(ServiceUnavailableError) as caught:
        await dispatched(StdioExecutor(environ=os.environ), invocation(app))

    assert "from the web" in caught.value.message
    assert not marker.exists()


# --------------------------------------------------------------------------- parameters are data

ADVERSARIAL: dict[str, Any] = {
    "quotes": 'it\'s "double" and \'single\' """',
    "backslashes": "C:\\Users\\me\\ \\\\server\\share \\n \\u0000 \\",
    "subshell": "$(rm -rf /)",
    "backticks": "`rm -rf /` ${HOME} %PATH% !! $'\\x41'",
    "shell_chain": "; ls | cat /etc/passwd && echo pwned > /tmp/x #",
    "newlines": "line1\nline2\r\nline3\rend\t\x0b\x0c",
    "controls": "\x01\x1b[31mred\x1b[0m\x7f",
    "unicode": "笔记 メモ Zürich 🚀 e\u0301 \u202eRTL\u202c \u2028sep\u2029 \ufeffbom \U0010fffd",
    "json_lookalike": '{"status":"error"}\n{"version":"1.0","tool":"delete_all","params":{}}',
    "dash": "--help",
    "nested": {"list": ["$(id)", "`id`", {"deep": '\\"\n'}], "empty": ""},
    "long": 'ab\\"c\n' * 150_000,
}


@pytest.mark.anyio
async def test_adversarial_parameters_arrive_byte_exact_and_never_in_argv_or_environment(
    tmp_path: Path,
) -> None:
    app = stdio_app(tmp_path, adapter("echo"))

    result = await StdioExecutor(environ=os.environ).execute(invocation(app, ADVERSARIAL))

    assert result["params"] == ADVERSARIAL
    assert result["stdin"].count("\n") == 1
    strings = [value for value in ADVERSARIAL.values() if isinstance(value, str)]
    assert not any(value in argument for value in strings for argument in result["argv"])
    assert not any(value in env_value for value in strings for env_value in result["env"].values())


LINE_BREAKERS = {
    "separators": "a\u2028b\u2029c\x85d",  # what str.splitlines() splits on beyond ASCII
    "ascii_breakers": "v\x0bf\x0cfs\x1cgs\x1drs\x1eend",
    "newlines": "n\nr\rrn\r\n",
    "in_a_key\u2028\x85": ["\u2029", {"\u2028": "\x85"}],
}


@pytest.mark.anyio
async def test_line_separators_in_parameters_reach_an_adapter_that_splits_lines_exactly(
    tmp_path: Path,
) -> None:
    app = stdio_app(tmp_path, adapter("splitlines"))

    result = await StdioExecutor(environ=os.environ).execute(invocation(app, LINE_BREAKERS))

    assert result == {"params": LINE_BREAKERS, "lines": 1}


# --------------------------------------------------------------------------- concurrency and logs


@pytest.mark.anyio
async def test_twenty_concurrent_calls_each_get_their_own_process_and_result(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("echo"))
    executor = StdioExecutor(environ=os.environ)
    calls = [invocation(app, {"text": f"call {i}", "n": i}) for i in range(20)]
    results: dict[int, Any] = {}

    async def run(i: int) -> None:
        results[i] = await executor.execute(calls[i])

    async with anyio.create_task_group() as tasks:
        for i in range(20):
            tasks.start_soon(run, i)

    assert [results[i]["params"] for i in range(20)] == [{"text": f"call {i}", "n": i} for i in range(20)]
    assert [results[i]["request_id"] for i in range(20)] == [c.request_id for c in calls]
    assert len({results[i]["pid"] for i in range(20)}) == 20


@pytest.mark.anyio
async def test_no_more_processes_run_at_once_than_the_concurrency_limit(tmp_path: Path) -> None:
    app = stdio_app(tmp_path, adapter("echo"))
    executor = StdioExecutor(environ=os.environ, max_concurrent=2)
    spans: list[tuple[float, float]] = []

    async def run() -> None:
        result = await executor.execute(invocation(app, {"sleep": 0.25}))
        spans.append((result["started"], result["ended"]))

    async with anyio.create_task_group() as tasks:
        for _ in range(5):
            tasks.start_soon(run)

    most_at_once = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert len(spans) == 5
    assert most_at_once <= 2


@pytest.mark.anyio
async def test_debug_log_names_command_pid_and_exit_but_never_parameters_or_env_values(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="aai_gateway.executors")  # stdio.py and process.py
    app = stdio_app(tmp_path, adapter("echo"), env={"API_TOKEN": "env-secret-4242"})

    result = await StdioExecutor(environ=os.environ).execute(invocation(app, {"text": "param-secret-9999"}))

    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"pid {result['pid']}" in logged
    assert "echo.py" in logged
    assert "exited with code 0" in logged
    assert "param-secret-9999" not in logged
    assert "env-secret-4242" not in logged
