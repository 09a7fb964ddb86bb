"""Secret stores without a keyring daemon: the memory store, and KeyringSecretStore over fake backends.

`DictKeyring` behaves like a real keyring backend (deleting a missing password raises
PasswordDeleteError), so the index and error handling of KeyringSecretStore are tested here fast;
tests/auth/test_keyring_real.py runs the same store against a real gnome-keyring-daemon.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.errors import KeyringLocked, PasswordDeleteError
from secretstorage.exceptions import ItemNotFoundException

from aai_gateway.auth import KeyringSecretStore, MemorySecretStore, SecretStore
from aai_gateway.auth.secrets import INDEX_KEY, SERVICE
from aai_gateway.errors import ErrorCode, SecretStoreUnavailableError


class DictKeyring(KeyringBackend):
    """An in-memory keyring backend that fails the way real ones do."""

    priority = 1

    def __init__(self, *, pause: float = 0.0) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.values: dict[tuple[str, str], str] = {}
        self.pause = pause  # widens race windows for the thread tests
        self.locked = False
        self.failure: Exception | None = None  # raised by every read and write, as a backend's own
        self.after_get: Callable[[str, str], None] | None = None  # runs after the read, before returning

    def get_password(self, service: str, username: str) -> str | None:
        if self.locked:
            raise KeyringLocked("Failed to unlock the collection!")
        if self.failure is not None:
            raise self.failure
        time.sleep(self.pause)
        value = self.values.get((service, username))
        if self.after_get is not None:
            self.after_get(service, username)
        return value

    def set_password(self, service: str, username: str, password: str) -> None:
        if self.failure is not None:
            raise self.failure
        time.sleep(self.pause)
        self.values[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.values.pop((service, username), None) is None:
            raise PasswordDeleteError("No such password!")


class PlaintextKeyring(DictKeyring):
    """Named like keyrings.alt's file backend, which keeps passwords readable on disk."""


PlaintextKeyring.__module__ = "keyrings.alt.file"


def index_of(backend: DictKeyring, service: str = SERVICE) -> list[str]:
    raw = backend.values.get((service, INDEX_KEY))
    return list(json.loads(raw)) if raw else []


@pytest.fixture
def backend() -> DictKeyring:
    return DictKeyring()


@pytest.fixture
def store(backend: DictKeyring) -> KeyringSecretStore:
    return KeyringSecretStore(backend=backend)


# --------------------------------------------------------------------------- MemorySecretStore


def test_memory_store_returns_none_for_a_key_never_set() -> None:
    assert MemorySecretStore().get("credential/x") is None


def test_memory_store_returns_the_last_value_set_for_a_key() -> None:
    secrets: SecretStore = MemorySecretStore()
    secrets.set("token", "first")
    secrets.set("token", "second")
    assert secrets.get("token") == "second"
    assert secrets.keys() == ["token"]


def test_memory_store_lists_keys_sorted_and_filtered_by_prefix() -> None:
    secrets = MemorySecretStore()
    for key in ("credential/b/app", "consent/x", "credential/a/app"):
        secrets.set(key, "v")
    assert secrets.keys("credential/") == ["credential/a/app", "credential/b/app"]
    assert secrets.keys() == ["consent/x", "credential/a/app", "credential/b/app"]
    assert secrets.keys("nothing/") == []


def test_memory_store_delete_forgets_the_key_and_is_idempotent() -> None:
    secrets = MemorySecretStore()
    secrets.set("token", "value")
    secrets.delete("token")
    secrets.delete("token")
    secrets.delete("never-set")
    assert secrets.get("token") is None
    assert secrets.keys() == []


def test_memory_store_keeps_every_key_set_concurrently_from_threads() -> None:
    secrets = MemorySecretStore()
    expected = {f"k/{thread}/{n}" for thread in range(8) for n in range(200)}

    def writer(thread: int) -> None:
        for n in range(200):
            secrets.set(f"k/{thread}/{n}", f"{thread}:{n}")

    run_threads(writer, 8)
    assert secrets.keys("k/") == sorted(expected)


# --------------------------------------------------------------------------- refusing insecure backends


def test_keyring_store_refuses_the_fail_backend_and_says_how_to_get_a_keyring() -> None:
    with pytest.raises(SecretStoreUnavailableError) as caught:
        KeyringSecretStore(backend=fail.Keyring())  # type: ignore[no-untyped-call]
    message = str(caught.value)
    assert "keyring.backends.fail.Keyring" in message
    assert "apt install gnome-keyring" in message
    assert "KeePassXC" in message
    assert caught.value.code is ErrorCode.AUTH_REQUIRED


def test_keyring_store_refuses_the_null_backend_that_forgets_everything() -> None:
    with pytest.raises(SecretStoreUnavailableError, match=r"keyring\.backends\.null\.Keyring"):
        KeyringSecretStore(backend=null.Keyring())  # type: ignore[no-untyped-call]


def test_keyring_store_refuses_a_plaintext_file_backend() -> None:
    with pytest.raises(SecretStoreUnavailableError) as caught:
        KeyringSecretStore(backend=PlaintextKeyring())
    assert "keyrings.alt.file.PlaintextKeyring does not store secrets securely" in str(caught.value)
    assert "apt install gnome-keyring" in str(caught.value)


def test_the_test_session_default_keyring_is_the_fail_backend_so_no_real_keyring_is_reached() -> None:
    assert isinstance(keyring.get_keyring(), fail.Keyring)
    with pytest.raises(SecretStoreUnavailableError):
        KeyringSecretStore()


def test_keyring_store_reports_a_locked_keyring_as_unavailable_with_the_reason(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    backend.locked = True
    with pytest.raises(SecretStoreUnavailableError, match="KeyringLocked: Failed to unlock") as caught:
        store.get("token")
    assert caught.value.data["reason"].startswith("KeyringLocked")


def test_a_backend_s_own_failure_such_as_a_collection_removed_while_in_use_is_unavailable_not_a_crash(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    """SecretService passes secretstorage's D-Bus errors through (its default collection removed
    while the gateway runs): the store is unavailable for that call, as when it is locked."""
    backend.failure = ItemNotFoundException("Item does not exist!")
    with pytest.raises(SecretStoreUnavailableError, match="ItemNotFoundException: Item does not exist"):
        store.get("consent:agent")


def test_a_backend_failure_that_quotes_the_secret_being_stored_never_repeats_it(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    backend.failure = ValueError("cannot store 'sk-live-0123456789abcdef'")
    with pytest.raises(SecretStoreUnavailableError) as caught:
        store.set("token", "sk-live-0123456789abcdef")
    assert "sk-live-0123456789abcdef" not in f"{caught.value.message} {caught.value.data}"
    assert caught.value.__cause__ is None and "ValueError" in caught.value.data["reason"]


# --------------------------------------------------------------------------- the index


def test_keyring_store_reads_back_what_it_stored_under_its_service(backend: DictKeyring) -> None:
    store = KeyringSecretStore(service="aai-test", backend=backend)
    store.set("credential/https://api.notion.com/com.notion.api", "secret")
    assert store.get("credential/https://api.notion.com/com.notion.api") == "secret"
    assert backend.values[("aai-test", "credential/https://api.notion.com/com.notion.api")] == "secret"
    assert store.get("credential/other") is None


def test_keyring_store_lists_set_keys_through_its_index(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    store.set("credential/b/app", "1")
    store.set("credential/a/app", "2")
    store.set("consent/a/app", "3")
    store.set("credential/a/app", "overwritten")  # no duplicate entry
    assert store.keys() == ["consent/a/app", "credential/a/app", "credential/b/app"]
    assert store.keys("credential/") == ["credential/a/app", "credential/b/app"]
    assert index_of(backend) == ["consent/a/app", "credential/a/app", "credential/b/app"]


def test_keyring_store_delete_removes_the_value_and_its_index_entry(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    store.set("credential/a/app", "1")
    store.set("credential/b/app", "2")
    store.delete("credential/a/app")
    assert store.get("credential/a/app") is None
    assert store.keys() == ["credential/b/app"]
    assert index_of(backend) == ["credential/b/app"]


def test_keyring_stores_of_different_services_do_not_see_each_others_keys(backend: DictKeyring) -> None:
    first = KeyringSecretStore(service="aai-one", backend=backend)
    second = KeyringSecretStore(service="aai-two", backend=backend)
    first.set("token", "one")
    assert second.get("token") is None
    assert second.keys() == []


def test_a_new_keyring_store_on_the_same_backend_sees_the_stored_keys(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    store.set("credential/a/app", "1")
    again = KeyringSecretStore(backend=backend)
    assert again.keys() == ["credential/a/app"]
    assert again.get("credential/a/app") == "1"


def test_keyring_store_delete_of_a_key_never_set_does_nothing(store: KeyringSecretStore) -> None:
    store.delete("credential/never/set")
    assert store.keys() == []


def test_keyring_store_delete_twice_is_idempotent(store: KeyringSecretStore) -> None:
    store.set("token", "value")
    store.delete("token")
    store.delete("token")
    assert store.get("token") is None


def test_keyring_store_delete_drops_an_index_entry_whose_value_was_removed_elsewhere(
    backend: DictKeyring, store: KeyringSecretStore
) -> None:
    store.set("token", "value")
    del backend.values[(SERVICE, "token")]  # e.g. the user removed it in the keyring manager
    store.delete("token")
    assert store.keys() == []


def test_keyring_store_treats_an_unreadable_index_as_empty(backend: DictKeyring) -> None:
    backend.values[(SERVICE, INDEX_KEY)] = "{not json"
    store = KeyringSecretStore(backend=backend)
    assert store.keys() == []
    store.set("token", "value")
    assert store.keys() == ["token"]


@pytest.mark.parametrize("index", ["5", "null"])
def test_keyring_store_treats_an_index_that_is_not_a_list_as_empty(backend: DictKeyring, index: str) -> None:
    backend.values[(SERVICE, INDEX_KEY)] = index
    assert KeyringSecretStore(backend=backend).keys() == []


# --------------------------------------------------------------------------- threads


def run_threads(target: Callable[[int], None], count: int) -> None:
    errors: list[BaseException] = []

    def guarded(number: int) -> None:
        try:
            target(number)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(number,)) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors, errors


def test_concurrent_sets_from_threads_keep_every_key_in_the_index() -> None:
    backend = DictKeyring(pause=0.0002)  # a slow keyring: read-modify-write of the index interleaves
    store = KeyringSecretStore(backend=backend)
    expected = [f"credential/{thread}/{n}" for thread in range(8) for n in range(15)]

    def writer(thread: int) -> None:
        for n in range(15):
            store.set(f"credential/{thread}/{n}", f"value {thread} {n}")

    run_threads(writer, 8)
    assert store.keys() == sorted(expected)
    assert all(store.get(key) == f"value {key.split('/')[1]} {key.split('/')[2]}" for key in expected)


def test_concurrent_sets_and_deletes_from_threads_leave_exactly_the_kept_keys_indexed() -> None:
    backend = DictKeyring(pause=0.0002)
    store = KeyringSecretStore(backend=backend)

    def worker(thread: int) -> None:
        for n in range(10):
            store.set(f"k/{thread}/{n}", "v")
        for n in range(0, 10, 2):
            store.delete(f"k/{thread}/{n}")

    run_threads(worker, 6)
    assert store.keys() == sorted(f"k/{thread}/{n}" for thread in range(6) for n in range(1, 10, 2))


@pytest.mark.xfail(
    strict=True,
    reason="known limit: two processes writing the index at the same instant can still lose an index entry "
    "(never a secret); verify-after-write retries narrow the window but a forced interleaving defeats it",
)
def test_two_store_instances_writing_at_once_keep_both_keys_in_the_index() -> None:
    backend = DictKeyring()
    first = KeyringSecretStore(backend=backend)
    second = KeyringSecretStore(backend=backend)
    interleaved = False

    def second_writes_while_first_reads_the_index(service: str, username: str) -> None:
        nonlocal interleaved
        if username == INDEX_KEY and not interleaved:
            interleaved = True
            second.set("credential/second/app", "2")

    backend.after_get = second_writes_while_first_reads_the_index
    first.set("credential/first/app", "1")
    assert first.keys() == ["credential/first/app", "credential/second/app"]
