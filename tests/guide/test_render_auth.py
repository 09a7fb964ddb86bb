"""The Authentication section: one text per kind of credential, and the consent notice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor.model import (
    AppleEventsChannel,
    Channel,
    HttpChannel,
    ScriptChannel,
    StdioChannel,
)
from aai_gateway.descriptor.model_auth import (
    ApiKeyAuth,
    AppCredentialAuth,
    CookieAuth,
    Instructions,
    OAuth2Auth,
)
from aai_gateway.descriptor.platforms import ExecutionType
from aai_gateway.guide import render_guide

from .helpers import (
    all_paths,
    load,
    make_app,
    make_tool,
    path_id,
    section,
)

# --------------------------------------------------------------------------- authentication

WEB = HttpChannel(base_url="https://api.example.com")


def auth_section(channel: Channel, platform: Any = "web") -> str:
    return section(
        render_guide(make_app(make_tool(channel=channel), platform=platform)),
        "## Authentication",
    )


def test_oauth2_shows_its_scopes_and_that_the_gateway_signs_in_through_the_browser() -> None:
    auth = OAuth2Auth(
        authorization_endpoint="https://x.example.com/authorize",
        token_endpoint="https://x.example.com/token",
        scopes=("read", "write"),
    )
    text = auth_section(WEB.model_copy(update={"auth": auth}))
    assert "OAuth 2.0 (scopes: read, write)." in text
    assert "The gateway signs the user in through the browser when first needed" in text
    assert "never ask the user for a password or token" in text


def test_api_key_shows_where_the_key_goes_where_to_get_it_and_the_instructions() -> None:
    auth = ApiKeyAuth(
        location="header",
        name="X-Auth-Token",
        obtain_url="https://x.example.com/settings/tokens",
        instructions=Instructions(
            short="Get your API key from settings",
            detailed="Open Settings, then Tokens, then New token",
            help_url="https://x.example.com/docs/api",
        ),
    )
    text = auth_section(WEB.model_copy(update={"auth": auth}))
    assert "API key, sent in the `X-Auth-Token` header." in text
    assert "The user gets one at https://x.example.com/settings/tokens." in text
    assert "Get your API key from settings. Open Settings, then Tokens, then New token." in text
    assert "Help: https://x.example.com/docs/api" in text
    assert "OS keyring" in text
    assert "Never ask for secrets in the chat." in text


def test_an_api_key_in_the_query_string_is_described_as_a_query_parameter() -> None:
    auth = ApiKeyAuth(location="query", name="key", env_var="X_API_KEY")
    text = auth_section(WEB.model_copy(update={"auth": auth}))
    assert "API key, sent in the `key` query parameter." in text
    assert "(or reads it from $X_API_KEY)" in text


def test_app_credential_shows_the_token_it_is_exchanged_for_and_the_instructions() -> None:
    auth = AppCredentialAuth(
        token_endpoint="https://x.example.com/token",
        token_type="tenantAccessToken",
        instructions=Instructions(short="Get App ID and Secret from developer console"),
    )
    text = auth_section(WEB.model_copy(update={"auth": auth}))
    assert "App credential: an app ID and secret, exchanged for a tenant access token" in text
    assert "(valid about 120 min, renewed by the gateway)" in text
    assert "Get App ID and Secret from developer console." in text
    assert "The gateway asks the user for the app ID and secret when first needed" in text


def test_cookie_auth_shows_the_login_page_and_the_cookies_it_needs() -> None:
    auth = CookieAuth(
        login_url="https://x.example.com/login",
        required_cookies=("session", "authToken"),
        domain=".example.com",
        instructions=Instructions(short="Login in browser, then extract cookies from DevTools"),
    )
    text = auth_section(WEB.model_copy(update={"auth": auth}))
    assert "Browser session cookies (session, authToken) for .example.com" in text
    assert "after logging in at https://x.example.com/login." in text
    assert "Login in browser, then extract cookies from DevTools." in text


@pytest.mark.parametrize(
    "channel", [AppleEventsChannel(bundle_id="com.x.App"), ScriptChannel(type=ExecutionType.JXA)]
)
def test_mac_automation_mentions_os_level_consent(channel: Channel) -> None:
    assert "Uses OS-level consent (TCC)" in auth_section(channel, "macos")


def test_apps_without_credentials_say_no_sign_in_is_needed() -> None:
    assert "No sign-in needed (local server)." in auth_section(
        HttpChannel(base_url="http://127.0.0.1:9"), "linux"
    )
    assert "No sign-in needed." in auth_section(WEB)
    assert "No sign-in needed; the app runs as the current user" in auth_section(
        StdioChannel(command="a"), "linux"
    )


@pytest.mark.parametrize("path", all_paths(), ids=path_id)
def test_every_guide_says_the_gateway_asks_for_consent_before_first_use(path: Path) -> None:
    auth = section(render_guide(load(path)), "## Authentication")
    assert "Before an operation runs for the first time, the gateway asks the user to allow it." in auth
