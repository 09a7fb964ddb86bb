"""What tests ask about processes the gateway started: is one gone."""

from __future__ import annotations

import os
from pathlib import Path


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie (exited; here PID 1 may never reap orphans)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")
