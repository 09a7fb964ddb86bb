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

Folders: no test, and no process a test starts, reaches the developer's own files. For the whole
session `HOME` and the XDG folders (config, cache, state, data) are the session's, and the
developer's `AAI_GATEWAY_*` settings are gone; every test then gets a `HOME` and XDG folders of
its own (consent decisions kept without a keyring, web descriptors, MCP tool snapshots, the
descriptor cache). `HOME` matters as much as the XDG variables: an MCP client starting the gateway
passes on only HOME, PATH and a few more (the MCP SDK's and the Inspector's default environment),
and the gateway then finds its folders from HOME alone. A gateway folder of the developer's that
the session created fails it (`private_home`). The terminal is 120 columns wide for every test
(`COLUMNS`), so the CLI's tables come out the same in any terminal and in any worker.

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
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs
import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from tests.auth.oauth_server import OAuthTestServer
    from tests.keyring_session import PrivateKeyring, SharedKeyring

pytest_plugins = ["tests.protected_mcp"]

FAIL_KEYRING_BACKEND = "keyring.backends.fail.Keyring"
TERMINAL_COLUMNS = 120  # shutil.get_terminal_size's fallback in the CLI when no terminal is attached
GATEWAY = "aai-gateway"
GATEWAY_SETTINGS = "AAI_GATEWAY_"  # the prefix of the gateway's environment variables


def home_folders(home: Path) -> dict[str, str]:
    """HOME at `home`, and the XDG folders where they are by default under it."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }


def gateway_folders() -> list[Path]:
    """Where a gateway started with this process's environment keeps its cache, config, state and
    data (platformdirs: HOME and the XDG variables), and ~/.aai, where `import` writes."""
    return [
        Path(platformdirs.user_cache_dir(GATEWAY)),
        Path(platformdirs.user_config_dir(GATEWAY)),
        Path(platformdirs.user_state_dir(GATEWAY)),
        Path(platformdirs.user_data_dir(GATEWAY)),
        Path.home() / ".aai",
    ]


USER_GATEWAY_FOLDERS = gateway_folders()  # the developer's: read before any fixture moved HOME

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


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's HOME and XDG folders, before any fixture of a module starts a gateway, and
    none of the developer's `AAI_GATEWAY_*` settings (their config, cache, descriptor folders).
    Fails the session if it created a gateway folder of the developer's (`USER_GATEWAY_FOLDERS`;
    one that existed before is not watched: the developer's own gateway may be writing there)."""
    absent = [folder for folder in USER_GATEWAY_FOLDERS if not folder.exists()]
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith(GATEWAY_SETTINGS)]:
            patch.delenv(name)
        for name, value in home_folders(tmp_path_factory.mktemp("home")).items():
            patch.setenv(name, value)
        yield
    created = [str(folder) for folder in absent if folder.exists()]
    if created:
        pytest.fail(f"the tests wrote into the user's own gateway folders: {', '.join(created)}")


@pytest.fixture(autouse=True)
def private_home_per_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and every gateway it starts) has a HOME and XDG folders of its own: consent
    decisions made without a keyring, caches (web descriptors, MCP tool snapshots, descriptor
    cards) and config are never the developer's, nor another test's, which may be running at the
    same moment in another pytest-xdist worker."""
    for name, value in home_folders(tmp_path_factory.mktemp("home")).items():
        monkeypatch.setenv(name, value)


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
