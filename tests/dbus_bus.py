"""A private `dbus-daemon` for tests: never the developer's own session bus.

The daemon listens on a unix socket at a fixed path in a temporary folder, so it can be stopped
and started again at the same address (as a desktop bus restarts), and it activates no
services, so nothing outside a test can appear on it; unless the test gives it a folder of
service files of its own (`PrivateBus(services={...})`), to see activation fail.

    with PrivateBus() as bus:
        executor = DbusExecutor(environ=bus.env())
        bus.restart()

Needs Debian `dbus` (scripts/install-test-peers installs it).
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import pytest

START_SECONDS = 10.0
STOP_SECONDS = 5.0

_CONFIG_TEMPLATE = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{listen}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
{extra}</busconfig>
"""


def bus_config(listen: str, service_dir: Path | None = None) -> str:
    """A session bus config listening at `listen`, with no service activation (only the test's
    own services and the bus itself are ever on it), or activation from `service_dir` alone."""
    extra = ""
    if service_dir is not None:
        extra = (
            f'  <servicedir>{service_dir}</servicedir>\n  <limit name="service_start_timeout">1000</limit>\n'
        )
    return _CONFIG_TEMPLATE.format(listen=listen, extra=extra)


class PrivateBusError(RuntimeError):
    """dbus-daemon is missing, did not start, or did not stop."""


class PrivateBus:
    def __init__(self, services: dict[str, str] | None = None) -> None:
        """`services`: bus name → the command line the bus runs to start it on demand."""
        if shutil.which("dbus-daemon") is None:
            raise PrivateBusError("dbus-daemon is not installed: run scripts/install-test-peers")
        # a unix socket path must fit in 108 bytes, so stay short even with a long TMPDIR
        self.root = Path(tempfile.mkdtemp(prefix="aai-dbus-", dir="/tmp"))
        self.socket = self.root / "bus"
        self.address = f"unix:path={self.socket}"
        service_dir = None
        if services is not None:
            service_dir = self.root / "services"
            service_dir.mkdir()
            for name, command in services.items():
                text = f"[D-BUS Service]\nName={name}\nExec={command}\n"
                (service_dir / f"{name}.service").write_text(text, encoding="utf-8")
        config = bus_config(f"unix:path={self.socket}", service_dir)
        (self.root / "bus.conf").write_text(config, encoding="utf-8")
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> PrivateBus:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: empty) with this bus as the session bus."""
        return {**(base or {}), "DBUS_SESSION_BUS_ADDRESS": self.address}

    def start(self) -> None:
        if self._process is not None:
            raise PrivateBusError("the private bus is already running")
        self.socket.unlink(missing_ok=True)
        with (self.root / "dbus-daemon.log").open("ab") as log:
            process = subprocess.Popen(
                ["dbus-daemon", f"--config-file={self.root / 'bus.conf'}", "--nofork", "--print-address=1"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env={key: value for key, value in os.environ.items() if not key.startswith("DBUS_")},
            )
        self._process = process
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=START_SECONDS)
        printed = process.stdout.readline().decode().strip() if ready else ""
        if not printed.startswith(self.address):
            self.stop()
            log_text = (self.root / "dbus-daemon.log").read_text(errors="replace").strip()
            raise PrivateBusError(f"dbus-daemon did not start (printed {printed!r}): {log_text}")

    def stop(self, how: signal.Signals = signal.SIGTERM) -> None:
        """Stop the daemon (SIGKILL: as if it crashed) and wait until it is gone."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(how)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def restart(self, how: signal.Signals = signal.SIGTERM) -> None:
        self.stop(how)
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def private_bus_or_fail(services: dict[str, str] | None = None) -> PrivateBus:
    try:
        return PrivateBus(services)
    except PrivateBusError as exc:
        pytest.fail(str(exc), pytrace=False)


@contextmanager
def service_process(script: Path, address: str) -> Iterator[subprocess.Popen[bytes]]:
    """`python script --address ADDRESS`, running once it has printed `ready`; stopped after."""
    process = subprocess.Popen(
        [sys.executable, str(script), "--address", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=START_SECONDS)
        line = process.stdout.readline().decode().strip() if ready else ""
        if line != "ready":
            process.kill()
            _, stderr = process.communicate()
            raise PrivateBusError(f"{script.name} did not start: {line!r} {stderr.decode(errors='replace')}")
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.communicate(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
