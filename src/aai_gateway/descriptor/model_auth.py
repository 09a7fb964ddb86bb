"""The base of the canonical descriptor's models (`model.py`), its authentication schemes (what
an HTTP channel says about signing in), and its references to secrets (where an MCP server's
environment variable or header is found)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from .shown_text import OneLine, ShownText


class CanonicalModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; what `cached_property`s computed of the original is not carried over (pydantic
        copies it with the fields, and `update` may have changed what it was computed from)."""
        copied = super().model_copy(update=update, deep=deep)
        for name in _cached_properties(type(self)):
            copied.__dict__.pop(name, None)
        return copied


@cache
def _cached_properties(model: type) -> tuple[str, ...]:
    return tuple(
        name
        for klass in model.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, cached_property)
    )


# --------------------------------------------------------------------------- auth


class Instructions(CanonicalModel):
    """What the guide and the credential page tell of signing in, cleaned (`shown_text`): on one
    line but for the detailed steps, whose lines the page keeps (the guide joins them)."""

    short: OneLine
    detailed: ShownText | None = None
    help_url: OneLine | None = None
    screenshot_url: OneLine | None = None


class OAuth2Auth(CanonicalModel):
    type: Literal["oauth2"] = "oauth2"
    authorization_endpoint: str
    token_endpoint: str
    scopes: tuple[OneLine, ...] = ()
    pkce_method: Literal["S256"] | None = None
    token_placement: Literal["header", "query"] = "header"  # noqa: S105 (a location, not a secret)
    token_prefix: str = "Bearer"  # noqa: S105
    instructions: Instructions | None = None


class ApiKeyAuth(CanonicalModel):
    type: Literal["apiKey"] = "apiKey"
    location: Literal["header", "query"] = "header"
    name: str = "Authorization"
    prefix: str | None = None
    obtain_url: OneLine | None = None
    instructions: Instructions | None = None
    env_var: OneLine | None = None
    declared_type: str = "apiKey"


class AppCredentialAuth(CanonicalModel):
    type: Literal["appCredential"] = "appCredential"
    token_endpoint: str
    token_type: Literal["tenantAccessToken", "appAccessToken", "userAccessToken"]
    expires_in: int = 7200
    instructions: Instructions | None = None


class CookieAuth(CanonicalModel):
    type: Literal["cookie"] = "cookie"
    login_url: OneLine
    required_cookies: tuple[OneLine, ...]
    domain: OneLine
    instructions: Instructions | None = None


Auth = Annotated[OAuth2Auth | ApiKeyAuth | AppCredentialAuth | CookieAuth, Field(discriminator="type")]


# --------------------------------------------------------------------------- references to secrets


class SecretReference(CanonicalModel):
    """A value kept in the OS keyring, under this descriptor's binding, by the name `name`."""

    kind: Literal["secret"] = "secret"
    name: str


class EnvironmentReference(CanonicalModel):
    """A value read from the variable `name` of the gateway's own environment."""

    kind: Literal["env"] = "env"
    name: str


Reference = Annotated[SecretReference | EnvironmentReference, Field(discriminator="kind")]
McpValue = str | Reference
"""An MCP server's environment variable or header: a literal string, or where to find the value."""
