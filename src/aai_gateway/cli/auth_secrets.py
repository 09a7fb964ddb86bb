"""`aai-gateway auth set APP --secret NAME`: the named secrets of an app whose MCP server takes
them (`{"secret": NAME}` in its `env` or `headers`), kept in the OS keyring.

The value is read like every credential (a hidden prompt, or a line of stdin), never from the
command line. The secrets of one app are one credential record (kind `secrets`), bound to where
its descriptor came from like every other, so `auth status` lists their names (never the values)
and `auth logout` forgets them all.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from ..auth.credentials import Credential, CredentialStore
from ..descriptor import AppDescriptor, app_reference
from ..descriptor.dialect_c_mcp import SECRET_NAME
from ..descriptor.mcp_tools import mcp_channel
from ..descriptor.quoting import listed, quoted
from ..errors import UsageError


def secret_command(app: AppDescriptor, name: str) -> str:
    """The command that stores the secret `name` of `app`, as the user would type it."""
    reference = app_reference(app.binding, app.id)
    return f"aai-gateway auth set {shlex.quote(reference)} --secret {shlex.quote(name)}"


def needed_secrets(app: AppDescriptor) -> tuple[str, ...]:
    channel = mcp_channel(app)
    return channel.secret_names if channel is not None else ()


def set_secret(
    app: AppDescriptor, name: str, store: CredentialStore, read_secret: Callable[[str], str]
) -> str:
    """Read the value of the secret `name` and store it for `app`; the line to print."""
    needed = needed_secrets(app)
    if mcp_channel(app) is None:
        raise UsageError(
            f"--secret is for apps run by an MCP server whose env or headers name secrets "
            f'({{"secret": "NAME"}}); {app.id} is not such an app: run '
            f"`aai-gateway auth set {shlex.quote(app_reference(app.binding, app.id))}` instead"
        )
    if name not in needed:
        which = f"references the secrets {listed(needed)}" if needed else "references no secret"
        shown = quoted(name) if SECRET_NAME.match(name) else "that NAME"
        raise UsageError(
            f"{app.id} does not reference a secret named {shown}: its descriptor "
            f"({app.binding.describe()}) {which}"
        )
    value = read_secret(f"{name} for {app.names.primary} (hidden): ")
    credential = store.load(app) or store.new(app, "secrets")
    # The MCP server's own sign-in (auth login) keeps its tokens; the secret joins them.
    signed_in = credential.kind == "oauth2" and credential.authorization_server is not None
    if credential.kind != "secrets" and not signed_in:  # another kind, left by an earlier descriptor
        credential = store.new(app, "secrets")
    secrets = {**credential.secrets, name: value}
    store.save(app, credential.model_copy(update={"secrets": secrets}))
    return (
        f"Saved the secret {name} for {app.names.primary} ({app.id}) in the OS keyring, bound to "
        f"{app.binding.describe()}: only the app described there receives it."
    )


def unset_secrets_hint(app: AppDescriptor) -> str:
    """What `auth set APP` without `--secret` says for an app that takes named secrets."""
    needed = needed_secrets(app)
    if not needed:
        return f"{app.id} does not use credentials"
    commands = "; ".join(f"`{secret_command(app, name)}`" for name in needed)
    return f"{app.id} takes named secrets; store each with --secret: {commands}"


def secrets_state(app: AppDescriptor | None, credential: Credential | None) -> str:
    """`auth status`'s state of an app's named secrets: which names are stored and which are
    missing (never a value)."""
    stored = sorted(credential.secrets) if credential is not None else []
    needed = needed_secrets(app) if app is not None else ()
    missing = [name for name in needed if name not in stored]
    parts = []
    if stored:
        parts.append(f"stored: {', '.join(stored)}")
    if missing:
        parts.append(f"not set: {', '.join(missing)}")
    return "; ".join(parts) or "not set"
