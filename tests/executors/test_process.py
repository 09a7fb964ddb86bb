"""The one process runner: its own process group, stdin, bounded output, a timeout that stops the
whole group, and the child's real exit status."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from aai_gateway.executors.process import run_program, spawn_options, stop_process_tree
from tests.processes import process_gone

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and signals"),
]
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def all_gone(pids: list[int], within: float = 5.0) -> bool:
    """Killed processes can take a moment to disappear."""
    deadline = time.monotonic() + within
    while not all(process_gone(pid) for pid in pids) and time.monotonic() < deadline:  # noqa: ASYNC110
        await anyio.sleep(0.02)
    return all(process_gone(pid) for pid in pids)


async def test_stopping_a_child_that_just_exited_keeps_its_exit_status() -> None:
    # The race: the child is a zombie, asyncio's watcher has not collected it yet, and stopping
    # it must not reap it behind the watcher's back (which turns every status into 255).
    for _ in range(50):
        process = await anyio.open_process(["sh", "-c", "exit 3"], **spawn_options())
        assert process.stdout is not None
        async with process.stdout:
            async for _chunk in process.stdout:
                pass
        with anyio.CancelScope(shield=True):
            await stop_process_tree(process, grace=2)
        assert process.returncode == 3
        await process.aclose()


async def test_stopping_a_running_child_ends_its_whole_group() -> None:
    # The child starts a grandchild in its own group and tells its pid; signalling only the
    # child would leave the grandchild running.
    process = await anyio.open_process(["sh", "-c", "sleep 30 & echo $!; wait"], **spawn_options())
    assert process.stdout is not None
    grandchild = int((await process.stdout.receive()).decode().split()[0])
    try:
        with anyio.CancelScope(shield=True):
            await stop_process_tree(process, grace=2)
        assert process.returncode == -15
        assert await all_gone([grandchild])
    finally:
        if not process_gone(grandchild):
            os.kill(grandchild, 9)
        await process.aclose()


async def test_a_run_gets_its_stdin_and_keeps_its_output_and_exit_status() -> None:
    run = await run_program(
        ["sh", "-c", 'read line; echo "got $line"; echo oops >&2; exit 7'],
        env=ENV,
        stdin=b"hello\n",
        max_stdout=1024,
        grace=1,
    )
    assert (run.returncode, run.stdout, run.stderr) == (7, b"got hello\n", b"oops\n")
    assert not run.timed_out and not run.output_too_large


async def test_a_run_out_of_time_is_stopped_with_its_whole_group_and_keeps_its_stderr() -> None:
    run = await run_program(
        ["sh", "-c", "sleep 30 & echo $!; echo working >&2; wait"],
        env=ENV,
        timeout=0.5,
        max_stdout=1024,
        grace=1,
    )
    grandchild = int(run.stdout.split()[0])
    assert run.timed_out and run.returncode is None
    assert run.stderr == b"working\n"
    assert await all_gone([grandchild])


async def test_what_a_child_left_running_when_it_exited_is_stopped_and_its_status_kept() -> None:
    run = await run_program(
        ["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!; exit 4"], env=ENV, max_stdout=1024, grace=1
    )
    grandchild = int(run.stdout.split()[0])
    try:
        assert run.returncode == 4 and not run.timed_out
        assert await all_gone([grandchild])
    finally:
        if not process_gone(grandchild):
            os.kill(grandchild, 9)


async def test_a_run_that_writes_too_much_is_stopped() -> None:
    run = await run_program(["sh", "-c", "yes; exit 0"], env=ENV, max_stdout=100_000, grace=1)
    assert run.output_too_large and not run.timed_out
    assert run.returncode is None
    assert 100_000 < len(run.stdout) <= 100_000 + 65_536


async def test_a_cancelled_run_stops_its_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    with anyio.move_on_after(0.5):
        await run_program(
            ["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"], env=ENV, max_stdout=1024, grace=1
        )
    grandchild = int(await anyio.Path(pidfile).read_text())
    assert await all_gone([grandchild])
