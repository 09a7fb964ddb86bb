"""One-time local pages that outlive a tools/call: the credential page and the consent page.

A 2026-07-28 client retries a call (with our `request_state`) after the user used the page, so
pages run in the server's task group, under an id, until answered or timed out. Their links
reach the user only through URL elicitation, never a result or error the model reads.
"""

from __future__ import annotations

import logging
import secrets
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import ClassVar, Generic, Protocol, TypeVar

import anyio
from anyio.abc import TaskGroup, TaskStatus

logger = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
PAGE_TIMEOUT_SECONDS = 600.0
MAX_OPEN_PAGES = 16
"""Pages of one kind waiting for the user at once: each holds a listening socket for up to
`PAGE_TIMEOUT_SECONDS`, and an agent calling in a loop must not open them by the thousand."""


class TooManyPagesError(Exception):
    """`MAX_OPEN_PAGES` pages of this kind already wait for the user: the call asks no other way."""


class PageFailedError(Exception):
    """The page failed after it opened (a bug, not the user): it ended with no answer, and nobody
    may read that as the user's "no"."""


class ServedPage(Protocol[T_co]):
    """What is served under an id: a one-time local page (pages/local_page.py), or an OAuth
    sign-in whose link is the authorization server's (auth/sign_in_page.py)."""

    kind: ClassVar[str]
    subject: str

    def serve(self) -> AbstractAsyncContextManager[str]: ...

    async def wait(self) -> T_co: ...


@dataclass
class _Pending(Generic[T]):
    page: ServedPage[T]
    url: str
    done: anyio.Event
    opened_at: float
    value: T | None = None
    failed: bool = False


class Pages(Generic[T]):
    """Pages being served, by an id that travels between a call's rounds."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._pending: dict[str, _Pending[T]] = {}  # open pages, and finished ones not yet collected

    async def open(
        self,
        tasks: TaskGroup,
        page: ServedPage[T],
    ) -> str:
        """Serve `page` until answered or timed out; its id. TooManyPagesError when
        `MAX_OPEN_PAGES` wait for the user already."""
        self._forget_abandoned()
        if sum(not pending.done.is_set() for pending in self._pending.values()) >= MAX_OPEN_PAGES:
            raise TooManyPagesError(f"{MAX_OPEN_PAGES} {self.prefix} pages wait for the user already")
        page_id = f"{self.prefix}-{secrets.token_urlsafe(16)}"
        await tasks.start(self._serve, page_id, page)
        return page_id

    async def _serve(
        self,
        page_id: str,
        page: ServedPage[T],
        *,
        task_status: TaskStatus[None],
    ) -> None:
        done = anyio.Event()
        started = False
        try:
            async with page.serve() as url:
                pending = self._pending[page_id] = _Pending(page, url, done, anyio.current_time())
                task_status.started()
                started = True
                try:
                    pending.value = await page.wait()
                except (TimeoutError, RuntimeError):
                    logger.info("%s for %s closed unanswered", page.kind, page.subject)
        except Exception as exc:
            if not started:  # `open` raises it, in the call that asked for the page
                raise
            # Past `started`, this task is the server's: a page that fails ends with no answer
            # (its call learns it failed, from `result`), never the server
            pending.failed = True  # bound: `started` is set after it
            logger.warning(
                "%s for %s failed with an unexpected %s (traceback at DEBUG level)",
                page.kind,
                page.subject,
                type(exc).__name__,
            )
            logger.debug("%s for %s failed", page.kind, page.subject, exc_info=True)
        finally:
            done.set()  # the entry stays: the user often answers before the client's retry arrives

    def _forget_abandoned(self) -> None:
        """Finished pages whose outcome nobody collected (a client that never retried)."""
        cutoff = anyio.current_time() - 2 * PAGE_TIMEOUT_SECONDS
        for page_id, pending in list(self._pending.items()):
            if pending.done.is_set() and pending.opened_at < cutoff:
                del self._pending[page_id]

    def url(self, page_id: str) -> str | None:
        pending = self._pending.get(page_id)
        return pending.url if pending else None

    async def result(self, page_id: str) -> T | None:
        """What the user submitted on the page (waits while it is open); None if nothing (closed
        unanswered, timed out). PageFailedError when the page failed after it opened."""
        pending = self._pending.get(page_id)
        if pending is None:
            return None
        await pending.done.wait()
        self._pending.pop(page_id, None)
        if pending.failed:
            raise PageFailedError(f"the {pending.page.kind} for {pending.page.subject} failed")
        return pending.value
