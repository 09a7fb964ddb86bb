"""A real OAuth 2.1 authorization server for the auth tests, built with authlib's Flask
integration and served by werkzeug on 127.0.0.1 in a thread.

- a pre-registered confidential client (`client_secret_post`, any loopback port for
  `http://127.0.0.1/callback`, RFC 8252 §7.3) and RFC 7591 dynamic registration (`/register`);
- `/authorize`: an HTML consent page with "Allow" and "Deny" buttons (a browser must click one),
  then a redirect with `code` + `state` (or `error=access_denied`);
- `/token`: `authorization_code` with PKCE S256 required at `/authorize` and verified here
  (authlib's `CodeChallenge`), `redirect_uri` checked against the code's; `refresh_token` with
  switches: rotate refresh tokens or not, make refresh fail; a configurable token lifetime;
- `/api/me`: a protected resource; 401 for a missing, unknown, revoked or expired token;
- `/.well-known/oauth-authorization-server`: RFC 8414 metadata;
- `/auth/token` + `/app/api/me`: a Feishu-style app-credential token endpoint and its resource.

The server keeps counters and the requests it saw so tests can check what really happened.
`ThreadedWsgiServer` also serves httpbin in-process for the header/query/cookie checks.
"""

from __future__ import annotations

import html
import http.client
import importlib
import json
import secrets
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
from authlib.integrations.flask_oauth2 import AuthorizationServer  # type: ignore[import-untyped]
from authlib.oauth2 import OAuth2Error  # type: ignore[import-untyped]
from authlib.oauth2.rfc6749 import (  # type: ignore[import-untyped]
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidRequestError,
    TokenMixin,
)
from authlib.oauth2.rfc6749.grants import (  # type: ignore[import-untyped]
    AuthorizationCodeGrant,
    RefreshTokenGrant,
)
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # type: ignore[import-untyped]
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint  # type: ignore[import-untyped]
from authlib.oauth2.rfc7636 import CodeChallenge  # type: ignore[import-untyped]
from flask import Flask, Response, jsonify, request
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.descriptor.model import HttpChannel
from aai_gateway.descriptor.model_auth import OAuth2Auth

PRE_CLIENT_ID = "aai-test-client"
PRE_CLIENT_SECRET = "pre-registered-client-secret-4f1d"
LOOPBACK_REDIRECT = "http://127.0.0.1/callback"
APP_ID = "cli_app_0001"
APP_SECRET = "app-secret-9c2e7b"
USER = "alice"
AUTH_METHODS = ["client_secret_post", "client_secret_basic", "none"]


# --------------------------------------------------------------------------- serving


class QuietHandler(WSGIRequestHandler):
    """No access log: request lines carry codes and tokens, and tests read the logs."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return None


@dataclass(frozen=True)
class Received:
    """One request as the server saw it (before the app answered)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


class ThreadedWsgiServer:
    """A WSGI app on 127.0.0.1:<free port>, served by werkzeug in a daemon thread; over HTTPS
    with `ssl_context`. `received` lists every request that reached it."""

    def __init__(self, app: Callable[..., Any], *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.received: list[Received] = []
        self._app = app
        self._server: BaseWSGIServer = make_server(
            "127.0.0.1", 0, self._record, threaded=True, request_handler=QuietHandler, ssl_context=ssl_context
        )
        scheme = "https" if ssl_context is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def _record(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        headers = {
            key[5:].replace("_", "-").title(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        query = {
            k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()
        }
        self.received.append(
            Received(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), query, headers)
        )
        return self._app(environ, start_response)

    def start(self) -> ThreadedWsgiServer:
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()  # waits for serve_forever: only when it runs
            self._thread.join(timeout=5)
        self._server.server_close()


# --------------------------------------------------------------------------- models


def _loopback_match(registered: str, requested: str) -> bool:
    """RFC 8252 §7.3: a loopback redirect URI registered without a port matches any port."""
    reg, req = urlsplit(registered), urlsplit(requested)
    return (
        reg.port is None
        and reg.hostname == "127.0.0.1"
        and (req.scheme, req.hostname, req.path, req.query) == (reg.scheme, reg.hostname, reg.path, reg.query)
    )


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str | None
    redirect_uris: list[str]
    auth_method: str
    scope: str = "read write"
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    client_name: str = ""

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return ""
        allowed = set(self.scope.split())
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(uri == redirect_uri or _loopback_match(uri, redirect_uri) for uri in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            if self.auth_method == "none":
                return method == "none"
            return method in ("client_secret_post", "client_secret_basic")
        return True

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class AuthorizationCode(AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    auth_time: float = field(default_factory=time.time)

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_auth_time(self) -> int:
        return int(self.auth_time)

    def get_nonce(self) -> None:
        return None


@dataclass
class Token(TokenMixin):  # type: ignore[misc]
    access_token: str
    refresh_token: str | None
    client_id: str
    scope: str
    user: str
    expires_in: int
    issued_at: float = field(default_factory=time.time)
    revoked: bool = False
    refresh_revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str:
        return self.user

    def get_client(self) -> str:
        return self.client_id


# --------------------------------------------------------------------------- grants


class RequiredS256(CodeChallenge):  # type: ignore[misc]
    """OAuth 2.1: every authorization request carries an S256 challenge (authlib alone only
    insists for public clients)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: missing 'code_challenge'")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE is required with code_challenge_method=S256")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def save_authorization_code(self, code: str, request: Any) -> AuthorizationCode:
        owner: OAuthTestServer = self.server.owner
        data = request.payload.data
        item = AuthorizationCode(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=request.payload.redirect_uri or "",
            scope=request.payload.scope or "",
            user=request.user,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
        )
        with owner.lock:
            owner.codes[code] = item
        return item

    def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
        owner: OAuthTestServer = self.server.owner
        with owner.lock:
            item = owner.codes.get(code)
        if item is not None and item.client_id == client.client_id:
            return item
        return None

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        owner: OAuthTestServer = self.server.owner
        with owner.lock:
            owner.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: AuthorizationCode) -> str:
        return authorization_code.user


class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def issue_token(self, user: str, refresh_token: Token) -> dict[str, Any]:
        owner: OAuthTestServer = self.server.owner
        token: dict[str, Any] = self.generate_token(
            user=user, scope=refresh_token.get_scope(), include_refresh_token=owner.rotate_refresh_tokens
        )
        return token

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        owner: OAuthTestServer = self.server.owner
        with owner.lock:
            token = owner.by_refresh.get(refresh_token)
        return token if token is not None and not token.refresh_revoked else None

    def authenticate_user(self, refresh_token: Token) -> str:
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: Token) -> None:
        owner: OAuthTestServer = self.server.owner
        if owner.rotate_refresh_tokens:
            refresh_token.refresh_revoked = True


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    def authenticate_token(self, request: Any) -> bool:
        return True  # open registration, as for native apps without an initial access token

    def get_server_metadata(self) -> dict[str, Any]:
        owner: OAuthTestServer = self.server.owner
        return owner.metadata()

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if (request.payload.data or {}).get("token_endpoint_auth_method") == "none":
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
    ) -> Client:
        owner: OAuthTestServer = self.server.owner
        client = Client(
            client_id=client_info["client_id"],
            client_secret=client_info.get("client_secret"),
            redirect_uris=list(client_metadata.get("redirect_uris", [])),
            auth_method=client_metadata.get("token_endpoint_auth_method", "client_secret_basic"),
            scope=client_metadata.get("scope", "read write"),
            grant_types=tuple(client_metadata.get("grant_types", ["authorization_code"])),
            client_name=client_metadata.get("client_name", ""),
        )
        with owner.lock:
            owner.clients[client.client_id] = client
            owner.registrations.append(dict(client_metadata))
        return client


# --------------------------------------------------------------------------- the server


class OAuthTestServer:
    """Start with `start()`, stop with `close()`. Settings may change while it runs."""

    def __init__(self) -> None:
        # settings
        self.access_token_lifetime = 3600
        self.rotate_refresh_tokens = True
        self.fail_refresh = False
        self.app_token_lifetime = 7200
        self.app_token_field = "tenant_access_token"
        self.app_token_omit_expiry = False
        self.refuse_all_tokens = False  # /api/me answers 401 to every token
        self.offer_registration = True
        self.well_known: dict[str, Any] | None = None  # served at /.well-known/aai.json when set
        # state
        self.lock = threading.Lock()
        self.clients: dict[str, Client] = {
            PRE_CLIENT_ID: Client(
                client_id=PRE_CLIENT_ID,
                client_secret=PRE_CLIENT_SECRET,
                redirect_uris=[LOOPBACK_REDIRECT],
                auth_method="client_secret_post",
                client_name="AAI Gateway (pre-registered)",
            )
        }
        self.codes: dict[str, AuthorizationCode] = {}
        self.by_access: dict[str, Token] = {}
        self.by_refresh: dict[str, Token] = {}
        self.app_tokens: dict[str, float] = {}  # token -> expires at
        # observations
        self.grants: Counter[str] = Counter()
        self.token_requests: list[dict[str, str]] = []
        self.authorize_requests: list[dict[str, str]] = []
        self.registrations: list[dict[str, Any]] = []
        self.resource_tokens: list[str] = []  # the tokens /api/me accepted, in order
        self.app_exchanges = 0
        self.app_resource_tokens: list[str] = []
        self.url = ""
        self._http: ThreadedWsgiServer | None = None
        self.app = self._build_app()

    # ----------------------------------------------------------------------- lifecycle

    def start(self, *, ssl_context: ssl.SSLContext | None = None) -> OAuthTestServer:
        """Serve over http, or over https with `ssl_context`."""
        self._http = ThreadedWsgiServer(self.app, ssl_context=ssl_context).start()
        self.url = self._http.url
        return self

    @property
    def received(self) -> list[Received]:
        return self._http.received if self._http is not None else []

    def close(self) -> None:
        if self._http is not None:
            self._http.close()

    @property
    def authorization_endpoint(self) -> str:
        return f"{self.url}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    @property
    def app_token_endpoint(self) -> str:
        return f"{self.url}/auth/token"

    # ----------------------------------------------------------------------- switches

    def revoke_access_tokens(self) -> None:
        with self.lock:
            for token in self.by_access.values():
                token.revoked = True

    def revoke_app_tokens(self) -> None:
        with self.lock:
            self.app_tokens.clear()

    def metadata(self) -> dict[str, Any]:
        document = {
            "issuer": self.url,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "registration_endpoint": f"{self.url}/register",
            "scopes_supported": ["read", "write"],
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "code_challenge_methods_supported": ["S256"],
        }
        if not self.offer_registration:
            del document["registration_endpoint"]
        return document

    # ----------------------------------------------------------------------- the Flask app

    def _query_client(self, client_id: str) -> Client | None:
        with self.lock:
            return self.clients.get(client_id)

    def _save_token(self, token: dict[str, Any], oauth_request: Any) -> None:
        item = Token(
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            client_id=oauth_request.client.client_id,
            scope=token.get("scope", ""),
            user=oauth_request.user,
            expires_in=int(token.get("expires_in", self.access_token_lifetime)),
        )
        with self.lock:
            self.by_access[item.access_token] = item
            if item.refresh_token:
                self.by_refresh[item.refresh_token] = item

    def _build_app(self) -> Flask:
        app = Flask(__name__)
        server = AuthorizationServer(app, query_client=self._query_client, save_token=self._save_token)
        server.owner = self
        server.register_token_generator(
            "default",
            BearerTokenGenerator(
                lambda **_: secrets.token_urlsafe(32),
                lambda **_: secrets.token_urlsafe(40),
                lambda client, grant_type: self.access_token_lifetime,
            ),
        )
        server.register_grant(CodeGrant, [RequiredS256(required=True)])
        server.register_grant(RefreshGrant)
        server.register_endpoint(Registration)
        self._add_oauth_routes(app, server)
        self._add_app_credential_routes(app)
        return app

    def _add_oauth_routes(self, app: Flask, server: Any) -> None:
        @app.get("/.well-known/aai.json")
        def aai_descriptor() -> Any:
            if self.well_known is None:
                return jsonify(error="not_found"), 404
            return jsonify(self.well_known)

        @app.get("/.well-known/oauth-authorization-server")
        def metadata() -> Response:
            return jsonify(self.metadata())

        @app.route("/authorize", methods=["GET", "POST"])
        def authorize() -> Any:
            if request.method == "GET":
                with self.lock:
                    self.authorize_requests.append(dict(request.args))
                try:
                    grant = server.get_consent_grant(end_user=USER)
                except OAuth2Error as error:
                    text = f"{error.error}: {error.description}"
                    return _page("Authorization refused", f"<p id='error'>{html.escape(text)}</p>"), 400
                return _consent_page(grant.client, request.args.get("scope", ""), request.args)
            allowed = request.form.get("decision") == "allow"
            try:
                grant = server.get_consent_grant(end_user=USER)
            except OAuth2Error:
                grant = None  # authlib answers the error itself (redirect or page)
            return server.create_authorization_response(grant_user=USER if allowed else None, grant=grant)

        @app.post("/token")
        def token() -> Any:
            form = dict(request.form.items())
            grant_type = form.get("grant_type", "")
            with self.lock:
                self.token_requests.append(form)
            if grant_type == "refresh_token" and self.fail_refresh:
                body = {"error": "invalid_grant", "error_description": "the refresh token was revoked"}
                return jsonify(body), 400
            response = server.create_token_response()
            if response.status_code == 200:
                with self.lock:
                    self.grants[grant_type] += 1
            return response

        @app.post("/register")
        def register() -> Any:
            if not self.offer_registration:
                return jsonify(error="not_found"), 404
            return server.create_endpoint_response("client_registration")

        @app.get("/api/me")
        def me() -> Any:
            presented = _bearer(request.headers.get("Authorization")) or request.args.get("access_token")
            with self.lock:
                found = self.by_access.get(presented or "")
            if found is None or found.is_revoked() or found.is_expired() or self.refuse_all_tokens:
                challenge = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
                return jsonify(error="invalid_token"), 401, challenge
            with self.lock:
                self.resource_tokens.append(found.access_token)
            return jsonify(user=found.user, client_id=found.client_id, scope=found.scope)

    def _add_app_credential_routes(self, app: Flask) -> None:
        @app.post("/auth/token")
        def app_token() -> Any:
            body = request.get_json(silent=True) or {}
            with self.lock:
                self.app_exchanges += 1
            if body.get("app_id") != APP_ID or body.get("app_secret") != APP_SECRET:
                return jsonify(code=10014, msg="app secret invalid")  # Feishu: errors come with HTTP 200
            value = "t-" + secrets.token_urlsafe(24)
            with self.lock:
                self.app_tokens[value] = time.time() + self.app_token_lifetime
            answer: dict[str, Any] = {"code": 0, "msg": "ok", self.app_token_field: value}
            if not self.app_token_omit_expiry:
                answer["expire"] = self.app_token_lifetime
            return jsonify(answer)

        @app.get("/app/api/me")
        def app_me() -> Any:
            presented = _bearer(request.headers.get("Authorization")) or ""
            with self.lock:
                expires_at = self.app_tokens.get(presented)
            if expires_at is None or time.time() >= expires_at:
                return jsonify(code=99991663, msg="invalid access token"), 401
            with self.lock:
                self.app_resource_tokens.append(presented)
            return jsonify(app=APP_ID)


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def _consent_page(client: Client, scope: str, args: Any) -> str:
    tools = [t for t in args.get("aaiTools", "").split(",") if t]
    listed = "".join(f"<li class='tool'>{html.escape(t)}</li>" for t in tools)
    # no `action`: the form posts to this same URL, query string included
    return _page(
        "Authorize access",
        f"<p><b id='client'>{html.escape(client.client_name or client.client_id)}</b> asks for "
        f"<span id='scope'>{html.escape(scope)}</span>.</p><ul id='tools'>{listed}</ul>"
        "<form method='post'>"
        "<button type='submit' name='decision' value='allow' id='allow'>Allow</button> "
        "<button type='submit' name='decision' value='deny' id='deny'>Deny</button>"
        "</form>",
    )


@dataclass(frozen=True)
class CallbackAnswer:
    status: int
    text: str


async def approve_over_http(
    authorization_url: str, *, decision: str = "allow", ca_file: str | None = None
) -> CallbackAnswer:
    """What a user's browser does, without a browser: load the consent page, press a button,
    follow the redirect to the loopback callback. Returns the callback's answer. An https
    authorization server is trusted through `ca_file`.

    Plain `http.client` in a worker thread: httpx would log the redirect's `code` at DEBUG,
    and the log tests must only see what the gateway logs."""
    return await anyio.to_thread.run_sync(_approve, authorization_url, decision, ca_file)


def _approve(authorization_url: str, decision: str, ca_file: str | None) -> CallbackAnswer:
    def fetch(url: str, body: str | None = None) -> tuple[int, str | None, str]:
        parts = urlsplit(url)
        connection = (
            http.client.HTTPSConnection(
                parts.hostname or "",
                parts.port,
                timeout=15,
                context=ssl.create_default_context(cafile=ca_file),
            )
            if parts.scheme == "https"
            else http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=15)
        )
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
            connection.request("GET" if body is None else "POST", target, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheader("Location"), response.read().decode()
        finally:
            connection.close()

    status, _, page = fetch(authorization_url)
    assert status == 200, page
    status, location, page = fetch(authorization_url, urlencode({"decision": decision}))
    assert status == 302 and location, page
    status, _, page = fetch(location)
    return CallbackAnswer(status, page)


# --------------------------------------------------------------------------- descriptors


def load_app(document: dict[str, Any], *, web_origin: str | None = None) -> AppDescriptor:
    """Load as discovery does: from a local file, or fetched from `web_origin`."""
    if web_origin is None:
        source = Source(kind="file", location="/tmp/aai-auth-tests/aai.json")
    else:
        source = Source(kind="web", location=f"{web_origin}/.well-known/aai.json", origin=web_origin)
    result = load_text(json.dumps(document), source, "linux")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def c_app(
    base_url: str,
    auth: dict[str, Any],
    tools: dict[str, str],
    *,
    app_id: str = "dev.test.auth",
    default_headers: dict[str, str] | None = None,
    web_origin: str | None = None,
) -> AppDescriptor:
    """A dialect-C web app at `base_url` with `auth`; `tools` maps tool name → GET path."""
    execution: dict[str, Any] = {"type": "http", "baseUrl": base_url}
    if default_headers:
        execution["defaultHeaders"] = default_headers
    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {
            "id": app_id,
            "name": {"en": "Auth Test", "zh-CN": "认证测试"},
            "defaultLang": "en",
            "description": "An app for the auth tests",
        },
        "execution": execution,
        "auth": auth,
        "tools": [
            {
                "name": name,
                "description": f"GET {path}",
                "parameters": {"type": "object", "properties": {}},
                "execution": {"path": path, "method": "GET"},
            }
            for name, path in tools.items()
        ],
    }
    return load_app(document, web_origin=web_origin)


def b_app(
    base_url: str,
    auth: dict[str, Any],
    tools: dict[str, str],
    *,
    app_id: str = "dev.test.b-auth",
    web_origin: str | None = None,
) -> AppDescriptor:
    """A dialect-B app with only a `web` section (snake_case auth: api_key, bearer, oauth2)."""
    document = {
        "schema_version": "1.0",
        "appId": app_id,
        "name": "B Auth Test",
        "description": "An app for the auth tests",
        "version": "1.0",
        "platforms": {
            "web": {
                "automation": "restapi",
                "base_url": base_url,
                "auth": auth,
                "tools": [
                    {
                        "name": name,
                        "description": f"GET {path}",
                        "parameters": {"type": "object", "properties": {}},
                        "endpoint": path,
                        "method": "GET",
                    }
                    for name, path in tools.items()
                ],
            }
        },
    }
    return load_app(document, web_origin=web_origin)


def oauth2_auth(server: OAuthTestServer, scopes: tuple[str, ...] = ("read", "write")) -> dict[str, Any]:
    return {
        "type": "oauth2",
        "oauth2": {
            "authorizationEndpoint": server.authorization_endpoint,
            "tokenEndpoint": server.token_endpoint,
            "scopes": list(scopes),
            "pkce": {"method": "S256"},
        },
    }


def oauth2_settings(app: AppDescriptor) -> OAuth2Auth:
    channel = app.tools[0].channel
    assert isinstance(channel, HttpChannel) and isinstance(channel.auth, OAuth2Auth)
    return channel.auth


# --------------------------------------------------------------------------- an httpbin stand-in


def echo_app() -> Flask:
    """httpbin's `/headers`, `/get`, `/cookies` and `/bearer`, same JSON shapes: used when the
    installed httpbin cannot be imported (httpbin 0.10.0 needs a Werkzeug older than 3)."""
    app = Flask("echo")

    def headers() -> dict[str, str]:
        return {k: v for k, v in request.headers.items() if k.lower() != "cookie" or v}

    @app.get("/headers")
    def echo_headers() -> Response:
        return jsonify(headers=headers())

    @app.get("/get")
    def echo_get() -> Response:
        return jsonify(args=request.args.to_dict(), headers=headers(), url=request.url)

    @app.get("/cookies")
    def echo_cookies() -> Response:
        return jsonify(cookies=request.cookies.to_dict())

    @app.get("/bearer")
    def echo_bearer() -> Any:
        token = _bearer(request.headers.get("Authorization"))
        if not token:
            return Response(status=401, headers={"WWW-Authenticate": "Bearer"})
        return jsonify(authenticated=True, token=token)

    return app


def httpbin_or_echo_app() -> Callable[..., Any]:
    """httpbin when it can be imported, else the stand-in above (same answers for these paths)."""
    try:
        module = importlib.import_module("httpbin")  # imported by name: optional, and untyped
    except ImportError:
        return echo_app()
    wsgi: Callable[..., Any] = module.app
    return wsgi
