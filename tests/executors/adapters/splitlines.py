"""Reads its request the way many adapters do, `sys.stdin.read().splitlines()[0]`, and answers
with the params it got and how many lines it saw."""

from __future__ import annotations

import json
import sys


def main() -> None:
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    lines = sys.stdin.read().splitlines()
    request = json.loads(lines[0])
    result = {"params": request["params"], "lines": len(lines)}
    answer = {"version": "1.0", "request_id": request["request_id"], "status": "success", "result": result}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
