"""Collecting a missing secret through the user's browser, never through the chat.

When an operation fails with AUTH_REQUIRED for an app whose credential the user types in (API
key, App ID + Secret, cookies) and the client supports URL-mode elicitation, the gateway serves
a one-time page on 127.0.0.1 and sends the client its URL; once the user saves the secret there
(it goes straight to the OS keyring), the operation runs again. Pages outlive one tools/call so
a 2026-07-28 client can retry with our `request_state`.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup, TaskStatus

from ..auth.credential_page import CredentialPage
from ..auth.credentials import CredentialStore
from ..descriptor import AppDescriptor
from ..descriptor.model import ApiKeyAuth, AppCredentialAuth, CookieAuth, HttpChannel
from ..errors import AuthRequiredError
from .ask import Ask

logger = logging.getLogger(__name__)

PAGE_TIMEOUT_SECONDS = 600.0
TypedAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth


def typed_secret_auth(app: AppDescriptor, tool_name: str) -> TypedAuth | None:
    """The auth settings of a tool whose secret the user can type into a page, else None."""
    tool = app.tool(tool_name)
    if tool is None or not isinstance(tool.channel, HttpChannel):
        return None
    auth = tool.channel.auth
    return auth if isinstance(auth, ApiKeyAuth | AppCredentialAuth | CookieAuth) else None


@dataclass
class _Pending:
    page: CredentialPage
    url: str
    done: anyio.Event
    opened_at: float
    saved: bool = False


class CredentialPages:
    """Pages being served, by an id that travels as `request_state` between retries."""

    def __init__(self, store: CredentialStore, timeout_seconds: float = PAGE_TIMEOUT_SECONDS) -> None:
        self.store = store
        self.timeout_seconds = timeout_seconds
        self._pending: dict[str, _Pending] = {}  # open pages, and finished ones not yet collected

    async def open(self, tasks: TaskGroup, app: AppDescriptor, auth: TypedAuth, locale: str | None) -> str:
        self._forget_abandoned()
        page_id = "credentials-" + secrets.token_urlsafe(16)
        page = CredentialPage(app, auth, self.store, locale=locale, timeout_seconds=self.timeout_seconds)
        await tasks.start(self._serve, page_id, page)
        return page_id

    async def _serve(self, page_id: str, page: CredentialPage, *, task_status: TaskStatus[None]) -> None:
        done = anyio.Event()
        try:
            async with page.serve() as url:
                pending = self._pending[page_id] = _Pending(page, url, done, anyio.current_time())
                task_status.started()
                try:
                    await page.wait()
                    pending.saved = True
                except (TimeoutError, RuntimeError):
                    logger.info("credential page for %s closed without a saved credential", page.app.id)
        finally:
            done.set()  # the entry stays: the user often saves before the client's answer arrives

    def _forget_abandoned(self) -> None:
        """Finished pages whose outcome nobody collected (a client that never retried)."""
        cutoff = anyio.current_time() - 2 * self.timeout_seconds
        for page_id, pending in list(self._pending.items()):
            if pending.done.is_set() and pending.opened_at < cutoff:
                del self._pending[page_id]

    def url(self, page_id: str) -> str | None:
        pending = self._pending.get(page_id)
        return pending.url if pending else None

    async def wait_saved(self, page_id: str) -> bool:
        """Whether the user saved the credential on the page (waits while it is open)."""
        pending = self._pending.get(page_id)
        if pending is None:
            return False
        await pending.done.wait()
        self._pending.pop(page_id, None)
        return pending.saved


async def collect(
    ask: Ask,
    pages: CredentialPages,
    tasks: TaskGroup,
    *,
    app: AppDescriptor,
    auth: TypedAuth,
    error: AuthRequiredError,
    locale: str | None,
) -> None:
    """Returns once the user saved the credential; re-raises `error` if they did not."""
    page_id: str | None = ask.memory.values.get("credential_page")
    if page_id is None or pages.url(page_id) is None:
        page_id = await pages.open(tasks, app, auth, locale)
        ask.memory.values["credential_page"] = page_id
    url = pages.url(page_id)
    if url is None:
        raise error
    name = app.names.lookup(locale)
    message = (
        f"{name} needs your {auth.type} to run this. Open the page to enter it; it is stored in your "
        "OS keyring and never shown to the assistant."
    )
    answer = await ask.url("credentials", message, url, page_id)
    if answer.action != "accept":
        raise error
    if not await pages.wait_saved(page_id):
        raise error
    if not ask.modern:
        await ask.ctx.session.send_elicit_complete(page_id)
