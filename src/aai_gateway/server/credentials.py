"""Collecting a missing secret through the user's browser, never through the chat.

When an operation fails with AUTH_REQUIRED for an app whose credential the user types in (API
key, App ID + Secret, cookies) and the client supports URL-mode elicitation, the gateway serves
a one-time page on 127.0.0.1 and sends the client its URL; once the user saves the secret there
(it goes straight to the OS keyring), the operation runs again. An app that signs in with OAuth
(a web app's `oauth2`, an MCP server that requires the MCP authorization flow) gets its sign-in
instead, on AUTH_REQUIRED or AUTH_EXPIRED: the link is the authorization server's, the tokens
come back to the gateway's loopback callback (auth/sign_in_page.py). Pages and sign-ins outlive
one tools/call so a 2026-07-28 client can retry with our `request_state`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from anyio.abc import TaskGroup

from ..auth.credential_page import CredentialPage
from ..auth.credentials import Credential, CredentialStore
from ..auth.provider import AuthProvider
from ..auth.sign_in_page import browser_sign_in
from ..descriptor import AppDescriptor
from ..descriptor.model import HttpChannel
from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, CookieAuth
from ..errors import AaiError
from .ask import Ask
from .pages import PAGE_TIMEOUT_SECONDS, PageFailedError, Pages, ServedPage, TooManyPagesError

TypedAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth
_Kept = TypeVar("_Kept")  # what a page keeps: a credential, or none


def typed_secret_auth(app: AppDescriptor, tool_name: str) -> TypedAuth | None:
    """The auth settings of a tool whose secret the user can type into a page, else None."""
    tool = app.tool(tool_name)
    if tool is None or not isinstance(tool.channel, HttpChannel):
        return None
    auth = tool.channel.auth
    return auth if isinstance(auth, ApiKeyAuth | AppCredentialAuth | CookieAuth) else None


async def collect(
    ask: Ask,
    pages: Pages[Credential],
    store: CredentialStore,
    tasks: TaskGroup,
    *,
    app: AppDescriptor,
    auth: TypedAuth,
    error: AaiError,
    locale: str | None,
) -> None:
    """Returns once the user saved the credential; re-raises `error` if they did not."""
    key = f"{app.binding}/{app.id}"  # a page, and an answer, for exactly this app's credential
    page_id: str | None = ask.memory.values.get(f"credential_page:{key}")
    if page_id is None or pages.url(page_id) is None:
        page = CredentialPage(app, auth, store, locale=locale, timeout_seconds=PAGE_TIMEOUT_SECONDS)
        page_id = await _opened(pages, tasks, page, error)
        ask.memory.values[f"credential_page:{key}"] = page_id
    message = (
        f"{app.names.lookup(locale)} needs your {auth.type} to run this. Open the page to enter it; it is "
        "stored in your OS keyring and never shown to the assistant."
    )
    await _send_to_page(ask, pages, page_id, question=f"credentials:{key}", message=message, error=error)


async def sign_in(
    ask: Ask,
    pages: Pages[Credential | None],
    provider: AuthProvider,
    tasks: TaskGroup,
    *,
    app: AppDescriptor,
    tool: str,
    error: AaiError,
    locale: str | None,
) -> None:
    """Returns once the user signed in; re-raises `error` if they did not, or if what is missing
    is not an OAuth sign-in (a named secret of an MCP server, say: nothing is probed for it)."""
    if error.data.get("auth_type") != "oauth2":
        raise error
    key = f"{app.binding}/{app.id}"
    page_id: str | None = ask.memory.values.get(f"sign_in:{key}")
    if page_id is None or pages.url(page_id) is None:
        try:
            signing_in = await browser_sign_in(app, tool, provider)
        except AaiError:
            raise error from None  # discovery failed: `auth login` says why, in a terminal
        if signing_in is None:
            raise error
        page_id = await _opened(pages, tasks, signing_in, error)
        ask.memory.values[f"sign_in:{key}"] = page_id
    message = (
        f"{app.names.lookup(locale)} needs you to sign in to run this. Open the link to sign in in your "
        "browser; the gateway keeps the tokens in your OS keyring and never shows them to the assistant."
    )
    await _send_to_page(ask, pages, page_id, question=f"sign-in:{key}", message=message, error=error)


async def _opened(pages: Pages[_Kept], tasks: TaskGroup, page: ServedPage[_Kept], error: AaiError) -> str:
    """`page` opened (its id); the call's own `error` when too many pages wait for the user."""
    try:
        return await pages.open(tasks, page)
    except TooManyPagesError:
        raise error from None


async def _send_to_page(
    ask: Ask, pages: Pages[Any], page_id: str, *, question: str, message: str, error: AaiError
) -> None:
    """Ask the user (URL elicitation) to open the page; returns once the page has its result,
    re-raises `error` when the page is gone, the user declines, or the page ends without one
    (a page that failed included: the credential is still missing)."""
    url = pages.url(page_id)
    if url is None:
        raise error
    answer = await ask.url(question, message, url, page_id)
    if answer.action != "accept":
        raise error
    try:
        result = await pages.result(page_id)
    except PageFailedError:
        raise error from None
    if result is None:
        raise error
    if not ask.modern:
        await ask.ctx.session.send_elicit_complete(page_id)
