"""The credential on the requests to a Streamable HTTP MCP server: `McpOAuth`, the `httpx2.Auth`
of the httpx2 client the SDK's transport runs on (`AuthProvider.mcp_http_auth`).

Signed in (`aai-gateway auth login <app>`), every request carries `Authorization: Bearer <token>`;
the tokens are refreshed within the margin of their expiry and once after a 401, with the
server's RFC 8707 `resource`, and kept in the OS keyring (token_flows.OAuth2Flow does the token
work: one refresh shared by concurrent requests, the token checked before it is put in a header).
Not signed in, requests go without a token: a server that needs none works as before.

A refusal the gateway cannot fix itself (401 with nothing to refresh, a failed refresh, a 403
`insufficient_scope`) does not raise inside the transport, where the SDK would only log it and
end the session: the server's answer goes on (the call fails with the SDK's error) and the AAI
error that says what to do is kept in `failure`, for the executor to raise instead. A later
successful request clears it.
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import Final

import httpx2

from ..descriptor.http_headers import header_value_problem
from ..errors import AaiError
from .auth_context import AuthContext
from .token_flows import OAuth2Flow

Lookup = Callable[[], Awaitable[OAuth2Flow | None]]

logger = logging.getLogger(__name__)

MAX_SCOPE_CHARS: Final = 500
_SCOPE_TOKENS: Final = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*")


class McpOAuth(httpx2.Auth):
    """Bearer tokens for one MCP server, or none (see the module docstring)."""

    requires_request_body = True  # a request refused with 401 is sent again after the refresh

    def __init__(self, lookup: Lookup, context: AuthContext) -> None:
        """`lookup` gives the tokens of the app's stored sign-in, or None; it is asked before every
        request, so a sign-in made meanwhile (`auth login` in another process) is used at once."""
        self._lookup = lookup
        self.tokens: OAuth2Flow | None = None
        self.context = context
        self.failure: AaiError | None = None

    def __repr__(self) -> str:
        return f"McpOAuth(app={self.context.app_id!r})"

    def secret_values(self) -> list[str]:
        """The tokens in use and those replaced lately, and the client secret: what an MCP server
        that echoes them must not show the agent."""
        return self.tokens.secret_values() if self.tokens is not None else []

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        raise RuntimeError("McpOAuth works with httpx2.AsyncClient only")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow: OAuth2Flow | None = None
        token: str | None = None
        problem: AaiError | None = None
        try:
            flow = self.tokens = await self._lookup()
        except AaiError as exc:  # the keyring cannot be read: the server's answer says the rest
            problem = exc
        else:
            token, problem = await self._token(flow, refused=None)
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        retried = False
        if (
            response.status_code == 401
            and token is not None
            and _can_refresh(flow)
            and not _step_up(response)
        ):
            token, problem = await self._token(flow, refused=token)
            if token is not None:
                request.headers["Authorization"] = f"Bearer {token}"
                response = yield request
                retried = True
        self._judge(response, flow, problem, retried=retried)

    async def _token(
        self, flow: OAuth2Flow | None, *, refused: str | None
    ) -> tuple[str | None, AaiError | None]:
        """The access token to send (refreshed first when due, or when the server refused
        `refused`), or why there is none to send; (None, None) when not signed in."""
        if flow is None:
            return None, None
        try:
            if refused is None:
                tokens = await flow.usable_tokens()
            else:
                tokens = await flow.refreshed(refused=refused)
        except AaiError as exc:  # the refresh failed, or there is nothing to refresh with
            return None, exc
        problem = header_value_problem(tokens.access_token)
        if problem:
            reason = f"the stored token cannot be sent: it {problem}; sign in again"
            return None, self.context.error(reason, expired=True)
        return tokens.access_token, None

    def _judge(
        self, response: httpx2.Response, flow: OAuth2Flow | None, problem: AaiError | None, *, retried: bool
    ) -> None:
        """Keep in `failure` what the user must do about the server's answer, or clear it."""
        status = response.status_code
        if status in (401, 403) and _step_up(response):
            self.failure = self._more_scope(flow, response)
        elif status == 401:
            logger.info("the MCP server of %s refused the request (HTTP 401)", self.context.app_id)
            if problem is not None:
                self.failure = problem
            elif flow is None:
                self.failure = self.context.error(
                    "the MCP server asks for a sign-in (HTTP 401) and you have not signed in yet"
                )
            elif retried:
                self.failure = self.context.error(
                    "the MCP server refused the access token even after it was refreshed (HTTP 401)",
                    expired=True,
                )
            else:
                self.failure = self.context.error(
                    "the MCP server refused the stored access token (HTTP 401) and there is no refresh token",
                    expired=True,
                )
        elif response.is_success:
            self.failure = None

    def _more_scope(self, flow: OAuth2Flow | None, response: httpx2.Response) -> AaiError:
        """AUTH_REQUIRED for a step-up: the command asks for the scopes granted so far and those
        the server names (SEP-2350), when they are scope tokens (RFC 6749 §3.3) a command can hold."""
        from mcp.client.auth.utils import extract_scope_from_www_auth, union_scopes  # noqa: PLC0415  (_step_up)

        stored = flow.credential if flow is not None else None
        granted = stored.tokens.scope if stored is not None and stored.tokens is not None else None
        if granted is None and stored is not None and stored.authorization_server is not None:
            granted = stored.authorization_server.scope
        wanted = union_scopes(granted, extract_scope_from_www_auth(response))
        reason = "the MCP server needs permissions the sign-in did not grant (HTTP 403 insufficient_scope)"
        if not wanted or not _SCOPE_TOKENS.fullmatch(wanted) or len(wanted) > MAX_SCOPE_CHARS:
            return self.context.error(f"{reason}; sign in again to grant them")
        return self.context.error(
            f"{reason}: it asks for {wanted}; sign in again to grant them",
            command=f"{self.context.command} --scope {shlex.quote(wanted)}",
            scope=wanted,
        )


def _can_refresh(flow: OAuth2Flow | None) -> bool:
    stored = flow.credential.tokens if flow is not None else None
    return stored is not None and bool(stored.refresh_token)


def _step_up(response: httpx2.Response) -> bool:
    """The server wants a token with more scope (RFC 6750 §3.1; 403, or 401 from some servers):
    a refresh cannot give it, a new sign-in can."""
    # The SDK's challenge parsers are imported here, when a server refuses: importing
    # `mcp.client.auth.utils` imports the whole `mcp` package (~0.8 s), which the commands that
    # only read descriptors and the keyring (`scan`, `consent`, `auth status`) never need.
    from mcp.client.auth.utils import extract_field_from_www_auth  # noqa: PLC0415

    return extract_field_from_www_auth(response, "error") == "insufficient_scope"
