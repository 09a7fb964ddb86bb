"""Credentials per app, bound to where the app's descriptor came from (docs/architecture.md).

A descriptor fetched from `https://evil.example` that claims `com.notion.api` has a different
binding from the bundled Notion descriptor, so it can never read Notion's token. Records are
JSON in the secret store under `credential/<binding>/<app id>`.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..descriptor import AppDescriptor
from .secrets import SecretStore

PREFIX = "credential/"
CredentialKind = Literal["apiKey", "appCredential", "cookie", "oauth2", "secrets"]
"""`secrets`: the named secrets an `mcp` app's `env`/`headers` refer to (`{"secret": NAME}`)."""


def credential_key(app: AppDescriptor) -> str:
    return f"{PREFIX}{app.binding}/{app.id}"


class OAuthTokens(BaseModel):
    model_config = ConfigDict(extra="ignore")

    access_token: str
    token_type: str = "Bearer"  # noqa: S105 (a scheme name)
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() <= seconds


class AppToken(BaseModel):
    """A token exchanged for an app id + secret (appCredential), cached until it expires."""

    token: str
    expires_at: float

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at - time.time() <= seconds


class AuthorizationServer(BaseModel):
    """Where an MCP server's tokens come from, as its sign-in found it (protected-resource and
    authorization-server metadata): what a refresh needs without discovering it again."""

    model_config = ConfigDict(extra="ignore")

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    resource: str  # RFC 8707: the resource indicator sent with every authorization and token request
    scope: str | None = None


class Credential(BaseModel):
    """Everything stored for one app. Which fields are used depends on `kind`."""

    model_config = ConfigDict(extra="ignore")

    kind: CredentialKind
    app_id: str
    binding: str
    api_key: str | None = None
    client_id: str | None = None  # oauth2 client id, or appCredential App ID
    client_secret: str | None = None  # oauth2 client secret, or appCredential App Secret
    client_auth_method: str | None = None  # how the oauth2 client authenticates at the token endpoint
    cookies: dict[str, str] = {}
    secrets: dict[str, str] = {}  # by NAME, for `{"secret": NAME}` references of an mcp app
    tokens: OAuthTokens | None = None
    authorization_server: AuthorizationServer | None = None  # an mcp app's, found when signing in
    app_token: AppToken | None = None
    updated_at: float = 0.0


class CredentialStore:
    """Load, save and forget app credentials in a SecretStore. Blocking, like the store."""

    def __init__(self, secrets: SecretStore) -> None:
        self.secrets = secrets

    def load(self, app: AppDescriptor) -> Credential | None:
        raw = self.secrets.get(credential_key(app))
        if raw is None:
            return None
        try:
            credential = Credential.model_validate_json(raw)
        except ValidationError:
            return None  # unreadable record: treated as absent, replaced on the next save
        if credential.binding != str(app.binding) or credential.app_id != app.id:
            return None
        return credential

    def save(self, app: AppDescriptor, credential: Credential) -> None:
        if credential.binding != str(app.binding) or credential.app_id != app.id:
            raise ValueError("a credential is saved only for the app and source it belongs to")
        stamped = credential.model_copy(update={"updated_at": time.time()})
        self.secrets.set(credential_key(app), stamped.model_dump_json(exclude_none=True))

    def delete(self, app: AppDescriptor) -> bool:
        key = credential_key(app)
        existed = self.secrets.get(key) is not None
        self.secrets.delete(key)
        return existed

    def forget(self, credential: Credential) -> bool:
        """Delete a stored credential by what it says it belongs to (its descriptor may be gone)."""
        key = f"{PREFIX}{credential.binding}/{credential.app_id}"
        existed = self.secrets.get(key) is not None
        self.secrets.delete(key)
        return existed

    def stored(self) -> list[Credential]:
        found: list[Credential] = []
        for key in self.secrets.keys(PREFIX):
            raw = self.secrets.get(key)
            if raw is None:
                continue
            try:
                found.append(Credential.model_validate_json(raw))
            except ValidationError:
                continue
        return found

    def new(self, app: AppDescriptor, kind: CredentialKind) -> Credential:
        return Credential(kind=kind, app_id=app.id, binding=str(app.binding))
