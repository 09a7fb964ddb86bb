"""Descriptors and calls for tests of `mcp` apps, driven by the test server in mcp_upstream.py."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.descriptor import AppDescriptor, ExecutionType, Source, load_text
from aai_gateway.discovery import Catalog, CatalogEntry
from aai_gateway.executors import (
    ExecutorRegistry,
    Invocation,
    ProgressReporter,
    ToolResult,
    UserAnswer,
    UserAsker,
    UserQuestion,
)
from aai_gateway.executors.mcp import McpExecutor
from aai_gateway.service import Gateway
from tests.builders import trusting_gate

UPSTREAM = Path(__file__).with_name("mcp_upstream.py")
PNG_DATA = base64.b64encode(b"\x89PNG\r\n\x1a\n-tiny-").decode()  # the image of mcp_upstream.py
APP_ID = "dev.test.mcpupstream"
TOOL_NAMES = (
    "echo",
    "blocks",
    "tool_error",
    "protocol_error",
    "crash",
    "hang",
    "freeze",
    "flood",
    "flood_id_last",
    "garbage",
    "too_deep",
    "bad_result",
    "grandchild",
    "crash_leaving_child",
    "progress",
    "ask",
    "ask_url",
    "sample",
    "env",
    "env_digest",
    "cwd",
    "pid",
    "header",
    "header_digest",
    "change_tools",
    "slow",
    "shaped",
    "backtracking",
    "not_upstream",
)
ENVIRON = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/tmp",
    "AAI_TEST_GATEWAY_ONLY": "private",
}


@asynccontextmanager
async def running_executor(environ: dict[str, str] = ENVIRON) -> AsyncIterator[McpExecutor]:
    """An mcp executor for a test module, its servers stopped at the end (after 0.5 s of grace)."""
    executor = McpExecutor(environ=environ, kill_grace_seconds=0.5)
    try:
        yield executor
    finally:
        await executor.aclose()


def mcp_document(
    *,
    app_id: str = APP_ID,
    name: str = "Upstream",
    args: Sequence[str] = (),
    env: dict[str, Any] | None = None,
    timeout_ms: int | None = None,
    url: str | None = None,
    headers: dict[str, Any] | None = None,
    tools: Sequence[str] = TOOL_NAMES,
    **execution: Any,
) -> dict[str, Any]:
    """A dialect-C `mcp` descriptor of the test server (or of a server at `url`), declaring
    `tools` with schemas that take anything (the upstream's own checks are what is tested)."""
    settings: dict[str, Any] = {"type": "mcp", **execution}
    if url is not None:
        settings["url"] = url
        if headers:
            settings["headers"] = headers
    else:
        settings.setdefault("command", sys.executable)
        settings["args"] = [str(UPSTREAM), *args]
        if env:
            settings["env"] = env
    if timeout_ms is not None:
        settings["timeout"] = timeout_ms
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "linux",
        "app": {
            "id": app_id,
            "name": {"en": name},
            "defaultLang": "en",
            "description": "An MCP server for tests",
        },
        "execution": settings,
        "tools": [{"name": tool, "description": tool, "parameters": {"type": "object"}} for tool in tools],
    }


def write_app(folder: Path, document: dict[str, Any]) -> AppDescriptor:
    """Write the descriptor as `folder/aai.json` and load it the way discovery does."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "aai.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = load_text(path.read_text(encoding="utf-8"), Source(kind="file", location=str(path)), "linux")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def call(
    app: AppDescriptor,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    progress: ProgressReporter | None = None,
    ask_user: UserAsker | None = None,
    secrets: dict[str, str] | None = None,
) -> Invocation:
    found = app.tool(tool)
    assert found is not None
    return Invocation(
        app, found, arguments or {}, "test-1", progress, secrets=secrets or {}, ask_user=ask_user
    )


def assert_every_kind_of_content(result: ToolResult) -> None:
    """What mcp_upstream.py's `blocks` answers, as the executor must pass it on: unchanged."""
    kinds = [block["type"] for block in result.content]
    assert kinds == ["text", "image", "audio", "resource_link", "resource", "resource"]
    assert result.content[1] == {"type": "image", "data": PNG_DATA, "mimeType": "image/png"}
    assert result.content[3] == {
        "type": "resource_link",
        "uri": "file:///tmp/report.txt",
        "name": "report",
        "mimeType": "text/plain",
    }
    assert result.content[4]["resource"] == {
        "uri": "memo://one",
        "mimeType": "text/plain",
        "text": "embedded text",
    }
    assert result.content[5]["resource"]["blob"] == PNG_DATA
    assert result.structured_content == {"kinds": 6, "nested": {"list": [1, 2, 3]}}


class Progress:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.seen.append((done, total, message))


class User:
    """Answers every question with `answer` (None: cannot be asked), after `delay` seconds."""

    def __init__(self, answer: UserAnswer | None, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.questions: list[UserQuestion] = []

    async def __call__(self, question: UserQuestion) -> UserAnswer | None:
        self.questions.append(question)
        await anyio.sleep(self.delay)
        return self.answer


@contextmanager
def http_upstream(*args: str, port: int | None = None) -> Iterator[str]:
    """The test server over Streamable HTTP on 127.0.0.1 (`port`, or a free one); yields its URL."""
    if port is None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(UPSTREAM), "--http", str(port), *args])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test MCP server over HTTP did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def process_alive(pid: int) -> bool:
    """Whether `pid` is a live process (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def wait_until_gone(pid: int, seconds: float = 10.0) -> None:
    with anyio.fail_after(seconds):
        while process_alive(pid):  # noqa: ASYNC110 (nothing to wait on but the process's state)
            await anyio.sleep(0.05)


@asynccontextmanager
async def mcp_gateway(app: AppDescriptor) -> AsyncIterator[tuple[Gateway, CredentialStore]]:
    """A gateway of `app` alone, run by the real MCP executor, its credentials kept in memory
    and its consent granted: what the service's MCP tests call through."""
    registry = ExecutorRegistry()
    registry.register(ExecutionType.MCP, McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5))
    store = CredentialStore(MemorySecretStore())
    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]),
        registry,
        consent=trusting_gate(app.id),
        auth=AuthProvider(store, environ={}),
    )
    try:
        yield gateway, store
    finally:
        await gateway.aclose()
