"""A real, private Secret Service for tests: its own DBus session bus and an unlocked GNOME Keyring.

`PrivateKeyring` starts `dbus-daemon` (with a config of its own: no service auto-activation, so
nothing outside this helper can start a second, locked keyring daemon on the bus) and then
`gnome-keyring-daemon --foreground --unlock --components=secrets`, password on stdin, before any
secret call. HOME and every XDG directory point into a fresh temporary directory, so the
developer's real keyring is never read or written.

    with PrivateKeyring() as private:
        store = KeyringSecretStore(backend=private.backend())      # in this process
        subprocess.run([...], env=private.child_env())             # in a child process

`backend()` talks to the private bus only; it never reads DBUS_SESSION_BUS_ADDRESS, so the test
process itself stays on the fail backend. `env` (or `child_env()`) holds what a child process
needs to use the private keyring through plain `keyring.get_keyring()`.

Needs Debian `dbus` and `gnome-keyring` (scripts/install-test-peers installs them).
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import closing, suppress
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import secretstorage
from jeepney import DBusErrorResponse  # type: ignore[import-untyped]
from jeepney.io.blocking import DBusConnection, open_dbus_connection  # type: ignore[import-untyped]
from keyring.backends import SecretService
from keyring.errors import InitError, KeyringLocked
from secretstorage.exceptions import SecretStorageException
from secretstorage.util import add_match_rules

from tests.dbus_bus import bus_config

PROGRAMS = ("dbus-daemon", "gnome-keyring-daemon")
SECRET_SERVICE_BACKEND = "keyring.backends.SecretService.Keyring"
logger = logging.getLogger(__name__)

START_SECONDS = 15.0
STOP_SECONDS = 5.0
# A unix socket path must fit in 108 bytes; the bus and the keyring control socket live under root.
_MAX_ROOT_LENGTH = 60


class KeyringPeersMissingError(RuntimeError):
    """dbus-daemon or gnome-keyring-daemon is not installed."""


class PrivateKeyringError(RuntimeError):
    """The private bus or keyring daemon did not start, or did not stop."""


class PrivateBusSecretService(SecretService.Keyring):
    """The keyring SecretService backend, bound to one bus address instead of the session bus."""

    def __init__(self, address: str) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.address = address

    def connect(self) -> DBusConnection:
        connection = open_dbus_connection(bus=self.address)
        add_match_rules(connection)  # as secretstorage.dbus_init does: unlock prompts signal on it
        return connection

    def get_preferred_collection(self) -> Any:
        """Like the parent's, on the private bus (the parent opens the ambient session bus)."""
        try:
            connection = self.connect()
        except OSError as exc:
            raise InitError(f"cannot connect to the private bus {self.address}: {exc}") from exc
        try:
            collection = secretstorage.get_default_collection(connection)
        except SecretStorageException as exc:
            connection.close()
            raise InitError(f"Failed to create the collection: {exc}.") from exc
        if collection.is_locked():
            connection.close()
            raise KeyringLocked("the private keyring is locked")
        return collection


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, ..., or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str | None:
    """When a live (not zombie) process started, in clock ticks: tells a process from a reused pid."""
    fields = _stat(pid)
    if fields is None or fields[0] == "Z":
        return None
    return fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """Every live process below `pid` with its start time, so helpers a daemon forks are found too."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if (started := _start_time(child)) is not None:
                found[child] = started
            todo.append(child)
    return found


class SharedKeyring:
    """One private keyring for many tests (a session's), started when first asked for. One whose
    bus or daemon has died is replaced at the next `get`, with a warning saying how it ended:
    gnome-keyring-daemon has aborted on a GLib assertion under load (once in some thirty suites),
    and that should fail the test it died in, not every later test that shares it."""

    def __init__(self) -> None:
        self.current: PrivateKeyring | None = None
        self.replaced: list[str] = []
        """How each keyring replaced ended."""

    def get(self) -> PrivateKeyring:
        if self.current is not None and not self.current.running:
            try:
                self.current.check()
            except PrivateKeyringError as exc:
                self.replaced.append(str(exc))
                logger.warning("starting a new private keyring: %s", exc)
            self.stop()
        if self.current is None:
            self.current = PrivateKeyring().start()
        return self.current

    def stop(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            current.stop()


class PrivateKeyring:
    """A private DBus session bus with an unlocked gnome-keyring-daemon; use as a context manager."""

    def __init__(self, password: str | None = None, start_seconds: float = START_SECONDS) -> None:
        self.password = password if password is not None else secrets.token_urlsafe(16)
        self.start_seconds = start_seconds
        self.root: Path | None = None
        self.address = ""
        self.env: dict[str, str] = {}
        self._bus: subprocess.Popen[bytes] | None = None
        self._daemon: subprocess.Popen[bytes] | None = None
        self._logs: list[IO[bytes]] = []

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> PrivateKeyring:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> PrivateKeyring:
        if self._bus is not None:
            return self
        missing = [program for program in PROGRAMS if shutil.which(program) is None]
        if missing:
            raise KeyringPeersMissingError(
                f"{' and '.join(missing)} not installed: a real keyring for tests needs Debian "
                "`dbus` and `gnome-keyring`; run scripts/install-test-peers"
            )
        atexit.register(self.stop)
        try:
            self._make_dirs()
            self._start_bus()
            self._start_daemon()
            self._wait_until_answers()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the daemon, then the bus; make sure no process started here survives. Idempotent."""
        atexit.unregister(self.stop)
        helpers: dict[int, str] = {}  # processes the daemons forked: not ours to wait for
        for process in (self._daemon, self._bus):
            if process is not None:
                helpers.update(_descendants(process.pid))
        for process in (self._daemon, self._bus):
            if process is not None:
                self._terminate(process)  # waits: the direct children are reaped here
        survivors: list[int] = []
        for pid, started in sorted(helpers.items()):
            if _start_time(pid) == started:  # the same process, still alive (not a reused pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                survivors.append(pid)
        pipes = [self._bus.stdout if self._bus else None, self._daemon.stdin if self._daemon else None]
        for pipe in pipes:
            if pipe is not None:
                with suppress(OSError):  # a daemon that died at once leaves a broken stdin pipe
                    pipe.close()
        for log in self._logs:
            log.close()
        self._daemon = self._bus = None
        self._logs = []
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        if survivors:
            raise PrivateKeyringError(f"processes outlived the private keyring and were killed: {survivors}")

    @property
    def running(self) -> bool:
        return all(process is not None and process.poll() is None for process in (self._bus, self._daemon))

    def check(self) -> None:
        """Raise, saying which process ended and how, unless the bus and the daemon are both running."""
        if self._bus is None or self._daemon is None:
            raise PrivateKeyringError("the private keyring is not running")
        for name, process, log in (
            ("dbus-daemon", self._bus, "dbus-daemon.log"),
            ("gnome-keyring-daemon", self._daemon, "gnome-keyring-daemon.log"),
        ):
            code = process.poll()
            if code is not None:
                how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                output = self._log_text(log) or "no output"
                raise PrivateKeyringError(f"the private keyring's {name} (pid {process.pid}) {how}: {output}")

    @property
    def bus_pid(self) -> int | None:
        return None if self._bus is None else self._bus.pid

    @property
    def daemon_pid(self) -> int | None:
        return None if self._daemon is None else self._daemon.pid

    def pids(self) -> list[int]:
        """The bus, the daemon and anything they started, while running."""
        found: list[int] = []
        for process in (self._bus, self._daemon):
            if process is not None:
                found.append(process.pid)
                found.extend(_descendants(process.pid))
        return sorted(set(found))

    # ------------------------------------------------------------------ for tests

    def backend(self) -> PrivateBusSecretService:
        """A keyring backend on the private bus; pass it to `KeyringSecretStore(backend=...)`."""
        self.check()
        return PrivateBusSecretService(self.address)

    def child_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's environment) with the private keyring variables on top."""
        merged = dict(os.environ if base is None else base)
        merged.update(self.env)
        return merged

    @property
    def keyring_dir(self) -> Path:
        """Where gnome-keyring-daemon keeps the keyring files of this private keyring."""
        assert self.root is not None
        return self.root / "data" / "keyrings"

    # ------------------------------------------------------------------ internals

    def _make_dirs(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="aai-keyring-"))
        if len(str(root)) > _MAX_ROOT_LENGTH:  # a long TMPDIR would overflow the socket paths
            shutil.rmtree(root)
            root = Path(tempfile.mkdtemp(prefix="aai-keyring-", dir="/tmp"))
        self.root = root
        dirs = {name: root / name for name in ("home", "data", "config", "cache", "runtime")}
        for directory in dirs.values():
            directory.mkdir(mode=0o700)
        self.env = {
            "HOME": str(dirs["home"]),
            "XDG_DATA_HOME": str(dirs["data"]),
            "XDG_CONFIG_HOME": str(dirs["config"]),
            "XDG_CACHE_HOME": str(dirs["cache"]),
            "XDG_RUNTIME_DIR": str(dirs["runtime"]),
            "PYTHON_KEYRING_BACKEND": SECRET_SERVICE_BACKEND,
        }
        (root / "bus.conf").write_text(bus_config(f"unix:dir={dirs['runtime']}"), encoding="utf-8")

    def _daemon_env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DBUS_", "XDG_", "GNOME_KEYRING"))
            and key not in {"DISPLAY", "WAYLAND_DISPLAY", "SSH_AUTH_SOCK"}
        }
        env.update(self.env)
        return env

    def _log(self, name: str) -> IO[bytes]:
        assert self.root is not None
        log = (self.root / name).open("wb")
        self._logs.append(log)
        return log

    def _log_text(self, name: str) -> str:
        assert self.root is not None
        try:
            return (self.root / name).read_text(errors="replace").strip()
        except OSError:
            return ""

    def _start_bus(self) -> None:
        assert self.root is not None
        self._bus = subprocess.Popen(
            [
                "dbus-daemon",
                f"--config-file={self.root / 'bus.conf'}",
                "--nofork",
                "--print-address=1",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log("dbus-daemon.log"),
            env=self._daemon_env(),
        )
        assert self._bus.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._bus.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=self.start_seconds)
        line = self._bus.stdout.readline().decode().strip() if ready else ""
        if not line:
            raise PrivateKeyringError(
                f"dbus-daemon printed no address: {self._log_text('dbus-daemon.log') or 'no output'}"
            )
        self.address = line
        self.env["DBUS_SESSION_BUS_ADDRESS"] = line

    def _start_daemon(self) -> None:
        self._daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=self._log("gnome-keyring-daemon.out"),
            stderr=self._log("gnome-keyring-daemon.log"),
            env=self._daemon_env(),
        )
        assert self._daemon.stdin is not None
        try:
            self._daemon.stdin.write(self.password.encode())
            self._daemon.stdin.close()  # end of input: the daemon takes what it read as the password
        except BrokenPipeError:
            pass  # it exited at once; _wait_until_answers reports how, with its output

    def _answers(self) -> bool:
        try:
            with closing(open_dbus_connection(bus=self.address)) as connection:
                if not secretstorage.check_service_availability(connection):
                    return False
                return not secretstorage.get_default_collection(connection).is_locked()
        except (OSError, SecretStorageException, DBusErrorResponse):
            return False

    def _wait_until_answers(self) -> None:
        assert self._daemon is not None and self._bus is not None
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline:
            if self._daemon.poll() is not None or self._bus.poll() is not None:
                break
            if self._answers():
                return
            time.sleep(0.05)
        raise PrivateKeyringError(
            "gnome-keyring-daemon did not answer on the private bus within "
            f"{self.start_seconds:g} s (daemon exit code {self._daemon.poll()}, bus exit code "
            f"{self._bus.poll()}): {self._log_text('gnome-keyring-daemon.log') or 'no output'}"
        )

    @staticmethod
    def _terminate(process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_SECONDS)
