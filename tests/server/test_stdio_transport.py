"""The gateway's own stdio transport: raw bytes on a real gateway's stdin, answers on its stdout.

The SDK's own client cannot send what these tests send (a line that is not JSON, a 100 MB line),
so they write to the gateway's pipes themselves and speak JSON-RPC by hand.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.server.limits import DEFAULT_MAX_MESSAGE_BYTES
from aai_gateway.server.stdio_transport import LineSplitter, TooLong, encode_message, too_long_error
from tests.server.conftest import gateway_command

pytestmark = pytest.mark.anyio
ANSWER_WAIT = 60  # only a guard against a hang: no answer at all is the failure
MB = 1_000_000


class RawGateway:
    """A gateway process spoken to in raw bytes: one JSON-RPC message per line."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, data: bytes) -> None:
        await self._stdin.send(data)

    async def answer(self) -> dict[str, Any]:
        with anyio.fail_after(ANSWER_WAIT):
            line = await self._stdout.receive_until(b"\n", 16 * MB)
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(
        self, request_id: int, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(json.dumps(message).encode() + b"\n")
        return await self.answer()

    async def handshake(self) -> None:
        client = {"name": "raw-test", "version": "1.0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        assert "result" in await self.request(1, "initialize", params)
        await self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    async def tool_names(self, request_id: int) -> list[str]:
        listed = await self.request(request_id, "tools/list")
        return [tool["name"] for tool in listed["result"]["tools"]]

    def peak_memory_bytes(self) -> int:
        """The process's peak resident set size so far (VmHWM)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024


@asynccontextmanager
async def raw_gateway(apps: Path, *options: str) -> AsyncIterator[RawGateway]:
    command = gateway_command(apps, *options)
    log = (apps.parent / "gateway-stderr.log").open("wb")
    async with await anyio.open_process(
        [command.command, *command.args], env=command.env, stderr=log
    ) as process:
        try:
            yield RawGateway(process)
        finally:
            if process.returncode is None:
                process.kill()
            log.close()


def too_long_answer(request_id: int | None, limit: int = DEFAULT_MAX_MESSAGE_BYTES) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32600,
            "message": f"Invalid Request: the message is longer than {limit} bytes, the most this "
            "gateway reads (its --max-message-bytes option); it was skipped unread",
            "data": {"max_message_bytes": limit},
        },
    }


def echo_call(request_id: int, text: str) -> bytes:
    arguments = {"app": "dev.test.adapter", "tool": "echo", "args": {"text": text}}
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "aai_exec", "arguments": arguments},
    }
    return json.dumps(message).encode() + b"\n"


# --------------------------------------------------------------------------- the real gateway


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
async def test_a_100_mb_line_is_answered_with_an_error_in_bounded_memory_and_serving_goes_on(
    apps_dir: Path,
) -> None:
    line_bytes = 100 * MB
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        peak_before = gateway.peak_memory_bytes()
        start = echo_call(7, "")[:-4]  # up to the opening quote of "text"
        await gateway.send(start)
        for _ in range(line_bytes // MB):
            await gateway.send(b"a" * MB)
        await gateway.send(b'"}}}}\n')
        refused = await gateway.answer()
        peak_growth = gateway.peak_memory_bytes() - peak_before
        names = await gateway.tool_names(8)

    assert refused == too_long_answer(7)
    assert peak_growth < line_bytes // 5, f"peak memory grew by {peak_growth} bytes"
    assert names[-2:] == ["web_discover", "aai_exec"]


@pytest.mark.parametrize(
    "line",
    [
        b"this is not JSON",
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"',  # cut short
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"n": NaN}}',
        b"\xff\xfe not UTF-8",
        b"[" * 5000 + b"]" * 5000,
    ],
    ids=["text", "cut short", "NaN", "not UTF-8", "nested 5000 deep"],
)
async def test_a_line_that_is_not_json_is_answered_with_parse_error_and_serving_goes_on(
    apps_dir: Path, line: bytes
) -> None:
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(line + b"\n")
        refused = await gateway.answer()
        names = await gateway.tool_names(4)

    assert refused["id"] is None
    assert refused["error"]["code"] == -32700
    assert refused["error"]["message"].startswith("Parse error: the line is not JSON (")
    assert names[-2:] == ["web_discover", "aai_exec"]


@pytest.mark.parametrize(
    ("line", "request_id", "fault"),
    [
        (b'{"hello": "world"}', None, 'needs "jsonrpc": "2.0"'),
        (b'"just a string"', None, "a JSON-RPC message is a JSON object"),
        (b'[{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]', None, "a batch"),
        (b'{"jsonrpc": "2.0", "id": 5, "method": 42}', 5, "not a JSON-RPC request"),
        (b'{"jsonrpc": "2.0", "id": "five", "method": ["tools/list"]}', "five", "not a JSON-RPC request"),
        (b'{"jsonrpc": "2.0", "id": 5}', None, "not a JSON-RPC request"),  # a request or a response?
    ],
)
async def test_json_that_is_not_json_rpc_is_answered_with_invalid_request_and_its_id(
    apps_dir: Path, line: bytes, request_id: int | str | None, fault: str
) -> None:
    async with raw_gateway(apps_dir) as gateway:
        await gateway.send(b"\n  \r\n")  # blank lines are no messages: nothing to answer
        await gateway.send(line + b"\n")
        refused = await gateway.answer()
        await gateway.handshake()
        names = await gateway.tool_names(6)

    assert refused["id"] == request_id
    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"].startswith("Invalid Request: ")
    assert fault in refused["error"]["message"]
    assert names[-2:] == ["web_discover", "aai_exec"]


async def test_the_message_size_limit_is_an_option(apps_dir: Path) -> None:
    limit = 100_000
    async with raw_gateway(apps_dir, "--max-message-bytes", str(limit)) as gateway:
        await gateway.handshake()
        await gateway.send(echo_call(2, "x" * limit))
        refused = await gateway.answer()
        await gateway.send(echo_call(3, "y" * (limit - 1000)))
        answered = await gateway.answer()

    assert refused == too_long_answer(2, limit)
    assert answered["id"] == 3
    assert json.loads(answered["result"]["content"][0]["text"])["params"]["text"] == "y" * (limit - 1000)


async def test_an_idle_gateway_ends_at_end_of_input_and_on_sigterm(apps_dir: Path) -> None:
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.process.stdin.aclose()  # type: ignore[union-attr]
        with anyio.fail_after(ANSWER_WAIT):
            ended = await gateway.process.wait()
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        gateway.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(ANSWER_WAIT):
            stopped = await gateway.process.wait()

    assert (ended, stopped) == (0, 128 + signal.SIGTERM)


async def test_stdout_carries_only_protocol_messages_while_serving(tmp_path: Path) -> None:
    """Prints, writes to descriptor 1 and child processes' output go to stderr instead."""
    script = tmp_path / "serve.py"
    script.write_text(
        """
import os, subprocess, sys
import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from aai_gateway.server.stdio_transport import stdio_transport

async def main():
    async with stdio_transport() as (incoming, outgoing):
        async for item in incoming:
            print("a stray print", flush=True)
            os.write(1, b"a raw write to descriptor 1\\n")
            subprocess.run(["/bin/echo", "a child's output"], check=True)
            subprocess.run(["/bin/cat"], check=True, timeout=30)  # reads the null device, not ours
            answer = types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={"seen": True})
            await outgoing.send(SessionMessage(answer))

anyio.run(main)
print("stdout is back", flush=True)
""",
        encoding="utf-8",
    )
    request = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n'
    )
    with anyio.fail_after(ANSWER_WAIT):
        done = await anyio.run_process([sys.executable, str(script)], input=request, check=False)

    lines = done.stdout.decode().splitlines()
    assert lines[:2] == [
        json.dumps({"jsonrpc": "2.0", "id": i, "result": {"seen": True}}, separators=(",", ":"))
        for i in (1, 2)
    ]
    assert lines[2:] == ["stdout is back"]
    assert done.stderr.decode().count("a raw write to descriptor 1") == 2
    assert "a child's output" in done.stderr.decode()


# --------------------------------------------------------------------------- framing, in memory


@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
)
def test_lines_come_out_whole_however_the_input_is_cut_and_long_ones_are_marked(
    lines: list[bytes], cuts: list[int]
) -> None:
    limit = 20
    data = b"".join(line + b"\n" for line in lines)
    splitter = LineSplitter(limit)
    out: list[bytes | TooLong] = []
    previous = 0
    for cut in sorted({min(c, len(data)) for c in cuts} | {len(data)}):
        out += splitter.feed(data[previous:cut])
        previous = cut
    out += splitter.finish()

    expected = [line if len(line) <= limit else "long" for line in lines]
    assert [item if isinstance(item, bytes) else "long" for item in out] == expected


def test_a_long_line_is_dropped_up_to_its_newline_and_the_next_line_is_whole() -> None:
    splitter = LineSplitter(10)

    out = splitter.feed(b"0123456789ABC")
    out += splitter.feed(b"more of the long line")
    out += splitter.feed(b" and its end\nnext line\nlast")
    out += splitter.finish()

    assert out == [TooLong(b"0123456789ABC"), b"next line", b"last"]


@pytest.mark.parametrize(
    ("start", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"text":"aaaa', 7),
        (b'{"method": "tools/call", "id": "r-\\"1\\"", "params": {"x": "', 'r-"1"'),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"id":5,"method":"x","args":"aaa', None),
        (b'{"jsonrpc":"2.0","params":{"text":"aaa', None),  # the id comes after the params
        (b'{"jsonrpc":"2.0","id":7,"result":{"text":"aaa', None),  # a response, not a request
        (b'{"jsonrpc":"2.0","id":true,"method":"x","params":"', None),
        (b'["id", 7, "method", "x", "', None),
    ],
)
def test_the_id_of_a_long_request_is_read_from_its_first_bytes_when_they_show_it(
    start: bytes, request_id: int | str | None
) -> None:
    assert too_long_error(TooLong(start), 10).id == request_id


def test_a_response_too_deep_to_write_goes_out_as_an_error_for_its_request() -> None:
    deep: object = []
    for _ in range(1000):
        deep = [deep]
    response = types.JSONRPCResponse(jsonrpc="2.0", id=9, result={"deep": deep})

    written = json.loads(encode_message(response) or b"")

    assert written["id"] == 9
    assert written["error"]["code"] == types.INTERNAL_ERROR
    assert written["error"]["message"].startswith("Internal error: the result is not writable as JSON")
