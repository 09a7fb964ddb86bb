"""The ACP executor against a real agent process (tests/executors/acp_agent.py), without MCP."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.acp import AcpExecutor
from aai_gateway.executors.base import PermissionKind, PermissionRequest
from tests.executors.acp_support import LINE_AGENT, acp_document, call, write_app
from tests.executors.dispatch import dispatched

pytestmark = pytest.mark.anyio

ECHO_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dev.aai.example.echoagent" / "aai.json"
ENVIRON = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "AAI_TEST_SECRET": "hunter2"}


@pytest.fixture
async def executor() -> AsyncIterator[AcpExecutor]:
    executor = AcpExecutor(environ=ENVIRON, kill_grace_seconds=0.5, cancel_seconds=2.0)
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "agent.log"


@pytest.fixture
def app(tmp_path: Path, log: Path) -> AppDescriptor:
    return write_app(tmp_path / "app", acp_document(log=log))


class Progress:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.first = anyio.Event()

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.seen.append((done, total, message))
        self.first.set()


async def prompt(executor: AcpExecutor, app: AppDescriptor, text: str, **options: Any) -> Any:
    arguments = {"prompt": text, "cwd": str(app.source.location).rsplit("/", 1)[0]}
    if "session" in options:
        arguments["sessionId"] = options.pop("session")
    return await executor.execute(call(app, "prompt", arguments, **options))


async def agent_pid(executor: AcpExecutor, app: AppDescriptor) -> int:
    pid: int = json.loads((await prompt(executor, app, "env"))["reply"])["pid"]
    return pid


async def wait_for_line(path: Path, line: str) -> None:
    log = anyio.Path(path)
    with anyio.fail_after(5):
        while not (await log.exists() and line in (await log.read_text(encoding="utf-8")).splitlines()):  # noqa: ASYNC110
            await anyio.sleep(0.02)


async def test_a_prompt_returns_the_reply_collected_from_the_streamed_chunks_and_forwards_each_update(
    executor: AcpExecutor, app: AppDescriptor
) -> None:
    progress = Progress()
    result = await prompt(executor, app, "hello there world", progress=progress)
    assert result["reply"] == "Echo: hello there world"
    assert result["stopReason"] == "end_turn"
    assert result["toolCalls"] == [
        {"id": "read-1", "title": "Reading notes", "kind": "read", "status": "completed"}
    ]
    messages = [message for _, _, message in progress.seen]
    assert messages[0] == "plan: 0/1 steps done; now: Read the notes"
    assert "tool call Reading notes (read): pending" in messages
    chunks = [m for m in messages if m and not m.startswith(("plan", "tool"))]
    assert chunks == ["Echo:", "hello", "there", "world"]
    assert [done for done, _, _ in progress.seen] == sorted({done for done, _, _ in progress.seen})


async def test_sessions_started_by_new_session_are_continued_by_prompt_in_one_shared_agent_process(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path
) -> None:
    first = await executor.execute(call(app, "new_session", {"cwd": str(tmp_path)}))
    second = await executor.execute(call(app, "new_session", {"cwd": str(tmp_path)}))
    assert first["sessionId"] != second["sessionId"]
    results: dict[str, Any] = {}

    async def run(session: str, text: str) -> None:
        results[session] = await prompt(executor, app, text, session=session)

    async with anyio.create_task_group() as tasks:  # concurrent turns in two sessions
        tasks.start_soon(run, first["sessionId"], "one")
        tasks.start_soon(run, second["sessionId"], "two")
    assert results[first["sessionId"]]["reply"] == "Echo: one"
    assert results[second["sessionId"]]["reply"] == "Echo: two"
    assert await agent_pid(executor, app) == await agent_pid(executor, app)


async def test_the_agent_runs_in_the_descriptor_folder_with_a_minimal_environment(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path
) -> None:
    seen = json.loads((await prompt(executor, app, "env"))["reply"])
    assert seen["cwd"] == str(tmp_path / "app")
    assert seen["env"]["ACP_TEST_MARKER"] == "from-descriptor"
    assert seen["env"]["HOME"] == "/tmp"
    assert "AAI_TEST_SECRET" not in seen["env"]
    assert "hunter2" not in json.dumps(seen)


async def test_an_agent_crash_mid_turn_fails_with_its_exit_status_and_stderr_and_the_next_call_restarts_it(
    executor: AcpExecutor, app: AppDescriptor
) -> None:
    before = await agent_pid(executor, app)
    with pytest.raises(AaiError) as failure:
        await prompt(executor, app, "crash")
    assert failure.value.code == ErrorCode.EXECUTION_FAILED
    assert app.id in failure.value.message and "exited with code 3" in failure.value.message
    assert failure.value.data["stderr_tail"] == "test agent: crashing on purpose"
    assert failure.value.data["exit_code"] == 3
    after = await agent_pid(executor, app)
    assert after != before


async def test_a_missing_agent_command_is_reported_with_the_command_and_how_to_fix_it(
    executor: AcpExecutor, tmp_path: Path
) -> None:
    missing = write_app(tmp_path / "missing", acp_document(command="no-such-acp-agent"))
    tool = missing.tool("prompt")
    assert tool is not None
    reason = executor.unavailable_reason(tool)
    assert reason is not None and "'no-such-acp-agent' was not found on PATH" in reason
    assert "execution.start.command" in reason
    relative = write_app(tmp_path / "relative", acp_document(command="./bin/agent"))
    with pytest.raises(AaiError) as failure:
        await prompt(executor, relative, "hello")
    assert failure.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "'./bin/agent'" in failure.value.message and "install the agent" in failure.value.message


async def test_a_descriptor_fetched_from_the_web_never_starts_an_agent(executor: AcpExecutor) -> None:
    result = load_text(
        json.dumps(acp_document()), Source(kind="web", location="https://evil.example"), "linux"
    )
    assert result.descriptor is not None
    arguments = {"prompt": "hello", "cwd": "/tmp"}
    with pytest.raises(AaiError) as failure:
        await dispatched(executor, call(result.descriptor, "prompt", arguments))
    assert failure.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "fetched from the web cannot start programs" in failure.value.message


async def test_an_unknown_tool_name_names_the_app_the_tool_and_the_supported_operations(
    executor: AcpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as failure:
        await executor.execute(call(app, "summarize", {}))
    assert failure.value.code == ErrorCode.NOT_IMPLEMENTED
    message = failure.value.message
    assert app.id in message and "'summarize'" in message
    assert all(name in message for name in ("new_session", "prompt", "cancel"))


async def test_silence_longer_than_the_timeout_cancels_the_turn_and_fails_with_timeout(
    executor: AcpExecutor, tmp_path: Path, log: Path
) -> None:
    app = write_app(tmp_path / "quick", acp_document(log=log, timeout_ms=500))
    session = (await executor.execute(call(app, "new_session", {"cwd": str(tmp_path)})))["sessionId"]
    with pytest.raises(AaiError) as failure:
        await prompt(executor, app, "silent", session=session)
    assert failure.value.code == ErrorCode.TIMEOUT
    assert "sent nothing for 0.5 s" in failure.value.message
    await wait_for_line(log, f"cancel {session}")


async def test_every_update_restarts_the_inactivity_timer(executor: AcpExecutor, tmp_path: Path) -> None:
    app = write_app(tmp_path / "quick", acp_document(timeout_ms=500))
    started = anyio.current_time()
    result = await prompt(executor, app, "tick 12")  # 1.2 s in all, an update every 0.1 s
    assert result["reply"] == "ticked"
    assert anyio.current_time() - started > 1.0


async def test_a_descriptor_without_timeout_gives_an_agent_ten_minutes_of_silence(app: AppDescriptor) -> None:
    assert call(app, "prompt", {}).timeout_seconds == 600


async def test_cancelling_the_call_sends_session_cancel_to_the_agent(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path, log: Path
) -> None:
    session = (await executor.execute(call(app, "new_session", {"cwd": str(tmp_path)})))["sessionId"]
    progress = Progress()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: prompt(executor, app, "slow", session=session, progress=progress))
        await progress.first.wait()
        tasks.cancel_scope.cancel()
    await wait_for_line(log, f"cancel {session}")
    assert (await prompt(executor, app, "again", session=session))["reply"] == "Echo: again"


async def test_the_cancel_tool_ends_the_running_turn_with_stop_reason_cancelled(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path
) -> None:
    session = (await executor.execute(call(app, "new_session", {"cwd": str(tmp_path)})))["sessionId"]
    progress = Progress()
    results: list[Any] = []

    async def slow() -> None:
        results.append(await prompt(executor, app, "slow", session=session, progress=progress))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(slow)
        await progress.first.wait()
        answer = await executor.execute(call(app, "cancel", {"sessionId": session}))
    assert answer == {"sessionId": session, "cancelled": True, "turnWasRunning": True}
    assert results[0]["stopReason"] == "cancelled"
    assert results[0]["reply"] == "working slowly…"


class Asker:
    def __init__(self, answer: PermissionKind | None) -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionKind | None:
        self.asked.append(request)
        return self.answer


@pytest.mark.parametrize(
    ("answer", "option", "written"), [("allow_once", "yes", True), ("reject_once", "no", False)]
)
async def test_a_permission_request_is_answered_with_the_users_decision(  # noqa: PLR0917
    executor: AcpExecutor,
    app: AppDescriptor,
    tmp_path: Path,
    answer: PermissionKind,
    option: str,
    written: bool,
) -> None:
    asker = Asker(answer)
    result = await prompt(executor, app, "write note.txt", ask_permission=asker)
    [request] = asker.asked
    assert request.title == "Write file note.txt" and request.kind == "edit"
    assert request.arguments == {"path": "note.txt", "content": "hello"}
    assert [o.kind for o in request.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert result["reply"] == f"permission: {option}"
    assert (tmp_path / "app" / "note.txt").exists() is written
    [permission] = result["permissions"]
    assert permission["decidedBy"] == "user" and permission["optionId"] == option
    assert "notes" not in result


@pytest.mark.parametrize("asker", [None, Asker(None)], ids=["no asker", "nobody could ask"])
async def test_a_permission_nobody_can_be_asked_is_refused_and_the_result_says_why(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path, asker: Asker | None
) -> None:
    result = await prompt(executor, app, "write note.txt", ask_permission=asker)
    assert result["reply"] == "permission: no"
    assert not (tmp_path / "app" / "note.txt").exists()
    [permission] = result["permissions"]
    assert permission["outcome"] == "reject_once" and permission["decidedBy"] == "gateway"
    [note] = result["notes"]
    assert "nobody could be asked" in note and "elicitation" in note


async def test_a_permission_question_whose_asking_fails_is_refused_and_the_turn_goes_on(
    executor: AcpExecutor, app: AppDescriptor, tmp_path: Path
) -> None:
    async def broken(request: PermissionRequest) -> PermissionKind | None:
        raise RuntimeError("the client went away")

    result = await prompt(executor, app, "write note.txt", ask_permission=broken)
    assert result["reply"] == "permission: no"  # never approved on a failure
    assert not (tmp_path / "app" / "note.txt").exists()
    [permission] = result["permissions"]
    assert (permission["decidedBy"], permission["reason"]) == ("gateway", "asking the user failed")


async def test_concurrent_first_calls_start_one_agent_process(app: AppDescriptor) -> None:
    executor = AcpExecutor(environ=ENVIRON, kill_grace_seconds=0.5)
    pids: list[int] = []

    async def one() -> None:
        pids.append(await agent_pid(executor, app))

    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(6):
                tasks.start_soon(one)
    finally:
        await executor.aclose()
    assert len(pids) == 6 and len(set(pids)) == 1


async def test_aclose_stops_every_agent(app: AppDescriptor) -> None:
    executor = AcpExecutor(environ=ENVIRON, kill_grace_seconds=0.5)
    pid = await agent_pid(executor, app)
    await executor.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_the_echo_agent_example_answers_streams_and_asks_before_writing(
    executor: AcpExecutor, tmp_path: Path
) -> None:
    path = ECHO_EXAMPLE
    loaded = load_text(path.read_bytes(), Source(kind="file", location=str(path)), "linux")
    assert loaded.descriptor is not None
    example = loaded.descriptor
    progress = Progress()
    echoed = await executor.execute(
        call(example, "prompt", {"prompt": "hi there", "cwd": str(tmp_path)}, progress=progress)
    )
    assert echoed["reply"] == "Echo: hi there"
    assert len(progress.seen) >= 4
    asker = Asker("allow_always")
    written = await executor.execute(
        call(
            example, "prompt", {"prompt": "write a.txt some text", "cwd": str(tmp_path)}, ask_permission=asker
        )
    )
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "some text"
    assert written["permissions"][0]["optionId"] == "allow-always"


async def test_a_program_that_exits_instead_of_speaking_acp_is_unavailable_with_its_stderr(
    executor: AcpExecutor, tmp_path: Path
) -> None:
    script = tmp_path / "bad" / "not-an-agent"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho 'usage: not-an-agent --serve' >&2\nexit 2\n", encoding="utf-8")
    script.chmod(0o755)
    bad = write_app(tmp_path / "bad", acp_document(command="./not-an-agent"))
    with pytest.raises(AaiError) as failure:
        await prompt(executor, bad, "hello")
    assert failure.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "`initialize` failed" in failure.value.message
    assert failure.value.data["stderr_tail"] == "usage: not-an-agent --serve"
    assert failure.value.data["exit_code"] == 2


async def test_line_breaks_in_a_prompt_reach_the_agent_escaped_so_its_message_stays_one_line(
    executor: AcpExecutor, tmp_path: Path
) -> None:
    """U+0085, U+2028 and U+2029 are line breaks to str.splitlines() and many line readers."""
    app = write_app(tmp_path / "app", acp_document(agent=LINE_AGENT))
    text = "a\u2028b\u2029c\u0085d"

    result = await prompt(executor, app, text)

    assert result["reply"] == text
