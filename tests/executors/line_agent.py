"""An ACP agent written without the ACP library, for tests of what travels on its stdin: it reads
lines the way many line readers do, cutting at every line break `str.splitlines()` knows (U+0085,
U+2028 and U+2029 among them), and exits with status 3 when a piece is not JSON.

A prompt is answered with one message chunk: the prompt's own text, or for the prompt
`lone surrogate` a chunk whose JSON text holds the escape of a lone surrogate.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def chunk(session_id: str, text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


def answer(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    elif method == "session/new":
        result = {"sessionId": "s-line"}
    elif method == "session/prompt":
        text = "".join(block.get("text", "") for block in params["prompt"])
        if text == "lone surrogate":
            text = "a \ud800 b"  # json.dumps writes it as the escape \ud800
        send(chunk(params["sessionId"], text))
        result = {"stopReason": "end_turn"}
    elif request_id is None:
        return
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    for raw in sys.stdin.buffer:
        for piece in raw.decode("utf-8").splitlines():
            try:
                message = json.loads(piece)
            except ValueError:
                print(f"line agent: not JSON: {piece[:80]!r}", file=sys.stderr, flush=True)
                sys.exit(3)
            answer(message)


if __name__ == "__main__":
    main()
