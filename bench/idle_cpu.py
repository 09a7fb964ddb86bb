"""Idle CPU: what a gateway serving N descriptors spends while nothing happens (Linux only).

Run: .venv/bin/python bench/idle_cpu.py [--descriptors 1000] [--seconds 10]
Each gateway (`aai-gateway serve` on stdin/stdout, no client traffic) is left to start until a
second passes in which it uses under 1 % of a core. Then the CPU time of all its threads is read
from /proc/<pid>/task/*/schedstat (nanoseconds, unlike the 10 ms ticks of /proc/<pid>/stat)
across the quiet window, with the threads' voluntary context switches: how often something woke
up. Modes: file notifications (the default), polling every 2 s (`--force-polling`, what every
gateway did before notifications), and never looking (`--poll-interval 0`, the floor).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aai_gateway
from scan_validate import write_descriptors

MODES = {
    "file notifications": (),
    "polling every 2 s (--force-polling)": ("--force-polling",),
    "never looking (--poll-interval 0)": ("--poll-interval", "0"),
}
SETTLED = 0.01  # start-up is over once a second passes with less than 1 % of a core used
START_SECONDS = 300.0  # 10,000 descriptors take a minute to load on a busy 2-core machine
SOURCES = str(Path(aai_gateway.__file__).resolve().parents[1])  # the gateway this script imports


def cpu_and_wakeups(pid: int) -> tuple[float, int]:
    """CPU seconds of every thread of `pid`, and their voluntary context switches."""
    nanoseconds = switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            nanoseconds += int((task / "schedstat").read_text().split()[0])
            status = (task / "status").read_text().splitlines()
        except OSError:  # the thread ended meanwhile
            continue
        switches += sum(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))
    return nanoseconds / 1e9, switches


QUIET_SECONDS = 3
"""Quiet seconds in a row that end start-up: the gateway opens the OS keyring 2 s after it starts
serving (~25 ms), which one quiet second let into the measured window."""


def settle(pid: int) -> None:
    """Wait until the gateway has started: catalog built, search index made, the keyring opened,
    nothing else to do (QUIET_SECONDS in a row under SETTLED)."""
    deadline = time.monotonic() + START_SECONDS
    previous, _ = cpu_and_wakeups(pid)
    quiet = 0
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now, _ = cpu_and_wakeups(pid)
        quiet = quiet + 1 if now - previous < SETTLED and now > 0 else 0
        if quiet == QUIET_SECONDS:
            return
        previous = now
    raise SystemExit(f"the gateway was still busy after {START_SECONDS:g} s")


def idle(folder: Path, home: Path, extra: tuple[str, ...], seconds: float) -> tuple[float, float]:
    """Share of one core, and wake-ups per second, of an idle gateway."""
    command = [sys.executable, "-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(folder)]
    with subprocess.Popen(
        [*command, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": SOURCES,
            "AAI_GATEWAY_CONFIG": str(home / "config.toml"),
        },
    ) as gateway:
        settle(gateway.pid)
        cpu_before, woken_before = cpu_and_wakeups(gateway.pid)
        started = time.monotonic()
        time.sleep(seconds)
        cpu_after, woken_after = cpu_and_wakeups(gateway.pid)
        elapsed = time.monotonic() - started
        assert gateway.stdin is not None
        gateway.stdin.close()  # end of input: the gateway stops
        gateway.wait(20)
    return (cpu_after - cpu_before) / elapsed, (woken_after - woken_before) / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--descriptors", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux"):
        print("reads /proc: Linux only")
        return 2
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as home:
        folder = Path(home) / "apps"
        folder.mkdir()
        write_descriptors(folder, args.descriptors)
        print(f"idle gateway, {args.descriptors} descriptors (DIR/*/aai.json), {args.seconds:g} s window")
        for label, extra in MODES.items():
            share, wakeups = idle(folder, Path(home), extra, args.seconds)
            print(f"  {label:38} {100 * share:6.3f} % of a core  {wakeups:5.1f} wake-ups/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
