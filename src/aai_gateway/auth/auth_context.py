"""What an AUTH_REQUIRED error says about an app's credential, and the command that fixes it.

Every flow and the OAuth sign-in raise through an `AuthContext`: the app, the kind of credential,
where to obtain one, and `aai-gateway auth login|set <reference>` with the reference of the app's
binding, which names exactly the app the credential is bound to.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..descriptor import AppDescriptor, app_reference, parse_binding
from ..descriptor.model_auth import ApiKeyAuth, Auth, CookieAuth
from ..errors import AaiError, AuthRequiredError
from .credentials import Credential


def login_command(reference: str) -> str:
    return f"aai-gateway auth login {shlex.quote(reference)}"


def set_command(reference: str) -> str:
    return f"aai-gateway auth set {shlex.quote(reference)}"


def auth_command(reference: str, auth_type: str) -> str:
    """The command that stores the credential of the app named by `reference`: its binding's
    reference (a web app's origin, `file:/…`, `bundled:<id>`), which names exactly the app the
    credential is bound to, whatever other apps claim the same id."""
    return login_command(reference) if auth_type == "oauth2" else set_command(reference)


@dataclass(frozen=True)
class AuthContext:
    """What an AUTH_REQUIRED / AUTH_EXPIRED error says about the app and how to fix it."""

    app_id: str
    app_name: str
    auth_type: str
    command: str
    obtain_url: str | None = None
    instructions: dict[str, Any] | None = None
    locale: str | None = None

    @classmethod
    def for_app(cls, app: AppDescriptor, auth: Auth, locale: str | None = None) -> AuthContext:
        instructions = auth.instructions
        help_url = instructions.help_url if instructions is not None else None
        obtain_url: str | None
        if isinstance(auth, ApiKeyAuth):
            obtain_url = auth.obtain_url or help_url
        elif isinstance(auth, CookieAuth):
            obtain_url = auth.login_url
        else:
            obtain_url = help_url
        return cls(
            app_id=app.id,
            app_name=app.names.lookup(locale),
            auth_type=auth.declared_type if isinstance(auth, ApiKeyAuth) else auth.type,
            command=auth_command(app_reference(app.binding, app.id), auth.type),
            obtain_url=obtain_url,
            instructions=instructions.model_dump(exclude_none=True) if instructions is not None else None,
            locale=locale,
        )

    @classmethod
    def for_mcp_server(cls, app: AppDescriptor, locale: str | None = None) -> AuthContext:
        """An MCP server that signs in with the MCP authorization flow (OAuth 2)."""
        reference = app_reference(app.binding, app.id)
        return cls(app.id, app.names.lookup(locale), "oauth2", login_command(reference), locale=locale)

    @classmethod
    def for_credential(cls, credential: Credential, auth_type: str) -> AuthContext:
        """A plain context when a flow is built without one (the app id is all it knows)."""
        try:
            reference = app_reference(parse_binding(credential.binding), credential.app_id)
        except AaiError:
            reference = credential.app_id
        return cls(credential.app_id, credential.app_id, auth_type, auth_command(reference, auth_type))

    def error(
        self,
        reason: str,
        *,
        expired: bool = False,
        invalid: bool = False,
        command: str | None = None,
        **data: Any,
    ) -> AuthRequiredError:
        """AUTH_REQUIRED; AUTH_EXPIRED when `expired`, AUTH_INVALID when `invalid` (a stored
        credential that cannot be used as it is)."""
        return AuthRequiredError(
            self.app_id,
            self.app_name,
            self.auth_type,
            reason=reason,
            command=command or self.command,
            obtain_url=self.obtain_url,
            instructions=self.instructions,
            locale=self.locale,
            expired=expired,
            invalid=invalid,
            **data,
        )
