"""Answers with the JSON text `params.answer` names: not quite JSON (NaN, Infinity), nested
`params.depth` levels deep, or a plain success."""

from __future__ import annotations

import json
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    params = request["params"]
    depth = int(params.get("depth", 0))
    results = {
        "nan": '{"ratio": NaN}',
        "infinity": "[1, Infinity]",
        "-infinity": "-Infinity",
        "nested": "[" * depth + "]" * depth,
        "fine": '{"ok": true}',
    }
    sys.stdout.write(f'{{"status": "success", "result": {results[params["answer"]]}}}')


if __name__ == "__main__":
    main()
