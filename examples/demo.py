"""A guided MCP session against the gateway on the bundled examples (run by scripts/demo).

It starts the example HTTP app, starts `aai-gateway` the way an MCP client would (a subprocess
speaking MCP on stdio), and shows each step an agent takes: tools/list, an app's guide,
aai_exec, and what an error looks like.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

EXAMPLES = Path(__file__).resolve().parent
HTTP_APP = EXAMPLES / "dev.aai.example.httpbin" / "server.py"
HTTP_PORT = 8765
BOLD, DIM, RESET = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")


def step(number: int, title: str) -> None:
    print(f"\n{BOLD}Step {number}. {title}{RESET}")


def show(label: str, value: Any, limit: int = 18) -> None:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    lines = text.splitlines()
    shown = lines[:limit] + ([f"{DIM}… {len(lines) - limit} more lines{RESET}"] if len(lines) > limit else [])
    print(f"  {label}")
    print(textwrap.indent("\n".join(shown), "    "))


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def start_http_app() -> subprocess.Popen[bytes] | None:
    if not port_is_free(HTTP_PORT):
        print(f"  port {HTTP_PORT} is already in use: the HTTP step will talk to whatever listens there")
        return None
    process = subprocess.Popen(
        [sys.executable, str(HTTP_APP), "--port", str(HTTP_PORT)], stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 10
    while port_is_free(HTTP_PORT) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"  example HTTP app listening on http://127.0.0.1:{HTTP_PORT} (pid {process.pid})")
    return process


def result_value(result: types.CallToolResult) -> Any:
    block = result.content[0]
    text = block.text if isinstance(block, types.TextContent) else str(block)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class DemoUser:
    """Stands in for the person at the MCP client: shows the consent question, answers it."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked += 1
        if not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        if self.asked == 1:
            show("the gateway asks the user first (MCP elicitation):", params.message, limit=14)
            print(f"  {DIM}the demo answers: Allow once (nothing is remembered){RESET}")
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})


def private_folders(root: Path) -> dict[str, str]:
    """The gateway's cache, config, consent decisions and data (the notes example keeps its notes
    there) in the demo's own folder: the demo never touches the user's."""
    names = {"XDG_CONFIG_HOME": "config", "XDG_CACHE_HOME": "cache", "XDG_STATE_HOME": "state"}
    return {"XDG_DATA_HOME": str(root), **{name: str(root / folder) for name, folder in names.items()}}


async def session(data_dir: str) -> None:
    gateway = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(EXAMPLES)],
        env={**os.environ, **private_folders(Path(data_dir))},
    )
    print(f"  MCP client started: {DIM}aai-gateway serve --no-default-paths --path examples{RESET}")
    info = types.Implementation(name="aai-gateway demo", version="1.0")
    async with Client(gateway, client_info=info, elicitation_callback=DemoUser()) as client:
        step(1, "tools/list: what the agent sees before the user says anything")
        listed = await client.list_tools()
        size = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]))
        for tool in listed.tools:
            description = (tool.description or "").replace("\n", " ")
            print(f"  {tool.name:<32} {description[:86]}{'…' if len(description) > 86 else ''}")
        tokens = size // 4
        print(f"  {DIM}{len(listed.tools)} entries, {size} bytes ≈ {tokens} tokens for all apps here{RESET}")

        step(2, "The agent picks the Notes app and calls its entry: app_dev_aai_example_notes")
        guide = result_value(await client.call_tool("app_dev_aai_example_notes", {}))
        show("operation guide (markdown):", guide, limit=24)

        step(3, "aai_exec: the user is asked for consent, then the app's stdio adapter runs it")
        note = {"title": "Demo note", "body": "Written through the AAI gateway", "tags": ["demo"]}
        added = await client.call_tool(
            "aai_exec", {"app": "dev.aai.example.notes", "tool": "add_note", "args": note}
        )
        show(f"aai_exec add_note {json.dumps(note, ensure_ascii=False)} →", result_value(added), limit=12)
        listed_notes = await client.call_tool(
            "aai_exec", {"app": "notes", "tool": "list_notes", "args": {"limit": 5}}
        )
        show("aai_exec list_notes (app found by name) →", result_value(listed_notes), limit=14)

        step(4, "The same aai_exec reaches an HTTP app: the local echo server")
        message = {"message": "Hello over HTTP", "metadata": {"sender": "demo", "labels": ["aai"]}}
        echoed = await client.call_tool(
            "aai_exec", {"app": "dev.aai.example.httpbin", "tool": "echo_message", "args": message}
        )
        value = result_value(echoed)
        if isinstance(value, dict) and "json" in value:
            value = {"method": value.get("method"), "url": value.get("url"), "json": value.get("json")}
        show("aai_exec echo_message → what the HTTP app received:", value, limit=16)

        step(5, "A wrong call gets an error the agent can act on")
        wrong = await client.call_tool(
            "aai_exec",
            {"app": "dev.aai.example.notes", "tool": "list_notes", "args": {"limit": 0, "sort": "size"}},
        )
        show(f"aai_exec list_notes {{limit: 0, sort: size}} → isError={wrong.is_error}", result_value(wrong))
    print(f"\n{BOLD}Done.{RESET} Add the gateway to your MCP client: README.md, 'Use it from an MCP client'.")


def main() -> int:
    print(f"{BOLD}AAI Gateway demo{RESET}: a real MCP session over stdio against examples/")
    http_app = start_http_app()
    try:
        with tempfile.TemporaryDirectory(prefix="aai-demo-") as data_dir:
            anyio.run(session, data_dir)
    finally:
        if http_app is not None:
            http_app.terminate()
            http_app.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
