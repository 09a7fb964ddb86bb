"""An authorization-protected Streamable HTTP MCP server and its own authorization server, for the
MCP sign-in tests: the MCP SDK's server pieces, each on its own port of 127.0.0.1 under uvicorn.

- `McpAuthorizationServer`: the SDK's authorization-server routes (`create_auth_routes`: RFC 8414
  metadata, RFC 7591 registration, `/authorize` with PKCE S256 required, `/token` with the verifier
  checked, refresh with rotation) over an in-memory provider, plus a consent page with Allow and
  Deny buttons a browser must press. Every authorization and token request must carry the MCP
  server's RFC 8707 `resource` (else `invalid_target`). It records what it received and can serve
  hostile metadata (`metadata_override`).
- `ProtectedMcpServer`: a low-level SDK server with one tool, `whoami`, behind the SDK's bearer
  middleware (protected-resource metadata, 401 with `resource_metadata`, tokens checked against
  the authorization server's store and bound to this resource). `step_up` makes it refuse tokens
  without that scope (`insufficient_scope`); `resource_metadata_override` serves other metadata.
"""

from __future__ import annotations

import html
import json
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import mcp_types as types
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    ProviderTokenVerifier,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SCOPE = "mcp:tools"
SCOPES = ["mcp:tools", "mcp:admin"]
USER = "alice"


class ServedApp:
    """An ASGI app on 127.0.0.1:<free port>, served by uvicorn in a thread. `build` gets the
    URL (scheme and authority) before the app exists, so the app can name itself."""

    def __init__(self, build: Callable[[str], ASGIApp]) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(build(self.url), log_level="warning", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


class LoopbackClient(OAuthClientInformationFull):
    """A pre-registered client whose loopback redirect URI matches any port (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and redirect_uri.host == "127.0.0.1" and redirect_uri.path == "/callback":
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class McpAuthorizationServer:
    """The provider (`OAuthAuthorizationServerProvider`) and its served app; see the module docs."""

    def __init__(self) -> None:
        self.resource = ""  # the MCP server's resource indicator: set before any sign-in
        self.lifetime = 3600
        self.metadata_override: bytes | None = None
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[OAuthClientInformationFull, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants: Counter[str] = Counter()
        self.authorize_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        self.registrations: list[dict[str, Any]] = []
        self.metadata_requests = 0
        self._served = ServedApp(self._app)
        self.url = self._served.url

    def start(self) -> McpAuthorizationServer:
        self._served.start()
        return self

    def close(self) -> None:
        self._served.close()

    def pre_register(self, client_id: str, secret: str) -> None:
        self.clients[client_id] = LoopbackClient(
            client_id=client_id,
            client_secret=secret,
            token_endpoint_auth_method="client_secret_post",
            redirect_uris=[AnyUrl("http://127.0.0.1/callback")],
            scope=" ".join(SCOPES),
        )

    def revoke_access_tokens(self) -> None:
        self.access.clear()

    # ----------------------------------------------------------------------- the provider

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        self.registrations.append(client_info.model_dump(mode="json", exclude_none=True))

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource != self.resource:
            raise AuthorizeError("invalid_target", f"resource must be {self.resource}")
        request_id = secrets.token_urlsafe(16)
        self.pending[request_id] = (client, params)
        return f"{self.url}/consent?request={request_id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)  # rotated
        return self._issue(client.client_id, scopes, "refresh_token")

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "not offered")

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], grant: str) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(40)
        expires_at = int(time.time() + self.lifetime)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires_at,
            resource=self.resource,
            subject=USER,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=self.resource
        )
        self.grants[grant] += 1
        return OAuthToken(
            access_token=access, expires_in=self.lifetime, scope=" ".join(scopes), refresh_token=refresh
        )

    # ----------------------------------------------------------------------- the served app

    def _app(self, url: str) -> ASGIApp:
        self.url = url
        routes = create_auth_routes(
            self,
            AnyHttpUrl(url),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=SCOPES, default_scopes=[SCOPE]
            ),
        )
        consent = Route("/consent", self._consent, methods=["GET", "POST"])
        return _Recorder(Starlette(routes=[consent, *routes]), self)

    async def _consent(self, request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        if request_id not in self.pending:
            return HTMLResponse("<h1>Unknown request</h1>", status_code=400)
        if request.method == "GET":
            client, params = self.pending[request_id]
            return HTMLResponse(
                "<!doctype html><html><head><title>Authorize</title></head><body>"
                f"<p><b id='client'>{html.escape(client.client_name or client.client_id)}</b> asks for "
                f"<span id='scope'>{html.escape(' '.join(params.scopes or []))}</span>.</p>"
                "<form method='post'><button name='decision' value='allow' id='allow'>Allow</button> "
                "<button name='decision' value='deny' id='deny'>Deny</button></form></body></html>"
            )
        decision = (await request.form()).get("decision")
        client, params = self.pending.pop(request_id)
        if decision != "allow":
            location = construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state
            )
            return RedirectResponse(location, status_code=302)
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24),
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=USER,
        )
        self.codes[code.code] = code
        location = construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)
        return RedirectResponse(location, status_code=302)


class _Recorder:
    """Records authorization and token requests; refuses a token request whose `resource` is not
    the MCP server's (the SDK's token handler does not pass it on); serves `metadata_override`."""

    def __init__(self, app: ASGIApp, owner: McpAuthorizationServer) -> None:
        self.app = app
        self.owner = owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == "/authorize":
            query = parse_qs(scope.get("query_string", b"").decode(), keep_blank_values=True)
            self.owner.authorize_requests.append({k: v[0] for k, v in query.items()})
        elif path.startswith("/.well-known/"):
            self.owner.metadata_requests += 1
            if self.owner.metadata_override is not None:
                response = Response(self.owner.metadata_override, media_type="application/json")
                await response(scope, receive, send)
                return
        elif path == "/token":
            body = await _body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()}
            self.owner.token_requests.append(form)
            if form.get("resource") != self.owner.resource:
                refusal = {"error": "invalid_target", "error_description": "resource is missing or wrong"}
                await JSONResponse(refusal, status_code=400)(scope, receive, send)
                return
            receive = _replay(body)
        await self.app(scope, receive, send)


async def _body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        chunk: bytes = message.get("body", b"")
        body += chunk
        if not message.get("more_body"):
            return body


def _replay(body: bytes) -> Receive:
    messages: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        return messages.pop() if messages else {"type": "http.disconnect"}

    return receive


# --------------------------------------------------------------------------- the MCP server


async def _list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
    tool = types.Tool(name="whoami", description="Who signed in", input_schema={"type": "object"})
    return types.ListToolsResult(tools=[tool])


async def _call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    token = get_access_token()
    answer = {"user": token.subject if token else None, "scopes": token.scopes if token else []}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(answer))])


class ProtectedMcpServer:
    """See the module docstring. `url` is the MCP endpoint (`…/mcp`)."""

    def __init__(self, authorization: McpAuthorizationServer) -> None:
        self.authorization = authorization
        self.step_up: str | None = None  # a scope every token must also have
        self.step_up_status = 403
        self.resource_metadata_override: bytes | None = None
        self.bearer_requests = 0
        self._served = ServedApp(self._app)
        self.url = f"{self._served.url}/mcp"
        authorization.resource = self.url

    def start(self) -> ProtectedMcpServer:
        self._served.start()
        return self

    def close(self) -> None:
        self._served.close()

    def _app(self, origin: str) -> ASGIApp:
        server: Server[Any] = Server(
            "protected", version="1.0", on_list_tools=_list_tools, on_call_tool=_call_tool
        )
        app = server.streamable_http_app(
            auth=AuthSettings(
                issuer_url=AnyHttpUrl(self.authorization.url),
                resource_server_url=AnyHttpUrl(f"{origin}/mcp"),
                required_scopes=[SCOPE],
                validate_token_resource=True,
            ),
            token_verifier=ProviderTokenVerifier(self.authorization),
        )
        return _Guard(app, self)


class _Guard:
    """The switches of `ProtectedMcpServer`, in front of the SDK's own checks."""

    def __init__(self, app: ASGIApp, owner: ProtectedMcpServer) -> None:
        self.app = app
        self.owner = owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            headers = dict(scope.get("headers", []))
            bearer = headers.get(b"authorization", b"").decode()
            if path == "/mcp" and bearer:
                self.owner.bearer_requests += 1
            if (
                path.startswith("/.well-known/oauth-protected-resource")
                and self.owner.resource_metadata_override
            ):
                await Response(self.owner.resource_metadata_override, media_type="application/json")(
                    scope, receive, send
                )
                return
            if path == "/mcp" and self.owner.step_up and bearer and not await self._has_step_up(bearer):
                wanted = f"{SCOPE} {self.owner.step_up}"
                challenge = f'Bearer error="insufficient_scope", scope="{wanted}"'
                response = JSONResponse(
                    {"error": "insufficient_scope"},
                    status_code=self.owner.step_up_status,
                    headers={"WWW-Authenticate": challenge},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _has_step_up(self, bearer: str) -> bool:
        token = await self.owner.authorization.load_access_token(bearer.removeprefix("Bearer ").strip())
        return token is not None and self.owner.step_up in token.scopes
