"""`aai-gateway auth set|login|status|logout`: the user's credentials, kept in the OS keyring.

Secrets are read from a hidden prompt or from stdin (`… | aai-gateway auth set APP`), never from
arguments, so they stay out of shell history and process lists.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import webbrowser
from typing import Any

import anyio

from ..auth.auth_context import login_command, set_command
from ..auth.credential_page import parse_cookie_header
from ..auth.credentials import Credential
from ..descriptor import AppDescriptor, app_reference
from ..descriptor.model import HttpChannel
from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, Auth, CookieAuth, OAuth2Auth
from ..errors import UsageError
from .common import LOGGING_OPTIONS, add_discovery_options


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "auth",
        parents=[LOGGING_OPTIONS],
        help="store, check or remove app credentials (OS keyring)",
        description="Credentials are bound to the app and to where its descriptor came from.",
    )
    actions = parser.add_subparsers(dest="auth_action", metavar="ACTION", required=True)
    store = actions.add_parser(
        "set",
        help="store an API key, App ID + Secret, cookies, or a named secret (hidden prompt or stdin)",
    )
    store.add_argument("app", metavar="APP")
    store.add_argument(
        "--secret",
        metavar="NAME",
        default=None,
        help='store the secret NAME that the app\'s MCP server takes ({"secret": NAME} in its env or '
        "headers); the value is read from a hidden prompt or stdin, never from the command line",
    )
    login = actions.add_parser("login", help="sign in with OAuth in the browser")
    login.add_argument("app", metavar="APP")
    login.add_argument(
        "--client-id", default=None, help="OAuth client id (default: register one, if the server can)"
    )
    login.add_argument(
        "--client-secret-stdin", action="store_true", help="read the OAuth client secret from stdin"
    )
    login.add_argument(
        "--no-browser", action="store_true", help="print the sign-in URL instead of opening it"
    )
    login.add_argument(
        "--scope",
        default=None,
        help="the scopes to ask an MCP server's authorization server for, space-separated "
        "(default: those the server names)",
    )
    status = actions.add_parser("status", help="which apps have credentials, and of what kind")
    status.add_argument("app", nargs="?", metavar="APP")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    logout = actions.add_parser("logout", help="remove an app's stored credentials")
    logout.add_argument("app", metavar="APP")
    for sub in (store, login, status, logout):
        add_discovery_options(sub)
    parser.set_defaults(handler=run)


def app_auth(app: AppDescriptor) -> Auth | None:
    for tool in app.tools:
        if isinstance(tool.channel, HttpChannel) and tool.channel.auth is not None:
            return tool.channel.auth
    return None


def read_secret(prompt: str) -> str:
    value = getpass.getpass(prompt) if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
    if not value.strip():
        raise UsageError(f"nothing entered for: {prompt.rstrip(': ')}")
    return value.strip()


def read_visible(prompt: str) -> str:
    value = input(prompt) if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
    if not value.strip():
        raise UsageError(f"nothing entered for: {prompt.rstrip(': ')}")
    return value.strip()


def collect_secret(app: AppDescriptor, auth: Auth, credential: Credential) -> Credential:
    name = app.names.primary
    if isinstance(auth, ApiKeyAuth):
        if auth.obtain_url:
            print(f"Get the key for {name} at {auth.obtain_url}", file=sys.stderr)
        return credential.model_copy(update={"api_key": read_secret(f"API key for {name} (hidden): ")})
    if isinstance(auth, AppCredentialAuth):
        app_id = read_visible(f"App ID for {name}: ")
        secret = read_secret(f"App Secret for {name} (hidden): ")
        return credential.model_copy(update={"client_id": app_id, "client_secret": secret, "app_token": None})
    if isinstance(auth, CookieAuth):
        print(f"Sign in at {auth.login_url}, then copy the Cookie header for {auth.domain}", file=sys.stderr)
        cookies, problems = parse_cookie_header(read_secret(f"Cookie header for {name} (hidden): "))
        missing = [c for c in auth.required_cookies if c not in cookies]
        if problems or missing:
            detail = "; ".join([*problems, *(f"cookie {c!r} is missing" for c in missing)])
            raise UsageError(f"the cookies for {name} are not usable: {detail}")
        return credential.model_copy(update={"cookies": cookies})
    raise UsageError(f"{name} signs in with OAuth: run `{login_command(app_reference(app.binding, app.id))}`")


def run(args: argparse.Namespace) -> int:
    from ..auth.provider import short_secret_warning, short_secrets
    from .auth_secrets import set_secret, unset_secrets_hint
    from .auth_stored import logout, show_status
    from .runtime import app_named_by_user, build_gateway, build_watcher, credential_store

    gateway = build_gateway(args, build_watcher(args))
    store = credential_store()
    if args.auth_action == "status":
        return show_status(gateway, store, args.app, as_json=args.json)
    if args.auth_action == "logout":
        return logout(gateway, store, args.app)
    app = app_named_by_user(gateway, args.app, args)
    if args.auth_action == "set" and args.secret is not None:
        print(set_secret(app, args.secret, store, read_secret))
        return 0
    auth = app_auth(app)
    if auth is None and args.auth_action == "login" and app.mcp_server_url is not None:
        from .auth_mcp import login_mcp_server

        return login_mcp_server(app, args, store)
    if auth is None:
        raise UsageError(unset_secrets_hint(app))
    existing = store.load(app) or store.new(app, _KIND[auth.type])
    if args.auth_action == "set":
        credential = collect_secret(app, auth, existing)
        store.save(app, credential)
        print(
            f"Saved the {auth.type} credential for {app.names.primary} ({app.id}) in the OS keyring, bound "
            f"to {app.binding.describe()}: only the app described there receives it."
        )
        for field in short_secrets(auth, credential):
            print(f"Warning: {short_secret_warning(app.id, field)}.", file=sys.stderr)
        return 0
    if not isinstance(auth, OAuth2Auth):
        raise UsageError(
            f"{app.id} uses {auth.type}, not OAuth: run `{set_command(app_reference(app.binding, app.id))}`"
        )
    if args.scope is not None:
        raise UsageError(f"--scope is for MCP servers; {app.id} asks for the scopes its descriptor names")
    credential = anyio.run(_login, app, auth, args, existing)
    store.save(app, credential)
    print(
        f"Signed in to {app.names.primary} ({app.id}); the tokens are in the OS keyring, bound to "
        f"{app.binding.describe()}."
    )
    return 0


async def _login(
    app: AppDescriptor, auth: OAuth2Auth, args: argparse.Namespace, existing: Credential
) -> Credential:
    from ..auth.oauth import login
    from .runtime import web_policy

    secret = sys.stdin.readline().strip() if args.client_secret_stdin else existing.client_secret

    def open_url(url: str) -> None:
        print(f"Sign in to {app.names.primary} in your browser:\n  {url}", file=sys.stderr)
        if not args.no_browser:
            webbrowser.open(url)

    # A stored client id without a secret came from dynamic registration for one loopback port:
    # registering again is what works; a stored confidential client (id + secret) is reused.
    stored_id = existing.client_id if existing.client_secret else None
    return await login(
        app,
        auth,
        client_id=args.client_id or stored_id,
        client_secret=secret,
        tool_names=[t.name for t in app.tools],
        open_url=open_url,
        web_policy=web_policy(),
    )


_KIND: dict[str, Any] = {
    "apiKey": "apiKey",
    "appCredential": "appCredential",
    "cookie": "cookie",
    "oauth2": "oauth2",
}
