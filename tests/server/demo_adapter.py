"""A stdio adapter for the server tests: one JSON request on stdin, one JSON response on stdout.

Tools: `echo` returns its params; `fail` answers with an app error; `sleep` waits `seconds`;
`nested` answers with arrays nested `depth` levels deep; `raw` answers with the JSON text `json`
as its result, written as it is.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    request = json.loads(sys.stdin.readline())
    tool, params = request["tool"], request["params"]
    if tool == "fail":
        answer = {"status": "error", "error": {"code": "NOT_FOUND", "message": f"no item {params.get('id')}"}}
    elif tool == "nested":
        nested = "[" * params["depth"] + "]" * params["depth"]
        sys.stdout.write(f'{{"status": "success", "result": {{"nested": {nested}}}}}')
        return
    elif tool == "raw":
        sys.stdout.write(f'{{"status": "success", "result": {params["json"]}}}')
        return
    else:
        if tool == "sleep":
            time.sleep(params["seconds"])
        answer = {"status": "success", "result": {"tool": tool, "params": params}}
    sys.stdout.write(json.dumps({"version": "1.0", "request_id": request["request_id"], **answer}))


if __name__ == "__main__":
    main()
