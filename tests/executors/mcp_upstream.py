"""A small MCP server over stdio for the `mcp` executor's tests, built on the SDK's low-level
`Server`, with a tool for every behaviour the executor must handle: content of every kind, the
tool's own error, a protocol error, a crash, a hang, a frozen server, a flood, garbage, progress,
elicitation, sampling, a grandchild process. It speaks both protocol generations; with
`--legacy-only` it refuses `server/discover`, like a server of before 2026-07-28.

Its stdio is its own (not the SDK's `stdio_server`), so that tools can write to the real stdout.
Options: `--http PORT` (Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio; with `--stateless`
no session is kept between requests, and with `--json-response` each answer is one JSON body, not
an event stream, as servers behind load balancers run), `--legacy-only`,
`--exit-at-start` (writes to stderr and exits 3), `--tools-list error|hang|invalid` (tools/list is
answered with an error, never, or with one tool the SDK refuses), `--marker-dir DIR`
(where `hang` notes that it started and that it was cancelled, and `grandchild` the pid of what
it started), `--banner`
(a line that is not JSON on stdout before serving).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-tiny-").decode()
WAV = base64.b64encode(b"RIFF----WAVEfmt ").decode()
OBJECT: dict[str, Any] = {"type": "object"}
FORM = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}

TOOLS = [
    types.Tool(
        name="echo",
        description="Echo text",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    types.Tool(name="blocks", description="Every kind of content", input_schema=OBJECT),
    types.Tool(name="tool_error", description="A failure of the tool itself", input_schema=OBJECT),
    types.Tool(name="protocol_error", description="A JSON-RPC error", input_schema=OBJECT),
    types.Tool(name="crash", description="Exit during the call", input_schema=OBJECT),
    types.Tool(name="hang", description="Never answer", input_schema=OBJECT),
    types.Tool(name="freeze", description="Block the whole server", input_schema=OBJECT),
    types.Tool(
        name="flood",
        description="A huge answer",
        input_schema={"type": "object", "properties": {"size": {"type": "integer"}}},
    ),
    types.Tool(
        name="flood_id_last",
        description="A huge answer written as the TypeScript SDK writes it: its id last",
        input_schema={"type": "object", "properties": {"size": {"type": "integer"}}},
    ),
    types.Tool(
        name="garbage", description="Write a line that is not JSON, never answer", input_schema=OBJECT
    ),
    types.Tool(
        name="too_deep", description="Answer with JSON nested deeper than parsers read", input_schema=OBJECT
    ),
    types.Tool(
        name="bad_result", description="Answer with something that is no tool result", input_schema=OBJECT
    ),
    types.Tool(name="grandchild", description="Start a process that outlives the call", input_schema=OBJECT),
    types.Tool(
        name="crash_leaving_child", description="Exit while a child keeps stdout open", input_schema=OBJECT
    ),
    types.Tool(name="progress", description="Report progress", input_schema=OBJECT),
    types.Tool(name="ask", description="Ask the user (form)", input_schema=OBJECT),
    types.Tool(name="ask_url", description="Send the user to a page", input_schema=OBJECT),
    types.Tool(name="sample", description="Ask the client's model", input_schema=OBJECT),
    types.Tool(
        name="env",
        description="An environment variable, as it is",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    ),
    types.Tool(
        name="env_digest",
        description="The SHA-256 of an environment variable",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    ),
    types.Tool(name="cwd", description="The working directory", input_schema=OBJECT),
    types.Tool(name="pid", description="The server's process id", input_schema=OBJECT),
    types.Tool(
        name="header_digest",
        description="The SHA-256 of a request header (HTTP only)",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    ),
    types.Tool(
        name="header",
        description="A request header, as it is (HTTP only)",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    ),
    types.Tool(name="change_tools", description="Say that the tools changed", input_schema=OBJECT),
    types.Tool(
        name="slow",
        description="Answer after a while",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    types.Tool(
        name="shaped",
        description="Structured content that breaks its schema",
        input_schema=OBJECT,
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    ),
    types.Tool(
        name="backtracking",
        description="Structured content that a backtracking regex engine takes a minute to check",
        input_schema=OBJECT,
        output_schema={"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
    ),
]


class Wire:
    """stdin and stdout of this process, lines of JSON-RPC; tools may write to stdout too."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]


WIRE = Wire()
BUS = InMemorySubscriptionBus()
OPTIONS = argparse.Namespace()


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    arguments = params.arguments or {}
    name = params.name
    if name == "echo":
        return types.CallToolResult(
            content=[text(arguments["text"])],
            structured_content={"text": arguments["text"], "protocol": ctx.protocol_version},
        )
    if name == "blocks":
        return types.CallToolResult(
            content=[
                text("every kind"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
                types.AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
                types.ResourceLink(
                    type="resource_link", uri="file:///tmp/report.txt", name="report", mime_type="text/plain"
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="memo://one", mime_type="text/plain", text="embedded text"
                    ),
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="memo://two", mime_type="application/octet-stream", blob=PNG
                    ),
                ),
            ],
            structured_content={"kinds": 6, "nested": {"list": [1, 2, 3]}},
        )
    if name == "tool_error":
        return types.CallToolResult(content=[text("the disk is full")], is_error=True)
    if name == "protocol_error":
        leaked = f" ({os.environ[arguments['leak']]})" if "leak" in arguments else ""
        data: dict[str, Any] = {"why": "policy"}
        if "data_size" in arguments:  # a huge `data`, and the key the gateway's own transport uses
            data["blob"] = "d" * int(arguments["data_size"])
            data["aai_gateway_max_message_bytes"] = data["blob"]
        message = "the upstream refuses this" + "!" * int(arguments.get("message_size", 0))
        code = int(arguments.get("code", -32050))  # -32000: the generic "server error" of JSON-RPC
        raise MCPError(code=code, message=f"{message}{leaked}", data=data)
    if name in FAULTS:
        return await misbehave(ctx, name, arguments)
    if name == "progress":  # `count` steps (3), the first one's message `message_size` long
        count = int(arguments.get("count", 3))
        for step in range(1, count + 1):
            message = (
                f"step {step}" if step > 1 else "step 1" + "\u202e!\n" * int(arguments.get("message_size", 0))
            )
            await ctx.session.report_progress(step, count, message)
        return types.CallToolResult(content=[text("done")])
    if name in ("ask", "ask_url"):
        return await ask(ctx, params, url=name == "ask_url")
    if name == "sample":
        return await sample(ctx, params)
    if name == "env":
        return types.CallToolResult(content=[text(os.environ.get(arguments["name"], "<unset>"))])
    if name == "env_digest":
        value = os.environ.get(arguments["name"])
        digest = hashlib.sha256(value.encode()).hexdigest() if value is not None else "<unset>"
        return types.CallToolResult(content=[text(digest)])
    if name == "cwd":
        return types.CallToolResult(content=[text(os.getcwd())])
    if name == "change_tools":
        if modern(ctx):
            await BUS.publish(ToolsListChanged())
        else:
            await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[text("changed")])
    if name in ("header", "header_digest"):
        headers = getattr(ctx.request, "headers", {})
        value = headers.get(arguments["name"])
        shown = value if name == "header" or value is None else hashlib.sha256(value.encode()).hexdigest()
        return types.CallToolResult(content=[text(shown if shown is not None else "<unset>")])
    if name == "pid":
        return types.CallToolResult(content=[text(str(os.getpid()))])
    if name == "slow":
        await anyio.sleep(float(arguments.get("seconds", 1)))
        return types.CallToolResult(content=[text("slept")])
    if name == "shaped":
        return types.CallToolResult(content=[text("{}")], structured_content={"n": "not a number"})
    if name == "backtracking":
        return types.CallToolResult(content=[text("{}")], structured_content={"s": "a" * 30 + "!"})
    raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {name}")


FAULTS = frozenset(
    {
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
    }
)


async def misbehave(ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any]) -> Any:
    """The tools of a server behaving badly."""
    if name == "crash":
        leaked = f" ({os.environ[arguments['leak']]})" if "leak" in arguments else ""
        sys.stderr.write(f"about to crash: out of cheese{leaked}{'.' * int(arguments.get('pad', 0))}\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "crash_leaving_child":  # the child inherits stdout and keeps it open
        child = subprocess.Popen(["sleep", "600"])  # noqa: ASYNC220
        if OPTIONS.marker_dir:
            (Path(OPTIONS.marker_dir) / "grandchild.pid").write_text(str(child.pid))
        os._exit(4)
    if name == "hang":
        if OPTIONS.marker_dir:
            (Path(OPTIONS.marker_dir) / f"hanging-{os.getpid()}").write_text("hanging")
        try:
            await anyio.sleep_forever()
        finally:
            if OPTIONS.marker_dir:
                (Path(OPTIONS.marker_dir) / f"cancelled-{os.getpid()}").write_text("cancelled")
    if name == "freeze":
        time.sleep(3600)  # noqa: ASYNC251 (the point: the whole server stops answering)
    if name == "flood":
        return types.CallToolResult(content=[text("x" * int(arguments.get("size", 5 * 1024 * 1024)))])
    if name == "flood_id_last":
        result = {"content": [{"type": "text", "text": "x" * int(arguments["size"])}]}
        answer: dict[str, Any] = {"result": result, "jsonrpc": "2.0", "id": ctx.request_id}
        WIRE.write(json.dumps(answer).encode() + b"\n")
        await anyio.sleep_forever()
    if name == "too_deep":
        nested = "[" * 300 + "]" * 300
        WIRE.write(f'{{"jsonrpc": "2.0", "id": {json.dumps(ctx.request_id)}, "result": {nested}}}\n'.encode())
        await anyio.sleep_forever()
    if name == "garbage":
        leaked = os.environ[arguments["leak"]] if "leak" in arguments else ""
        line = f"{'x' * int(arguments.get('pad', 0))}{leaked}this is not json at all\n"
        WIRE.write(line.encode() * int(arguments.get("lines", 1)))
        await anyio.sleep_forever()
    if name == "bad_result":
        answer = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"content": "not a list"}}
        WIRE.write(json.dumps(answer).encode() + b"\n")
        await anyio.sleep_forever()
    if name == "grandchild":
        child = subprocess.Popen(["sleep", "600"])  # noqa: ASYNC220 (it must outlive the call)
        if OPTIONS.marker_dir:
            (Path(OPTIONS.marker_dir) / "grandchild.pid").write_text(str(child.pid))
        return types.CallToolResult(content=[text(str(child.pid))])
    raise AssertionError(name)


async def ask(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, *, url: bool) -> Any:
    request: types.ElicitRequestFormParams | types.ElicitRequestURLParams = (
        types.ElicitRequestURLParams(
            message="Sign in at the page", url="https://example.com/sign-in", elicitation_id="sign-in-1"
        )
        if url
        else types.ElicitRequestFormParams(
            message=(params.arguments or {}).get("message", "Which color?"), requested_schema=FORM
        )
    )
    if params.input_responses:
        answer = params.input_responses.get("q")
    elif modern(ctx):
        return types.InputRequiredResult(
            input_requests={"q": types.ElicitRequest(params=request)}, request_state="asked"
        )
    else:
        try:
            answer = await ctx.session.send_request(types.ElicitRequest(params=request), types.ElicitResult)
        except MCPError as exc:
            return types.CallToolResult(content=[text(f"elicitation refused: {exc.message}")], is_error=True)
    assert isinstance(answer, types.ElicitResult)
    return types.CallToolResult(
        content=[text(answer.action)], structured_content={"action": answer.action, "content": answer.content}
    )


async def sample(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    request = types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=text("hello"))], max_tokens=10
        )
    )
    if params.input_responses:
        return types.CallToolResult(content=[text("sampled")])
    if modern(ctx):
        return types.InputRequiredResult(input_requests={"s": request}, request_state="sampling")
    try:
        await ctx.session.send_request(request, types.CreateMessageResult)
    except MCPError as exc:
        return types.CallToolResult(content=[text(f"sampling refused: {exc.message}")], is_error=True)
    return types.CallToolResult(content=[text("sampled")])


async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
    if OPTIONS.tools_list == "error":
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")
    if OPTIONS.tools_list == "hang":
        await anyio.sleep_forever()
    if OPTIONS.tools_list == "invalid":  # written as is: the SDK's server would refuse it too
        tools = [tool.model_dump(by_alias=True, exclude_none=True) for tool in TOOLS]
        tools.append({"name": "not_an_object", "inputSchema": {"type": "string"}})
        answer = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"tools": tools}}
        WIRE.write(json.dumps(answer).encode() + b"\n")
        await anyio.sleep_forever()
    return types.ListToolsResult(tools=TOOLS)


def build() -> Server[Any]:
    return Server(
        "upstream-test",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(BUS),
    )


def serve_http(port: int) -> None:
    """Streamable HTTP on 127.0.0.1:`port`, at /mcp."""
    import uvicorn

    uvicorn.run(
        build().streamable_http_app(stateless_http=OPTIONS.stateless, json_response=OPTIONS.json_response),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,  # clients may keep their event stream open
    )


async def serve() -> None:
    server = build()
    incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage](100)

    async def read() -> None:
        async with incoming_writer:
            while line := await anyio.to_thread.run_sync(sys.stdin.buffer.readline, abandon_on_cancel=True):
                if not line.strip():
                    continue
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                if (
                    OPTIONS.legacy_only
                    and isinstance(message, types.JSONRPCRequest)
                    and (message.method == "server/discover")
                ):  # a server of before 2026-07-28 knows no such method
                    refusal = {
                        "jsonrpc": "2.0",
                        "id": message.id,
                        "error": {"code": types.METHOD_NOT_FOUND, "message": "Method not found"},
                    }
                    WIRE.write(json.dumps(refusal).encode() + b"\n")
                    continue
                await incoming_writer.send(SessionMessage(message))

    async def write() -> None:
        async with outgoing_reader:
            async for message in outgoing_reader:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                await anyio.to_thread.run_sync(WIRE.write, data)

    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        await server.run(incoming, outgoing, options)
        tasks.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy-only", action="store_true")
    parser.add_argument("--exit-at-start", action="store_true")
    parser.add_argument("--banner", action="store_true")
    parser.add_argument("--marker-dir")
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument(
        "--tools-list", choices=["error", "hang", "invalid"], help="answer tools/list so, not with the tools"
    )
    parser.parse_args(namespace=OPTIONS)
    if OPTIONS.exit_at_start:
        sys.stderr.write("cannot start: the configuration file is missing\n")
        sys.exit(3)
    if OPTIONS.banner:
        WIRE.write(b"Upstream test server starting...\n")
    if OPTIONS.http:
        serve_http(OPTIONS.http)
    else:
        anyio.run(serve)


if __name__ == "__main__":
    main()
