"""One-time pages run in the server's task group: one that fails after it opened ends with no
answer, tells its call it failed (never as if nobody had answered), and the task group, the
server's, goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import ClassVar

import anyio
import anyio.lowlevel
import pytest

from aai_gateway.server.pages import MAX_OPEN_PAGES, PageFailedError, Pages, TooManyPagesError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FailingPage:
    kind: ClassVar[str] = "test page"
    subject = "dev.test.app"

    def __init__(self, *, fails_opening: bool = False) -> None:
        self.fails_opening = fails_opening

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        if self.fails_opening:
            raise ValueError("cannot open")
        yield "http://127.0.0.1:9/page"

    async def wait(self) -> str:
        await anyio.lowlevel.checkpoint()
        raise ValueError("a bug in the page")


async def test_a_page_that_fails_after_it_opened_tells_its_call_and_leaves_the_task_group_running() -> None:
    pages: Pages[str] = Pages("test")
    async with anyio.create_task_group() as tasks:
        page_id = await pages.open(tasks, FailingPage())
        with pytest.raises(PageFailedError, match=r"test page for dev\.test\.app failed"):
            await pages.result(page_id)
        survivor = anyio.Event()

        async def another_task() -> None:
            survivor.set()

        tasks.start_soon(another_task)
    assert survivor.is_set()


async def test_a_page_that_cannot_open_fails_the_call_that_asked_for_it() -> None:
    pages: Pages[str] = Pages("test")
    async with anyio.create_task_group() as tasks:
        with pytest.raises(ValueError, match="cannot open"):
            await pages.open(tasks, FailingPage(fails_opening=True))


class WaitingPage:
    kind: ClassVar[str] = "test page"
    subject = "dev.test.app"

    def __init__(self, answer: anyio.Event) -> None:
        self.answer = answer

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        yield "http://127.0.0.1:9/page"

    async def wait(self) -> str:
        await self.answer.wait()
        return "answered"


async def test_no_more_pages_wait_for_the_user_than_the_limit_and_an_answered_one_makes_room() -> None:
    pages: Pages[str] = Pages("test")
    answers = [anyio.Event() for _ in range(MAX_OPEN_PAGES)]
    async with anyio.create_task_group() as tasks:
        opened = [await pages.open(tasks, WaitingPage(answer)) for answer in answers]
        with pytest.raises(TooManyPagesError):
            await pages.open(tasks, WaitingPage(anyio.Event()))
        answers[0].set()
        assert await pages.result(opened[0]) == "answered"
        last = anyio.Event()
        assert await pages.open(tasks, WaitingPage(last))
        for answer in [*answers, last]:
            answer.set()
