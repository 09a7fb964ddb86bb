"""What gateways keep of their MCP servers for `scan`: running only while the gateway that runs
them lives, the newest error of any gateway, and nothing a bad file or a full disk can break."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.discovery.mcp_server_states import (
    KEEP_ENDED,
    MAX_FILE_BYTES,
    ServerStateRecorder,
    error_of,
    read_states,
    remove_ended,
)
from tests.executors.mcp_support import mcp_document, write_app


@pytest.fixture
def app(tmp_path: Path) -> AppDescriptor:
    return write_app(tmp_path / "apps", mcp_document(app_id="dev.test.states"))


def key(app: AppDescriptor) -> tuple[str, str]:
    return (str(app.binding), app.id)


def test_a_server_reads_as_running_while_its_gateway_lives_and_as_stopped_once_it_closes(
    tmp_path: Path, app: AppDescriptor
) -> None:
    recorder = ServerStateRecorder(tmp_path / "states", gateway_pid=os.getpid())
    recorder.started(app, "stdio", pid=4242, protocol="2025-11-25")
    state = read_states(tmp_path / "states")[key(app)]
    assert (state.running, state.latest.pid, state.latest.protocol) == (1, 4242, "2025-11-25")
    recorder.close()
    assert read_states(tmp_path / "states")[key(app)].running == 0


def test_a_killed_gateway_never_shows_its_servers_as_running(tmp_path: Path, app: AppDescriptor) -> None:
    """Its file still says running: only the lock it held tells that it is gone."""
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from aai_gateway.descriptor import Source, load_text
        from aai_gateway.discovery.mcp_server_states import ServerStateRecorder
        path = {str(app.source.location)!r}
        app = load_text(open(path).read(), Source(kind="file", location=path), "linux").descriptor
        recorder = ServerStateRecorder({str(tmp_path / "states")!r}, gateway_pid=os.getpid())
        recorder.started(app, "stdio", 7, None)
        print("recorded", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "recorded"
        assert read_states(tmp_path / "states")[key(app)].running == 1
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    [state_file] = (tmp_path / "states").glob("*.json")
    assert json.loads(state_file.read_text())["servers"][0]["running"] is True
    assert read_states(tmp_path / "states")[key(app)].running == 0


def test_the_newest_error_of_any_gateway_is_the_last_error(tmp_path: Path, app: AppDescriptor) -> None:
    first = ServerStateRecorder(tmp_path / "states", gateway_pid=1)
    second = ServerStateRecorder(tmp_path / "states", gateway_pid=2)
    first.failed(app, "stdio", error_of("TIMEOUT", "newer", at=2_000.0))
    second.failed(app, "stdio", error_of("SERVICE_UNAVAILABLE", "older", at=1_000.0))
    second.started(app, "stdio", pid=9, protocol=None)
    state = read_states(tmp_path / "states")[key(app)]
    assert state.last_error is not None and (state.last_error.code, state.last_error.message) == (
        "TIMEOUT",
        "newer",
    )
    assert (state.running, state.latest.pid) == (1, 9)
    first.close()
    second.close()


def test_a_stopped_server_keeps_the_error_it_ended_with_after_it_starts_again(
    tmp_path: Path, app: AppDescriptor
) -> None:
    recorder = ServerStateRecorder(tmp_path / "states", gateway_pid=1)
    recorder.stopped(app, "stdio", error_of("SERVICE_UNAVAILABLE", "the server exited with code 3"))
    recorder.started(app, "stdio", pid=10, protocol=None)
    state = read_states(tmp_path / "states")[key(app)]
    assert state.running == 1
    assert state.last_error is not None and state.last_error.message == "the server exited with code 3"
    recorder.close()


def test_an_error_is_kept_on_one_line_without_what_a_terminal_would_act_on(
    tmp_path: Path, app: AppDescriptor
) -> None:
    recorder = ServerStateRecorder(tmp_path / "states", gateway_pid=1)
    recorder.failed(
        app,
        "stdio",
        error_of("SERVICE_UNAVAILABLE", "stderr:\x1b]0;owned\x07 boom\n\x1b[2Jnext" + "x" * 5000),
    )
    state = read_states(tmp_path / "states")[key(app)]
    assert state.last_error is not None
    message = state.last_error.message
    assert "\x1b" not in message and "\x07" not in message and "\n" not in message
    assert message.startswith("stderr: boom next") and len(message) <= 1_000  # sequences removed whole
    recorder.close()


def test_files_that_are_not_a_gateways_are_skipped_with_a_warning(
    tmp_path: Path, app: AppDescriptor, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "states"
    recorder = ServerStateRecorder(root, gateway_pid=1)
    recorder.started(app, "http", pid=None, protocol=None)
    (root / "garbage.json").write_text("{not json")
    (root / "wrong.json").write_text(json.dumps({"format": 1, "gateway_pid": 1, "servers": [{"app_id": 5}]}))
    (root / "huge.json").write_bytes(b" " * (MAX_FILE_BYTES + 1))
    (root / "link.json").symlink_to(next(root.glob(f"{recorder.name}.json")))
    os.mkfifo(root / "fifo.json")
    with caplog.at_level(logging.WARNING):
        states = read_states(root)
    assert list(states) == [key(app)] and states[key(app)].running == 1
    skipped = "\n".join(r.getMessage() for r in caplog.records)
    for name in ("garbage", "wrong", "huge", "link", "fifo"):
        assert f"{name}.json" in skipped
    recorder.close()


def test_a_state_folder_that_cannot_be_written_is_logged_and_never_raised(
    tmp_path: Path, app: AppDescriptor, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    recorder = ServerStateRecorder(blocked / "states", gateway_pid=1)
    with caplog.at_level(logging.WARNING):
        recorder.started(app, "stdio", pid=1, protocol=None)
        recorder.close()
    assert "cannot keep the state of MCP servers" in caplog.text
    assert read_states(blocked / "states") == {}


def test_a_new_gateway_removes_the_files_of_ended_ones_but_the_newest(
    tmp_path: Path, app: AppDescriptor
) -> None:
    root = tmp_path / "states"
    for number in range(KEEP_ENDED + 3):
        ended = ServerStateRecorder(root, gateway_pid=number)
        ended.failed(app, "stdio", error_of("TIMEOUT", f"error {number}", at=float(number)))
        ended.close()
        os.utime(next(root.glob(f"{ended.name}.json")), (number, number))
    # each new one removed all but the newest ended ones before it wrote its own
    assert len(list(root.glob("*.json"))) == KEEP_ENDED + 1
    assert not (set(range(2)) & {int(p.stat().st_mtime) for p in root.glob("*.json")})
    alive = ServerStateRecorder(root, gateway_pid=99)
    alive.started(app, "stdio", pid=3, protocol=None)
    assert remove_ended(root, keep=0) == KEEP_ENDED
    assert [p.stem for p in root.glob("*.json")] == [alive.name]
    alive.close()
