"""`AuthProvider.mcp_secrets`: the keyring secrets an `mcp` app's channel refers to, read from the
credential bound to the app, only those names; a missing one is AUTH_REQUIRED with the command
that stores it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.auth.credentials import Credential, CredentialStore
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.descriptor import AppDescriptor, app_reference
from aai_gateway.errors import AaiError, ErrorCode
from tests.executors.mcp_support import mcp_document, write_app

pytestmark = pytest.mark.anyio

ENV = {
    "GITHUB_TOKEN": {"secret": "github-token"},
    "OTHER": {"secret": "other.key"},
    "FROM_ENV": {"env": "HOME"},
    "PLAIN": "x",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def provider_with(app: AppDescriptor, **stored: Any) -> AuthProvider:
    store = CredentialStore(MemorySecretStore())
    if stored:
        store.save(app, Credential(kind="secrets", app_id=app.id, binding=str(app.binding), **stored))
    return AuthProvider(store, environ={})


def mcp_app(folder: Path, app_id: str = "dev.test.keyed", **document: Any) -> AppDescriptor:
    return write_app(folder, mcp_document(app_id=app_id, **document))


async def test_the_secrets_the_channel_names_are_read_from_the_apps_credential_and_only_those(
    tmp_path: Path,
) -> None:
    app = mcp_app(tmp_path, env=ENV)
    provider = provider_with(
        app,
        secrets={"github-token": "ghp_0123456789abcdef", "other.key": "other-value-123", "unused": "u" * 10},
    )

    secrets = await provider.mcp_secrets(app, app.tools[0])

    assert secrets == {"github-token": "ghp_0123456789abcdef", "other.key": "other-value-123"}


async def test_an_app_without_secret_references_needs_no_credential(tmp_path: Path) -> None:
    app = mcp_app(tmp_path, env={"PLAIN": "x"})

    assert await provider_with(app).mcp_secrets(app, app.tools[0]) == {}


async def test_missing_secrets_are_auth_required_listing_them_with_the_command_for_the_first(
    tmp_path: Path,
) -> None:
    app = mcp_app(tmp_path, env=ENV)
    provider = provider_with(app, secrets={"other.key": "other-value-123"})

    with pytest.raises(AaiError) as caught:
        await provider.mcp_secrets(app, app.tools[0])

    error = caught.value
    command = f"aai-gateway auth set {app_reference(app.binding, app.id)} --secret github-token"
    assert error.code is ErrorCode.AUTH_REQUIRED
    assert error.data["command"] == command
    assert error.data["secrets"] == ["github-token"]
    assert error.message == (
        "Upstream (dev.test.keyed) needs secret credentials: the secret github-token is not stored in "
        f"the OS keyring. Ask the user to run `{command}` in a terminal, then retry"
    )


async def test_a_secret_stored_for_another_app_with_the_same_id_is_never_used(tmp_path: Path) -> None:
    app = mcp_app(tmp_path / "one", env=ENV)
    impostor = mcp_app(tmp_path / "two", env=ENV)  # same id, another file: another binding
    provider = provider_with(app, secrets={"github-token": "ghp_0123456789abcdef", "other.key": "v" * 10})

    with pytest.raises(AaiError) as caught:
        await provider.mcp_secrets(impostor, impostor.tools[0])

    assert caught.value.data["secrets"] == ["github-token", "other.key"]
    assert "ghp_0123456789abcdef" not in caught.value.message


async def test_a_secret_too_short_to_scrub_is_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = mcp_app(tmp_path, env={"T": {"secret": "short"}})
    provider = provider_with(app, secrets={"short": "abc"})
    caplog.set_level(logging.WARNING, logger="aai_gateway.auth.provider")

    await provider.mcp_secrets(app, app.tools[0])
    await provider.mcp_secrets(app, app.tools[0])

    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "the secret short of dev.test.keyed is shorter than" in warnings[0]
    assert "abc" not in warnings[0]
