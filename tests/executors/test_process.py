"""Child-process plumbing: stopping a process group keeps the child's real exit status."""

from __future__ import annotations

import anyio
import pytest

from aai_gateway.executors.process import spawn_options, stop_process_tree

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
    process = await anyio.open_process(["sh", "-c", "sleep 30 & sleep 30; wait"], **spawn_options())
    await anyio.sleep(0.1)
    with anyio.CancelScope(shield=True):
        await stop_process_tree(process, grace=2)
    assert process.returncode == -15
    await process.aclose()
