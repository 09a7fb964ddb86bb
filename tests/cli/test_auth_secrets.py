"""`aai-gateway auth set APP --secret NAME`: a named secret of an MCP app, read from stdin into a
real (private) keyring, listed by name only, forgotten by `auth logout`."""

from __future__ import annotations

import json
from pathlib import Path

from aai_gateway.auth.credentials import AuthorizationServer, CredentialStore, OAuthTokens
from aai_gateway.auth.secrets import KeyringSecretStore
from aai_gateway.descriptor import Source, load_text
from tests.builders import c_descriptor, write_json
from tests.cli.processes import run_cli, user_env
from tests.keyring_session import PrivateKeyring

VALUE = "tok-EXAMPLE-31415926535"


def mcp_app(apps: Path, app_id: str = "srv") -> Path:
    return write_json(
        apps / app_id / "aai.json",
        {
            "schemaVersion": "1.0",
            "version": "1.0.0",
            "app": {
                "id": app_id,
                "name": {"en": "Server"},
                "defaultLang": "en",
                "description": "An MCP server",
            },
            "execution": {
                "type": "mcp",
                "command": "mcp-server",
                "env": {"TOKEN": {"secret": "TOKEN"}, "REGION": "eu", "KEY": {"secret": "API_KEY"}},
            },
        },
    )


def stored(keyring: PrivateKeyring) -> dict[tuple[str, str], dict[str, str]]:
    store = CredentialStore(KeyringSecretStore(backend=keyring.backend()))
    return {(c.binding, c.app_id): c.secrets for c in store.stored()}


def test_a_named_secret_is_read_from_stdin_stored_bound_to_the_file_listed_by_name_and_forgotten(
    private_keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    descriptor = mcp_app(apps)
    env = user_env(tmp_path / "home", private_keyring)
    where = ("--no-default-paths", "--path", str(apps))

    done = run_cli(env, "auth", "set", "srv", "--secret", "TOKEN", *where, stdin=VALUE + "\n")

    assert done.code == 0, done.err
    assert "Saved the secret TOKEN for Server (srv) in the OS keyring" in done.out
    assert VALUE not in done.out + done.err
    assert stored(private_keyring)[(f"file:{descriptor}", "srv")] == {"TOKEN": VALUE}

    status = run_cli(env, "auth", "status", "--json", *where)
    assert json.loads(status.out) == [
        {
            "app": "srv",
            "auth_type": "secrets",
            "source": f"file:{descriptor}",
            "state": "stored: TOKEN; not set: API_KEY",
        }
    ]
    assert VALUE not in status.out

    assert run_cli(env, "auth", "logout", "srv", *where).code == 0
    assert (f"file:{descriptor}", "srv") not in stored(private_keyring)


def test_a_secret_name_the_descriptor_does_not_reference_is_refused_with_the_names_it_does(
    private_keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    mcp_app(apps)
    env = user_env(tmp_path / "home", private_keyring)

    done = run_cli(
        env,
        "auth",
        "set",
        "srv",
        "--secret",
        "REGION",
        "--no-default-paths",
        "--path",
        str(apps),
        stdin=VALUE,
    )

    assert done.code == 2
    assert "srv does not reference a secret named 'REGION'" in done.err
    assert "references the secrets TOKEN, API_KEY" in done.err
    assert VALUE not in done.out + done.err


def test_secret_for_an_app_that_is_not_an_mcp_server_is_refused_with_the_command_it_takes(
    private_keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    write_json(apps / "adapter.json", c_descriptor("dev.test.adapter"))
    env = user_env(tmp_path / "home", private_keyring)

    done = run_cli(
        env,
        "auth",
        "set",
        "dev.test.adapter",
        "--secret",
        "TOKEN",
        "--no-default-paths",
        "--path",
        str(apps),
        stdin=VALUE,
    )

    assert done.code == 2
    assert "--secret is for apps run by an MCP server" in done.err
    assert "run `aai-gateway auth set" in done.err


def test_auth_set_without_secret_names_the_commands_for_each_secret_of_an_mcp_app(
    private_keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    descriptor = mcp_app(apps)
    env = user_env(tmp_path / "home", private_keyring)

    done = run_cli(env, "auth", "set", "srv", "--no-default-paths", "--path", str(apps), stdin=VALUE)

    assert done.code == 2
    assert f"`aai-gateway auth set file:{descriptor} --secret TOKEN`" in done.err
    assert f"`aai-gateway auth set file:{descriptor} --secret API_KEY`" in done.err


def test_a_secret_stored_for_a_signed_in_mcp_server_keeps_its_sign_in(
    private_keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    path = mcp_app(apps)
    app = load_text(path.read_text(), Source(kind="file", location=str(path)), "linux").descriptor
    assert app is not None
    store = CredentialStore(KeyringSecretStore(backend=private_keyring.backend()))
    server = AuthorizationServer(
        issuer="https://as.example",
        authorization_endpoint="https://as.example/authorize",
        token_endpoint="https://as.example/token",
        resource="https://mcp.example/mcp",
    )
    tokens = OAuthTokens(access_token="at-SIGNED-IN-0123456789", refresh_token="rt-SIGNED-IN-0123456789")
    signed_in = store.new(app, "oauth2").model_copy(
        update={"client_id": "client", "tokens": tokens, "authorization_server": server}
    )
    store.save(app, signed_in)
    env = user_env(tmp_path / "home", private_keyring)

    done = run_cli(
        env,
        "auth",
        "set",
        "srv",
        "--secret",
        "TOKEN",
        "--no-default-paths",
        "--path",
        str(apps),
        stdin=VALUE + "\n",
    )

    assert done.code == 0, done.err
    after = store.load(app)
    assert after is not None
    assert (after.kind, after.tokens, after.authorization_server) == ("oauth2", tokens, server)
    assert after.secrets == {"TOKEN": VALUE}
