"""CPU time used by the processes a benchmark talks to, read from /proc (Linux only).

Wall-clock time per call on a shared 2-core machine moves with whatever else runs; the CPU time
each process of a chain spends per call hardly does, so it says where the time goes. Elsewhere
than on Linux every function answers as if there were no such processes.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

PROC = Path("/proc")
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def child_pids(pid: int | None = None) -> set[int]:
    """The children of `pid` (default: this process), of all its threads."""
    tasks = PROC / str(pid or os.getpid()) / "task"
    found: set[int] = set()
    try:
        for task in tasks.iterdir():
            found.update(int(child) for child in (task / "children").read_text().split())
    except OSError:
        pass
    return found


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for child in child_pids(pid):
        found |= {child, *descendants(child)}
    return found


def cpu_seconds(pid: int) -> float:
    """User and system time of `pid` so far; 0 when it is gone or unknown."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def tree_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of `pid` itself, and of everything it started (alive now)."""
    return cpu_seconds(pid), sum(cpu_seconds(child) for child in descendants(pid))


def cpu_accounted(
    measure: Callable[[], Awaitable[float]], pid: int, samples: list[tuple[float, float]]
) -> Callable[[], Awaitable[float]]:
    """`measure`, also appending to `samples` the CPU seconds that `pid` and what it started spent
    during each run."""

    async def measured() -> float:
        before = tree_cpu(pid)
        seconds = await measure()
        after = tree_cpu(pid)
        samples.append((after[0] - before[0], after[1] - before[1]))
        return seconds

    return measured
