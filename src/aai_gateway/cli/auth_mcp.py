"""`aai-gateway auth login <app>` for an MCP server at a URL that requires the MCP authorization
flow (auth/mcp_login.py): discovery, dynamic client registration or `--client-id`, PKCE, the
browser and the loopback redirect; the tokens go into the OS keyring, bound to the descriptor.

The first request carries the app's own headers, secrets resolved (`{"secret": NAME}` from the
app's stored record, `{"env": VAR}` from this process's environment), as the gateway would send
them: a server may need them to answer at all.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser

import anyio

from ..auth.credentials import Credential, CredentialStore
from ..auth.mcp_login import NoSignInNeededError, login_mcp
from ..descriptor import AppDescriptor
from ..descriptor.http_headers import header_value_problem
from ..descriptor.mcp_tools import mcp_channel
from ..descriptor.model import McpChannel
from ..descriptor.model_auth import EnvironmentReference, SecretReference
from ..errors import UsageError


def login_mcp_server(app: AppDescriptor, args: argparse.Namespace, store: CredentialStore) -> int:
    existing = store.load(app)
    try:
        credential = anyio.run(_login, app, args, existing)
    except NoSignInNeededError:
        print(
            f"The MCP server of {app.names.primary} ({app.id}) answered without asking for a sign-in: "
            "there is nothing to sign in to."
        )
        return 0
    store.save(app, credential)
    print(
        f"Signed in to {app.names.primary} ({app.id}); the tokens are in the OS keyring, bound to "
        f"{app.binding.describe()}."
    )
    return 0


async def _login(app: AppDescriptor, args: argparse.Namespace, existing: Credential | None) -> Credential:
    from .runtime import web_policy

    secret = sys.stdin.readline().strip() if args.client_secret_stdin else None
    if args.client_id is None and secret:
        raise UsageError(
            "--client-secret-stdin needs --client-id: the secret belongs to a client you registered"
        )

    def open_url(url: str) -> None:
        print(f"Sign in to {app.names.primary} in your browser:\n  {url}", file=sys.stderr)
        if not args.no_browser:
            webbrowser.open(url)

    return await login_mcp(
        app,
        existing=existing,
        client_id=args.client_id,
        client_secret=secret,
        scope=args.scope,
        open_url=open_url,
        headers=_headers(app, existing),
        web_policy=web_policy(),
    )


def _headers(app: AppDescriptor, existing: Credential | None) -> dict[str, str]:
    """The app's headers, with what its references name where it is at hand (a missing secret or
    variable is left out: the server's answer will say what it lacks)."""
    channel = mcp_channel(app)
    if not isinstance(channel, McpChannel):
        return {}
    stored = existing.secrets if existing is not None else {}
    headers: dict[str, str] = {}
    for name, value in channel.headers.items():
        if isinstance(value, SecretReference):
            found = stored.get(value.name)
        elif isinstance(value, EnvironmentReference):
            found = os.environ.get(value.name)
        else:
            found = value
        if found and header_value_problem(found) is None:
            headers[name] = found
    return headers
