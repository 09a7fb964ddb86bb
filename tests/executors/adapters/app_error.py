"""Answers with a wire error response; `params.exit` chooses the exit code (default 0)."""

from __future__ import annotations

import json
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.readline())
    answer = {
        "version": "1.0",
        "request_id": request["request_id"],
        "status": "error",
        "error": {"code": request["params"].get("code", "NOT_FOUND"), "message": "no note with id 42"},
    }
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    sys.exit(int(request["params"].get("exit", 0)))


if __name__ == "__main__":
    main()
