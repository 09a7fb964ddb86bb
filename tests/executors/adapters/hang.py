"""Never answers: starts a sleeping grandchild, writes both pids to `params.pidfile`, sleeps.

With `params.ignore_term` both ignore SIGTERM, so only SIGKILL stops them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def main() -> None:
    params = json.loads(sys.stdin.buffer.readline())["params"]
    if params.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile = params["pidfile"]
    with open(pidfile + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} {grandchild.pid}")
    os.replace(pidfile + ".tmp", pidfile)
    time.sleep(600)


if __name__ == "__main__":
    main()
