"""Answers at once but leaves a sleeping grandchild that still holds stdout and stderr open."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.readline())
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile = request["params"]["pidfile"]
    with open(pidfile, "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} {grandchild.pid}")
    answer = {"request_id": request["request_id"], "status": "success", "result": {"ok": True}}
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
