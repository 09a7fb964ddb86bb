"""KeyringSecretStore and CredentialStore against a real gnome-keyring-daemon on a private DBus bus.

One daemon serves the whole session (the `private_keyring` fixture); every test uses a service
name of its own, so tests never see each other's secrets.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyring.errors import NoKeyringError

from aai_gateway.auth import KeyringSecretStore
from aai_gateway.auth.credentials import (
    AppToken,
    Credential,
    CredentialKind,
    CredentialStore,
    OAuthTokens,
    credential_key,
)
from aai_gateway.descriptor import Source
from aai_gateway.errors import ErrorCode, SecretStoreUnavailableError
from tests.auth.descriptors import NOTION_ID, load, web_app, web_document
from tests.keyring_session import PrivateKeyring, SharedKeyring

NOTION = "https://api.notion.com"
EVIL = "https://evil.example"

# Runs in a child process with the private keyring's environment and nothing else to go on:
# the default backend (keyring.get_keyring()) must find the private Secret Service by itself.
CHILD = """
import json, sys
import keyring
from aai_gateway.auth import KeyringSecretStore

store = KeyringSecretStore(service=sys.argv[1])
store.set("from-child", sys.stdin.read())
backend = type(keyring.get_keyring())
print(json.dumps({
    "backend": backend.__module__ + "." + backend.__name__,
    "from-parent": store.get("from-parent"),
    "keys": store.keys(),
}))
"""


@pytest.fixture
def service() -> str:
    return f"aai-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(private_keyring: PrivateKeyring, service: str) -> Iterator[KeyringSecretStore]:
    secrets = KeyringSecretStore(service=service, backend=private_keyring.backend())
    yield secrets
    for key in secrets.keys(""):  # leave the shared daemon as we found it
        secrets.delete(key)


def test_the_private_keyring_stores_reads_and_deletes_a_secret(store: KeyringSecretStore) -> None:
    store.set("token", "s3cret")
    assert store.get("token") == "s3cret"
    store.set("token", "rotated")
    assert store.get("token") == "rotated"
    store.delete("token")
    assert store.get("token") is None
    assert store.keys() == []


def test_a_new_store_instance_on_a_new_connection_reads_what_another_stored(
    private_keyring: PrivateKeyring, store: KeyringSecretStore, service: str
) -> None:
    store.set("credential/a/app", "value")
    again = KeyringSecretStore(service=service, backend=private_keyring.backend())
    assert again.get("credential/a/app") == "value"
    assert again.keys() == ["credential/a/app"]


def test_a_child_process_reads_the_parents_secret_and_the_parent_reads_the_childs(
    private_keyring: PrivateKeyring, store: KeyringSecretStore, service: str
) -> None:
    store.set("from-parent", "written by the parent ✓")
    child = subprocess.run(
        [sys.executable, "-c", CHILD, service],
        input="written by the child 🔑",  # through stdin: secrets never go on a command line
        capture_output=True,
        text=True,
        env=private_keyring.child_env(),
        timeout=60,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    answer = json.loads(child.stdout)
    assert answer == {
        "backend": "keyring.backends.SecretService.Keyring",
        "from-parent": "written by the parent ✓",
        "keys": ["from-child", "from-parent"],
    }
    assert store.get("from-child") == "written by the child 🔑"
    assert store.keys() == ["from-child", "from-parent"]


@pytest.mark.parametrize(
    "value",
    [
        "pässwörd ✓ 密码 🔑 ﷽",
        "  leading and trailing spaces\n\tnew lines and tabs\r\n",
        '{"json": ["quotes \\" and backslashes \\\\"]}',
        "x" * 65_536,
        "".join(chr(code) for code in range(0x20, 0x3000, 7)),
    ],
    ids=["unicode", "whitespace", "json", "64KiB", "code-points"],
)
def test_the_private_keyring_returns_unicode_and_long_values_unchanged(
    store: KeyringSecretStore, value: str
) -> None:
    store.set("value", value)
    assert store.get("value") == value


def test_the_private_keyring_lists_keys_by_prefix_and_forgets_deleted_ones(store: KeyringSecretStore) -> None:
    for key in (
        "credential/https://b.example/app",
        "consent/x",
        "credential/https://a.example/app",
        "密钥/1",
    ):
        store.set(key, f"value of {key}")
    store.set("consent/x", "again")  # overwriting lists the key once
    assert store.keys() == [
        "consent/x",
        "credential/https://a.example/app",
        "credential/https://b.example/app",
        "密钥/1",
    ]
    assert store.keys("credential/") == [
        "credential/https://a.example/app",
        "credential/https://b.example/app",
    ]
    store.delete("credential/https://a.example/app")
    assert store.keys("credential/") == ["credential/https://b.example/app"]
    assert store.get("credential/https://b.example/app") == "value of credential/https://b.example/app"


def test_deleting_a_missing_secret_from_the_private_keyring_does_nothing(store: KeyringSecretStore) -> None:
    store.delete("never-set")


# --------------------------------------------------------------------------- credentials


def credential_of_kind(kind: CredentialKind) -> Credential:
    app = web_app(NOTION, kind=kind)
    base = Credential(kind=kind, app_id=app.id, binding=str(app.binding))
    later = time.time() + 3600
    fields: dict[CredentialKind, dict[str, object]] = {
        "apiKey": {"api_key": "secret_notion_key_ü"},
        "appCredential": {
            "client_id": "cli_a1b2",
            "client_secret": "app secret 🔐",
            "app_token": AppToken(token="t-123", expires_at=later),
        },
        "cookie": {"cookies": {"session": "abc=def; path=/", "authToken": "τόκεν"}},
        "oauth2": {
            "client_id": "client-1",
            "client_secret": "client secret",
            "tokens": OAuthTokens(
                access_token="access", refresh_token="refresh", expires_at=later, scope="read write"
            ),
        },
    }
    return base.model_copy(update=fields[kind])


@pytest.mark.parametrize("kind", ["apiKey", "appCredential", "cookie", "oauth2"])
def test_a_credential_of_every_kind_round_trips_through_the_private_keyring(
    store: KeyringSecretStore, kind: CredentialKind
) -> None:
    credentials = CredentialStore(store)
    app = web_app(NOTION, kind=kind)
    saved = credential_of_kind(kind)
    credentials.save(app, saved)

    loaded = credentials.load(app)
    assert loaded is not None
    assert loaded.updated_at > 0
    assert loaded.model_copy(update={"updated_at": 0.0}) == saved
    assert credentials.stored() == [loaded]
    assert store.keys() == [f"credential/{NOTION}/{NOTION_ID}"]

    assert credentials.delete(app) is True
    assert credentials.load(app) is None
    assert credentials.stored() == []


def test_a_credential_saved_for_notions_origin_is_not_given_to_the_same_app_id_from_another_origin(
    store: KeyringSecretStore,
) -> None:
    credentials = CredentialStore(store)
    notion = web_app(NOTION)
    credentials.save(notion, credentials.new(notion, "apiKey").model_copy(update={"api_key": "notion-token"}))

    evil = web_app(EVIL)
    assert evil.id == notion.id == NOTION_ID
    assert credential_key(evil) != credential_key(notion)
    assert credentials.load(evil) is None
    with pytest.raises(ValueError, match="only for the app and source"):
        credentials.save(evil, credential_of_kind("apiKey"))  # Notion's credential, evil's descriptor

    for source in (
        Source(kind="bundled", location="notion.json"),
        Source(kind="file", location="/tmp/aai.json"),
    ):
        same_id = load(web_document(NOTION), source)  # the same document, from elsewhere
        assert same_id.id == NOTION_ID
        assert credentials.load(same_id) is None

    loaded = credentials.load(notion)
    assert loaded is not None and loaded.api_key == "notion-token"


def test_a_record_copied_under_another_origins_key_is_still_refused(store: KeyringSecretStore) -> None:
    """Even if the keyring holds Notion's record under evil's key, the binding inside it does not match."""
    credentials = CredentialStore(store)
    notion, evil = web_app(NOTION), web_app(EVIL)
    credentials.save(notion, credential_of_kind("apiKey"))
    raw = store.get(credential_key(notion))
    assert raw is not None
    store.set(credential_key(evil), raw)
    assert credentials.load(evil) is None


def test_the_secret_lives_only_in_the_private_keyring_not_in_the_test_process_default_keyring(
    private_keyring: PrivateKeyring, store: KeyringSecretStore, service: str
) -> None:
    credentials = CredentialStore(store)
    notion = web_app(NOTION)
    credentials.save(notion, credential_of_kind("apiKey"))
    key = credential_key(notion)

    assert isinstance(keyring.get_keyring(), fail.Keyring)
    with pytest.raises(NoKeyringError):
        keyring.get_password(service, key)
    with pytest.raises(SecretStoreUnavailableError):
        KeyringSecretStore(service=service)  # what code without an explicit backend would get
    assert os.environ.get("DBUS_SESSION_BUS_ADDRESS") != private_keyring.address  # not this process's bus

    assert KeyringSecretStore(service=service, backend=private_keyring.backend()).get(key) is not None
    keyring_files = sorted(path.name for path in private_keyring.keyring_dir.iterdir())
    assert "login.keyring" in keyring_files  # gnome-keyring wrote into the private temporary HOME


# --------------------------------------------------------------------------- a keyring that stops


@pytest.fixture
def stopped_keyring() -> Iterator[PrivateKeyring]:
    """A private bus whose Secret Service daemon ran, and was then killed: as a desktop session's
    keyring that crashed. The bus still answers; nobody provides org.freedesktop.secrets."""
    with PrivateKeyring() as private:
        daemon = private.daemon_pid
        assert daemon is not None
        yield private
        if private.running:  # the test kills it when it is ready to
            os.kill(daemon, signal.SIGKILL)


def kill_the_daemon(private: PrivateKeyring) -> None:
    daemon = private.daemon_pid
    assert daemon is not None
    os.kill(daemon, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while private.running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not private.running, "the keyring daemon did not stop"


def files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_keyring_that_stops_while_in_use_is_reported_as_no_usable_keyring_with_how_to_get_one(
    stopped_keyring: PrivateKeyring, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where a plaintext fallback would write (this process's home, XDG folders, working folder).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    store = KeyringSecretStore(service="aai-test-stopping", backend=stopped_keyring.backend())
    store.set("credential/a", "stored-before-the-crash")
    kill_the_daemon(stopped_keyring)

    for attempt in (
        lambda: store.get("credential/a"),
        lambda: store.set("credential/b", "typed-after-the-crash"),
        store.keys,
    ):
        with pytest.raises(SecretStoreUnavailableError) as caught:
            attempt()
        error = caught.value
        assert error.code is ErrorCode.AUTH_REQUIRED
        assert str(error).startswith("no usable OS keyring (")
        assert "install and unlock a Secret Service" in str(error)
        said = str(error) + json.dumps(error.data)
        assert "stored-before-the-crash" not in said and "typed-after-the-crash" not in said
    assert stopped_keyring.root is not None
    for root in (stopped_keyring.root, tmp_path):  # no plaintext fallback
        assert files_holding(root, "typed-after-the-crash") == []


@pytest.mark.parametrize(
    "backend_named",
    [False, True],
    ids=["keyring finds no Secret Service", "PYTHON_KEYRING_BACKEND names the Secret Service"],
)
def test_auth_set_without_a_running_secret_service_says_how_to_get_one_and_stores_nothing(
    stopped_keyring: PrivateKeyring, tmp_path: Path, backend_named: bool
) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "notion.json").write_text(json.dumps(web_document(NOTION)), encoding="utf-8")
    env = stopped_keyring.child_env()
    if not backend_named:
        del env["PYTHON_KEYRING_BACKEND"]
    kill_the_daemon(stopped_keyring)

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "aai_gateway",
            "auth",
            "set",
            NOTION_ID,
            "--no-default-paths",
            "--path",
            str(apps),
        ],
        input="secret-typed-by-the-user\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: no usable OS keyring (")
    assert "install and unlock a Secret Service" in done.stderr
    assert "secret-typed-by-the-user" not in done.stdout + done.stderr
    assert stopped_keyring.root is not None
    assert files_holding(stopped_keyring.root, "secret-typed-by-the-user") == []
    assert files_holding(tmp_path, "secret-typed-by-the-user") == []


def test_a_shared_keyring_whose_daemon_died_is_replaced_for_the_next_test_with_the_reason_kept() -> None:
    shared = SharedKeyring()
    try:
        first = shared.get()
        assert shared.get() is first  # alive: the same one
        kill_the_daemon(first)
        second = shared.get()
        assert second is not first and second.running and not first.running
        assert first.root is None  # the dead one was stopped and its files removed
        assert len(shared.replaced) == 1 and "gnome-keyring-daemon" in shared.replaced[0]
        assert "killed by signal 9" in shared.replaced[0]
        store = KeyringSecretStore(service="aai-test-replaced", backend=second.backend())
        store.set("k", "v")
        assert store.get("k") == "v"
    finally:
        shared.stop()
    assert shared.current is None
