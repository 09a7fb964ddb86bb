"""`aai-gateway auth status|logout`: what is stored, worked out from the store itself.

A stored credential says what it belongs to (its binding and app id), so it can be listed and
removed even when its descriptor is gone (a web app no longer cached, a file deleted), and
removing one never needs the network. A reference names stored credentials as it names apps:
the reference of their binding (`https://origin`, `file:/…`, `bundled:<id>`), or their app id —
several found that way are ambiguous and listed.
"""

from __future__ import annotations

import time
from typing import Any

from ..auth.credentials import Credential, CredentialStore
from ..descriptor import AppDescriptor, app_reference, parse_binding
from ..descriptor.model import HttpChannel
from ..descriptor.origin import normalize_origin
from ..errors import AaiError, AmbiguousAppError, UnknownAppError
from ..service import Gateway
from .auth_secrets import needed_secrets, secrets_state
from .common import print_json
from .tables import render_table


def app_uses_credentials(app: AppDescriptor) -> bool:
    http_auth = any(isinstance(t.channel, HttpChannel) and t.channel.auth is not None for t in app.tools)
    return http_auth or bool(needed_secrets(app))


def stored_for(store: CredentialStore, reference: str) -> list[Credential]:
    """The stored credentials `reference` names (see the module docstring)."""
    wanted = reference.strip()
    try:
        origin = normalize_origin(wanted) if "://" in wanted or "." in wanted or ":" in wanted else None
    except AaiError:
        origin = None
    found = []
    for credential in store.stored():
        try:
            binding = parse_binding(credential.binding)
        except AaiError:
            continue
        named = wanted in (credential.app_id, app_reference(binding, credential.app_id))
        if named or (binding.kind == "web" and binding.location == origin):
            found.append(credential)
    return found


def logout(gateway: Gateway, store: CredentialStore, reference: str) -> int:
    stored = stored_for(store, reference)
    if not stored:  # perhaps a name or alias of a known app
        try:
            app = gateway.resolve(reference)
        except UnknownAppError:
            print(f"There are no stored credentials for {reference!r}. `aai-gateway auth status` lists them.")
            return 0
        stored = [c for c in store.stored() if (c.binding, c.app_id) == (str(app.binding), app.id)]
    if len(stored) > 1:
        raise AmbiguousAppError(reference, [_candidate(c) for c in stored])
    if not stored:
        print(f"There were no stored credentials for {reference!r}.")
        return 0
    [credential] = stored
    store.forget(credential)
    print(f"Removed stored credentials for {credential.app_id} ({credential.binding}).")
    return 0


def show_status(gateway: Gateway, store: CredentialStore, reference: str | None, *, as_json: bool) -> int:
    stored = {(c.binding, c.app_id): c for c in store.stored()}
    apps = [
        a
        for a in gateway.all_apps()
        if app_uses_credentials(a) or (a.mcp_server_url is not None and (str(a.binding), a.id) in stored)
    ]
    if reference:
        named = {(c.binding, c.app_id) for c in stored_for(store, reference)}
        try:
            found = gateway.resolve(reference)
            named.add((str(found.binding), found.id))
        except UnknownAppError:
            pass
        apps = [a for a in apps if (str(a.binding), a.id) in named]
        stored = {key: c for key, c in stored.items() if key in named}
    rows: list[dict[str, Any]] = []
    for app in apps:
        credential = stored.pop((str(app.binding), app.id), None)
        rows.append(
            {
                "app": app.id,
                "auth_type": _auth_type(app, credential),
                "source": str(app.binding),
                "state": _app_state(app, credential),
            }
        )
    for credential in stored.values():  # kept for a descriptor this gateway no longer knows
        known = secrets_state(None, credential) if credential.kind == "secrets" else _state(credential)
        state = f"{known} (its descriptor is not found)"
        rows.append(
            {
                "app": credential.app_id,
                "auth_type": credential.kind,
                "source": credential.binding,
                "state": state,
            }
        )
    if as_json:
        print_json(rows)
        return 0
    if not rows:
        print("No discovered app uses credentials, and none are stored.")
        return 0
    table = [[r["app"], r["auth_type"] or "-", r["state"], r["source"]] for r in rows]
    print(render_table(["APP", "AUTH", "STATE", "BOUND TO"], table))
    return 0


def _candidate(credential: Credential) -> dict[str, str]:
    reference = app_reference(parse_binding(credential.binding), credential.app_id)
    return {"app": credential.app_id, "source": credential.binding, "reference": reference}


def _auth_type(app: AppDescriptor, credential: Credential | None) -> str | None:
    for tool in app.tools:
        if isinstance(tool.channel, HttpChannel) and tool.channel.auth is not None:
            return tool.channel.auth.type
    if credential is not None and credential.authorization_server is not None:
        return "oauth2"  # the MCP server's sign-in (its named secrets, if any, are in the state)
    return "secrets" if needed_secrets(app) else None


def _app_state(app: AppDescriptor, credential: Credential | None) -> str:
    signed_in = credential is not None and credential.authorization_server is not None
    if not needed_secrets(app):
        return _state(credential)
    if signed_in:
        return f"{_state(credential)}; {secrets_state(app, credential)}"
    return secrets_state(app, credential)


def _state(credential: Credential | None) -> str:
    if credential is None:
        return "not set"
    if credential.tokens is not None:
        expires = credential.tokens.expires_at
        if expires is None:
            return "signed in"
        left = expires - time.time()
        refresh = ", can refresh" if credential.tokens.refresh_token else ""
        return (
            f"signed in, expires in {left / 60:.0f} min{refresh}" if left > 0 else f"token expired{refresh}"
        )
    if credential.kind == "oauth2":
        return "client registered, not signed in"
    return "stored"
