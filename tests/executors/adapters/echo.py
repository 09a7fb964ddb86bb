"""Answers with what it was given: the request, the raw stdin line, argv, cwd and environment.

With `params.sleep` (seconds) it waits before answering and reports when it started and ended.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> None:
    raw = sys.stdin.buffer.read()
    request = json.loads(raw)
    started = time.time()
    params = request["params"]
    if isinstance(params.get("sleep"), int | float):
        time.sleep(params["sleep"])
    result = {
        "request_id": request["request_id"],
        "tool": request["tool"],
        "params": request["params"],
        "stdin": raw.decode("utf-8"),
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "pid": os.getpid(),
        "started": started,
        "ended": time.time(),
    }
    answer = {"version": "1.0", "request_id": request["request_id"], "status": "success", "result": result}
    sys.stdout.buffer.write(json.dumps(answer, ensure_ascii=False).encode("utf-8"))


if __name__ == "__main__":
    main()
