"""Answers JSON text can spell but no JSON writer can write back: a lone surrogate (`"\\ud800"`,
in a value or a key) or a number beyond the range of a 64-bit float (`1e400` parses as
infinity). From every executor they reach the agent as an `isError` tool result naming the app,
the tool and where in the answer, never as a JSON-RPC error; the gateway keeps serving.

Real apps: the stdio adapter of the server tests, an HTTP server on 127.0.0.1 and an ACP agent,
each behind a real gateway process driven by the SDK's client."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.builders import c_descriptor, trusting_config, write_json
from tests.executors.acp_support import LINE_AGENT, acp_document
from tests.server.conftest import adapter_app, connected
from tests.server.test_mcp_stdio import error_of, text_of

pytestmark = pytest.mark.anyio

ADAPTER, HTTP, AGENT = "dev.test.adapter", "dev.test.oddhttp", "dev.test.lineagent"

# What the HTTP app answers on each path: (status, body)
BODIES = {
    "/surrogate": (200, b'{"x": "a\\ud800b"}'),
    "/surrogate_key": (200, b'{"ok": {"a\\udc00": 1}}'),
    "/infinite": (200, b'{"x": [1, 1e400]}'),
    "/refused": (401, b'{"message": "bad \\ud800 key"}'),
}


class _OddAnswers(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        status, body = BODIES[self.path]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def http_app() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OddAnswers)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory, http_app: str) -> Path:
    root = tmp_path_factory.mktemp("unwritable")
    adapter = adapter_app(ADAPTER)
    json_text = {"type": "object", "properties": {"json": {"type": "string"}}}
    adapter["tools"].append({"name": "raw", "description": "Answer with JSON text", "parameters": json_text})
    write_json(root / "apps" / "adapter.json", adapter)
    web = c_descriptor(HTTP, name="Odd HTTP", type="http", baseUrl=http_app)
    web["tools"] = [
        {
            "name": path.lstrip("/"),
            "description": f"GET {path}",
            "parameters": {"type": "object", "properties": {}},
            "execution": {"path": path, "method": "GET"},
        }
        for path in BODIES
    ]
    write_json(root / "apps" / "http.json", web)
    write_json(root / "apps" / "agent" / "aai.json", acp_document(agent=LINE_AGENT, app_id=AGENT))
    trusting_config(root / "config.toml", [ADAPTER, HTTP, AGENT])
    (root / "work").mkdir()
    return root / "apps"


@pytest.fixture(scope="module")
async def client(apps: Path, mode: str) -> AsyncIterator[Client]:
    async with connected(apps, mode) as client:
        yield client


async def execute(client: Client, app: str, tool: str, args: dict[str, Any]) -> Any:
    return await client.call_tool("aai_exec", {"app": app, "tool": tool, "args": args})


def assert_unwritable(error: dict[str, Any], app: str, tool: str, pointer: str, reason: str) -> None:
    assert error["code"] == "EXECUTION_FAILED"
    assert error["message"].startswith(f"{app} {tool}: the app's answer holds {reason}")
    assert error["data"] == {"app": app, "tool": tool, "pointer": pointer, "reason": error["data"]["reason"]}
    assert error["data"]["reason"].startswith(reason)


@pytest.mark.parametrize(
    ("answer", "pointer", "reason"),
    [
        ('{"x": "a\\ud800b"}', "/x", "text that is not valid Unicode (a lone surrogate U+D800)"),
        ('{"list": [{"a\\udc00": 1}]}', "/list/0/a\\udc00", "text that is not valid Unicode"),
        ('"\\udfff"', "", "text that is not valid Unicode (a lone surrogate U+DFFF)"),
        ('{"x": 1e400}', "/x", "a number beyond the range of a 64-bit float"),
        ("-1e999", "", "a number beyond the range of a 64-bit float"),
    ],
    ids=["surrogate in a value", "surrogate in a key", "surrogate alone", "1e400", "-1e999 alone"],
)
async def test_an_adapter_answer_that_cannot_be_written_as_json_is_execution_failed_saying_where(
    client: Client, answer: str, pointer: str, reason: str
) -> None:
    failed = await execute(client, ADAPTER, "raw", {"json": answer})
    echoed = await execute(client, ADAPTER, "echo", {"text": "still serving"})

    assert_unwritable(error_of(failed), ADAPTER, "raw", pointer, reason)
    assert json.loads(text_of(echoed))["params"]["text"] == "still serving"


@pytest.mark.parametrize(
    ("tool", "pointer", "reason"),
    [
        ("surrogate", "/x", "text that is not valid Unicode (a lone surrogate U+D800)"),
        ("surrogate_key", "/ok/a\\udc00", "text that is not valid Unicode (a lone surrogate U+DC00)"),
        ("infinite", "/x/1", "a number beyond the range of a 64-bit float"),
    ],
)
async def test_an_http_answer_that_cannot_be_written_as_json_is_execution_failed_saying_where(
    client: Client, tool: str, pointer: str, reason: str
) -> None:
    failed = await execute(client, HTTP, tool, {})

    assert_unwritable(error_of(failed), HTTP, tool, pointer, reason)


async def test_an_app_error_quoting_a_lone_surrogate_keeps_its_code_and_shows_the_surrogate_harmlessly(
    client: Client,
) -> None:
    error = error_of(await execute(client, HTTP, "refused", {}))

    assert error["code"] == "AUTH_REQUIRED"
    assert "bad \ufffd key" in error["message"] or "bad \\ud800 key" in error["message"]


async def test_an_acp_reply_with_a_lone_surrogate_is_execution_failed_saying_where(
    client: Client, apps: Path
) -> None:
    args = {"prompt": "lone surrogate", "cwd": str(apps.parent / "work")}
    failed = await execute(client, AGENT, "prompt", args)

    assert_unwritable(error_of(failed), AGENT, "prompt", "/reply", "text that is not valid Unicode")
