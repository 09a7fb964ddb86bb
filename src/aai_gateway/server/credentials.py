"""Collecting a missing secret through the user's browser, never through the chat.

When an operation fails with AUTH_REQUIRED for an app whose credential the user types in (API
key, App ID + Secret, cookies) and the client supports URL-mode elicitation, the gateway serves
a one-time page on 127.0.0.1 and sends the client its URL; once the user saves the secret there
(it goes straight to the OS keyring), the operation runs again. Pages outlive one tools/call so
a 2026-07-28 client can retry with our `request_state`.
"""

from __future__ import annotations

from anyio.abc import TaskGroup

from ..auth.credential_page import CredentialPage
from ..auth.credentials import Credential, CredentialStore
from ..descriptor import AppDescriptor
from ..descriptor.model import ApiKeyAuth, AppCredentialAuth, CookieAuth, HttpChannel
from ..errors import AaiError
from .ask import Ask
from .pages import PAGE_TIMEOUT_SECONDS, Pages

TypedAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth


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
        page_id = await pages.open(tasks, page)
        ask.memory.values[f"credential_page:{key}"] = page_id
    url = pages.url(page_id)
    if url is None:
        raise error
    name = app.names.lookup(locale)
    message = (
        f"{name} needs your {auth.type} to run this. Open the page to enter it; it is stored in your "
        "OS keyring and never shown to the assistant."
    )
    answer = await ask.url(f"credentials:{key}", message, url, page_id)
    if answer.action != "accept":
        raise error
    if await pages.result(page_id) is None:
        raise error
    if not ask.modern:
        await ask.ctx.session.send_elicit_complete(page_id)
