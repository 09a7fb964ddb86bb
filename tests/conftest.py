"""Shared test configuration: Hypothesis profiles, and keeping tests away from the user's keyring.

Hypothesis profiles, chosen with the HYPOTHESIS_PROFILE variable:

- `dev` (default): a few hundred examples per property, so the whole suite stays fast.
- `ci`: 700 examples per property (3½ times dev's); failing examples are printed for
  reproduction. With 2,000 the suite took 12½ minutes on CI's two cores, over its 10-minute
  budget (the descriptor tests, mostly fuzzing, were 6 of its 24 worker-minutes); with 1,000,
  10 minutes 5 seconds; with 800, 9 min 48 s to 10 min 3 s once search read queries twice.
- `thorough`: tens of thousands per property, for soak runs.

No deadline in any profile: the first examples pay one-off import and schema-compile costs, and a
loaded CI machine must not turn that into a flaky failure.

Parallel: pyproject's addopts run the suite in pytest-xdist workers (`-n auto`), so no test may
share a file, a port or a daemon with another. Ports come from the OS (port 0); files live under
`tmp_path`; session fixtures (httpbin, `private_keyring`) start once per worker.

State: every test gets its own `XDG_STATE_HOME` (consent decisions kept without a keyring) and
`XDG_CACHE_HOME` (web descriptors, MCP tool snapshots). The terminal is 120 columns wide for every
test (`COLUMNS`), so the CLI's tables come out the same in any terminal and in any worker.

Keyring: for the whole session `PYTHON_KEYRING_BACKEND` names keyring's fail backend, so no test can
reach the developer's real keyring by accident (`KeyringSecretStore()` refuses it). A test that
wants a real keyring asks for the `private_keyring` fixture and passes `private_keyring.backend()`
(or `private_keyring.child_env()` to a child process): a private DBus bus with an unlocked GNOME
Keyring in a temporary HOME, see tests/keyring_session.py. The `keyring` fixture is the same, of
one test's own: what one test stores never helps another, and what it holds afterwards is what
that test stored.

OAuth: the `oauth_server` fixture is the test authorization server (tests/auth/oauth_server.py)
on 127.0.0.1, over plain HTTP, for one test.

Plugins: tests/protected_mcp.py, the fixtures of an authorization-protected MCP server
(`authorization`, `mcp`) that tests of several folders sign in to.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from tests.auth.oauth_server import OAuthTestServer
    from tests.keyring_session import PrivateKeyring, SharedKeyring

pytest_plugins = ["tests.protected_mcp"]

FAIL_KEYRING_BACKEND = "keyring.backends.fail.Keyring"
TERMINAL_COLUMNS = 120  # shutil.get_terminal_size's fallback in the CLI when no terminal is attached

settings.register_profile(
    "dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# CI's profile: four times Hypothesis's default per run (the examples differ from run to run);
# `thorough` for a search that takes hours.
settings.register_profile(
    "ci", max_examples=400, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (addopts) starts one worker per CPU, unless every argument names single tests
    (`path::test`): starting workers then costs more than they could save, so those run here."""
    named = [arg for arg in config.args if not arg.startswith("-")]
    if named and all("::" in arg for arg in named):
        return 0
    return None  # pytest-xdist's own count


@pytest.fixture(scope="session", autouse=True)
def no_user_keyring() -> Iterator[None]:
    """Every test runs with keyring's fail backend unless it passes a backend of its own."""
    previous = os.environ.get("PYTHON_KEYRING_BACKEND")
    os.environ["PYTHON_KEYRING_BACKEND"] = FAIL_KEYRING_BACKEND
    if "keyring" in sys.modules:  # already imported: it may have chosen a backend before the variable
        import keyring
        from keyring.backends import fail

        keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    if previous is None:
        os.environ.pop("PYTHON_KEYRING_BACKEND", None)
    else:
        os.environ["PYTHON_KEYRING_BACKEND"] = previous


@pytest.fixture(scope="session", autouse=True)
def fixed_terminal_width() -> Iterator[None]:
    """The CLI's tables fit the terminal (`shutil.get_terminal_size`): every test, and every
    process it starts, sees the same width whatever the developer's terminal says (pytest-xdist's
    workers see COLUMNS=80). A test about narrow terminals sets COLUMNS itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(TERMINAL_COLUMNS))
        yield


@pytest.fixture(autouse=True)
def private_state_and_cache_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test (and every gateway it starts) keeps consent decisions made without a keyring
    in a state directory of its own, and its caches (web descriptors, MCP tool snapshots) in a
    cache directory of its own: never the developer's, never another test's, which may be
    running at the same moment in another pytest-xdist worker."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def _shared_keyring() -> Iterator[SharedKeyring]:
    from tests.keyring_session import SharedKeyring

    shared = SharedKeyring()
    yield shared
    shared.stop()


@pytest.fixture
def private_keyring(_shared_keyring: SharedKeyring) -> PrivateKeyring:
    """A real Secret Service (gnome-keyring-daemon) on a private bus, shared by the session (one
    that died is replaced: `SharedKeyring`)."""
    return _shared_keyring.get()


@pytest.fixture
def keyring() -> Iterator[PrivateKeyring]:
    """A real Secret Service of this test's own."""
    from tests.keyring_session import PrivateKeyring

    with PrivateKeyring() as private:
        yield private


@pytest.fixture
def oauth_server() -> Iterator[OAuthTestServer]:
    """The test authorization server, for this test (its Flask app is imported when one asks)."""
    from tests.auth.oauth_server import OAuthTestServer

    server = OAuthTestServer().start()
    yield server
    server.close()


class _LostExitStatus(logging.Handler):
    """Catches asyncio's "Unknown child process pid …, will report returncode 255": something
    reaped a child under asyncio's watcher, and its real exit status was lost."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Unknown child process pid" in message:
            self.messages.append(message)


@pytest.fixture(autouse=True)
def no_lost_exit_status() -> Iterator[None]:
    handler = _LostExitStatus()
    watcher_log = logging.getLogger("asyncio")
    watcher_log.addHandler(handler)
    try:
        yield
    finally:
        watcher_log.removeHandler(handler)
    if handler.messages:
        pytest.fail(f"a child process was reaped behind asyncio's back: {handler.messages}")
