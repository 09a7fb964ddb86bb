"""The gateway's own stdio transport: raw bytes on a real gateway's stdin, answers on its stdout.

The SDK's own client cannot send what these tests send (a line that is not JSON, a 100 MB line),
so they write to the gateway's pipes themselves and speak JSON-RPC by hand.
"""

from __future__ import annotations

import json
import os
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
from mcp.shared.message import SessionMessage

from aai_gateway.executors.json_lines import LineSplitter, TooLong
from aai_gateway.server.jsonrpc_lines import encode_message, too_long_error
from aai_gateway.server.limits import DEFAULT_MAX_MESSAGE_BYTES
from aai_gateway.server.stdio_transport import stdio_transport
from tests.builders import write_json
from tests.server.conftest import adapter_app, gateway_command

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


async def test_a_too_long_request_written_id_last_as_typescript_clients_do_is_answered_with_its_id(
    apps_dir: Path,
) -> None:
    limit = 100_000
    arguments = {"app": "dev.test.adapter", "tool": "echo", "args": {"text": "x" * limit}}
    request = {"method": "tools/call", "params": {"name": "aai_exec", "arguments": arguments}}
    async with raw_gateway(apps_dir, "--max-message-bytes", str(limit)) as gateway:
        await gateway.handshake()
        await gateway.send(json.dumps({**request, "jsonrpc": "2.0", "id": 9}).encode() + b"\n")
        refused = await gateway.answer()

    assert refused == too_long_answer(9, limit)


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


async def test_a_request_whose_id_is_not_a_string_or_an_integer_is_invalid_request_with_a_null_id(
    apps_dir: Path,
) -> None:
    """The SDK would take each for a notification (its ids are strings and integers) and answer
    nothing: the client would wait forever."""
    ids = [b"1.5", b"1.0", b"1e3", b"null", b"true", b"[1]", b'{"a": 1}']
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        refused = []
        for request_id in ids:
            await gateway.send(b'{"jsonrpc": "2.0", "id": ' + request_id + b', "method": "ping"}\n')
            refused.append(await gateway.answer())
        names = await gateway.tool_names(4)

    assert [(answer["id"], answer["error"]["code"]) for answer in refused] == [(None, -32600)] * len(ids)
    assert (
        refused[0]["error"]["message"] == "Invalid Request: a request id is a string or an integer, not 1.5"
    )
    assert names[-2:] == ["web_discover", "aai_exec"]
    log = (apps_dir.parent / "gateway-stderr.log").read_text(encoding="utf-8")
    assert log.count("refused a message from the client: Invalid Request: a request id is") == len(ids)


def raw_call(request_id: int, args: bytes, *, method: bytes = b"tools/call") -> bytes:
    """A tools/call of the adapter's echo with `args` as raw JSON text."""
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": {"name": "aai_exec", "arguments": '
        b'{"app": "dev.test.adapter", "tool": "echo", "args": %s}}}\n' % (request_id, method, args)
    )


async def test_a_lone_surrogate_escape_reaches_the_gateway_which_answers_invalid_params_naming_it(
    apps_dir: Path,
) -> None:
    """JavaScript's JSON.stringify writes a broken surrogate pair as such an escape."""
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(raw_call(2, b'{"text": "a\\udc00b", "k\\ud800": 1}'))
        answer = await gateway.answer()

    assert answer["id"] == 2
    assert answer["result"]["isError"] is True
    error = json.loads(answer["result"]["content"][0]["text"])["error"]
    assert error["code"] == "INVALID_PARAMS"
    assert error["data"]["violations"] == [
        {"path": "/k\\ud800", "message": "text that is not valid Unicode (a lone surrogate U+D800)"},
        {"path": "/text", "message": "text that is not valid Unicode (a lone surrogate U+DC00)"},
    ]


async def test_a_search_or_an_entry_call_naming_half_a_character_is_invalid_params_naming_the_argument(
    apps_dir: Path,
) -> None:
    """Half of an emoji in the query, or in an operation name, was an INTERNAL_ERROR: the answer
    quoting it back could not be written."""
    search = (
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "aai_search", '
        b'"arguments": {"query": "send \\ud83d"}}}\n'
    )
    entry = (
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "app_dev_test_adapter", '
        b'"arguments": {"operations": ["echo", "e\\udc00"]}}}\n'
    )
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(search)
        searched = await gateway.answer()
        await gateway.send(entry)
        entered = await gateway.answer()

    errors = [json.loads(answer["result"]["content"][0]["text"])["error"] for answer in (searched, entered)]
    assert [error["code"] for error in errors] == ["INVALID_PARAMS", "INVALID_PARAMS"]
    assert "argument 'query' holds text that is not Unicode" in errors[0]["message"]
    assert "/query" in json.dumps(errors[0])
    assert "/operations/1" in json.dumps(errors[1])


@pytest.mark.parametrize("depth", [300, 50_000])
async def test_a_request_nested_past_the_limit_is_a_parse_error_carrying_its_id(
    apps_dir: Path, depth: int
) -> None:
    nested = b"[" * depth + b"]" * depth
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(raw_call(3, b'{"text": ' + nested + b"}"))
        refused = await gateway.answer()
        names = await gateway.tool_names(4)

    assert refused["id"] == 3
    assert refused["error"]["code"] == -32700
    assert refused["error"]["message"].endswith(
        "; the gateway reads at most 200 levels of objects and arrays"
    )
    assert refused["error"]["data"] == {"max_depth": 200}
    assert names[-2:] == ["web_discover", "aai_exec"]


async def test_an_unknown_method_spelled_with_a_lone_surrogate_is_answered_with_its_id(
    apps_dir: Path,
) -> None:
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/\\ud800"}\n')
        refused = await gateway.answer()

    assert refused == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32601, "message": "Method not found", "data": "tools/\\ud800"},
    }


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
async def test_a_request_with_a_million_violations_gets_a_short_answer_in_bounded_memory(
    apps_dir: Path,
) -> None:
    """Each array item of the wrong type is a violation: 1 million of them in a 2 MB request."""
    document = adapter_app()
    tags = {"type": "array", "items": {"type": "string", "minLength": 3}}
    document["tools"][0]["parameters"]["properties"]["tags"] = tags
    write_json(apps_dir / "adapter.json", document)
    items = 1_000_000
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        peak_before = gateway.peak_memory_bytes()
        await gateway.send(raw_call(6, b'{"text": "t", "tags": [' + b",".join([b"1"] * items) + b"]}"))
        answer = await gateway.answer()
        peak_growth = gateway.peak_memory_bytes() - peak_before

    error = json.loads(answer["result"]["content"][0]["text"])["error"]
    assert error["code"] == "INVALID_PARAMS"
    assert error["data"]["violations"] == [{"path": "/tags/0", "message": '1 is not of type "string"'}]
    assert error["data"]["violations_complete"] is False
    assert peak_growth < 200 * MB, f"peak memory grew by {peak_growth} bytes"


@pytest.mark.parametrize("ending", [b"\n", b""], ids=["with its newline", "without a newline"])
async def test_the_last_request_is_answered_when_input_ends_right_after_it(
    apps_dir: Path, ending: bytes
) -> None:
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await anyio.sleep(0.3)  # an idle session: the gateway waits for input
        await gateway.send(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}' + ending)
        await gateway.process.stdin.aclose()  # type: ignore[union-attr]
        answer = await gateway.answer()
        with anyio.fail_after(ANSWER_WAIT):
            ended = await gateway.process.wait()

    assert answer == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert ended == 0


async def test_calls_still_running_at_end_of_input_are_answered_before_the_gateway_ends(
    apps_dir: Path,
) -> None:
    sleep = {"app": "dev.test.adapter", "tool": "sleep", "args": {"seconds": 1}}
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "aai_exec", "arguments": sleep},
    }
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(json.dumps(call).encode() + b"\n" + echo_call(8, "second"))
        await gateway.process.stdin.aclose()  # type: ignore[union-attr]
        answers = {answer["id"]: answer for answer in [await gateway.answer(), await gateway.answer()]}
        with anyio.fail_after(ANSWER_WAIT):
            ended = await gateway.process.wait()

    assert answers[7]["result"].get("isError") is not True
    assert json.loads(answers[7]["result"]["content"][0]["text"])["tool"] == "sleep"
    assert json.loads(answers[8]["result"]["content"][0]["text"])["params"]["text"] == "second"
    assert ended == 0


async def test_sigterm_stops_the_gateway_without_waiting_for_a_running_call(apps_dir: Path) -> None:
    sleep = {"app": "dev.test.adapter", "tool": "sleep", "args": {"seconds": 600}}
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "aai_exec", "arguments": sleep},
    }
    async with raw_gateway(apps_dir) as gateway:
        await gateway.handshake()
        await gateway.send(json.dumps(call).encode() + b"\n")
        assert (await gateway.request(8, "ping"))["id"] == 8  # the call is running by now
        gateway.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(ANSWER_WAIT):
            stopped = await gateway.process.wait()
            rest = b"".join([chunk async for chunk in gateway.process.stdout])  # type: ignore[union-attr]

    assert stopped == 128 + signal.SIGTERM
    assert rest == b""  # the call was not answered: the gateway did not wait for it


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

    assert out == [
        TooLong(b"0123456789ABC", b"0123456789ABCmore of the long line and its end"),
        b"next line",
        b"last",
    ]


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


@pytest.mark.parametrize(
    ("end", "request_id"),
    [
        (b'aaa"}},"jsonrpc":"2.0","id":7}', 7),
        (b'aaa"}}, "jsonrpc": "2.0", "id": "r-\\"1\\""}\r', 'r-"1"'),
        (b'aaa\\",\\"id\\":7}"}}}', None),  # an "id" inside a string
        (b'aaa"}, "id": 7}}', None),  # the id of a nested object
        (b'aaa"}},"jsonrpc":"2.0","id":true}', None),
    ],
)
def test_the_id_of_a_long_request_is_read_from_its_last_bytes_when_its_method_leads(
    end: bytes, request_id: int | str | None
) -> None:
    start = b'{"method":"tools/call","params":{"arguments":{"text":"aaa'

    assert too_long_error(TooLong(start, end), 10).id == request_id


def test_a_tool_result_that_cannot_be_written_goes_out_as_an_internal_error_tool_result() -> None:
    result = {"content": [{"type": "text", "text": "a\ud800"}], "structuredContent": {"a\udc00": 1}}
    response = types.JSONRPCResponse(jsonrpc="2.0", id=4, result=result)

    written = json.loads(encode_message(response, "tools/call") or b"")

    assert written["id"] == 4
    assert written["result"]["isError"] is True
    error = json.loads(written["result"]["content"][0]["text"])["error"]
    assert error["code"] == "INTERNAL_ERROR"
    assert error["message"].startswith(
        "internal error in the gateway: the tool's result could not be written"
    )


def test_a_json_rpc_error_quoting_a_lone_surrogate_goes_out_with_it_in_letters() -> None:
    error = types.JSONRPCError(
        jsonrpc="2.0", id="r1", error=types.ErrorData(code=-32601, message="no \udc00", data="x\ud800")
    )

    written = json.loads(encode_message(error) or b"")

    assert written == {
        "jsonrpc": "2.0",
        "id": "r1",
        "error": {"code": -32601, "message": "no \\udc00", "data": "x\\ud800"},
    }


def test_a_response_too_deep_to_write_goes_out_as_an_error_for_its_request() -> None:
    deep: object = []
    for _ in range(1000):
        deep = [deep]
    response = types.JSONRPCResponse(jsonrpc="2.0", id=9, result={"deep": deep})

    written = json.loads(encode_message(response) or b"")

    assert written["id"] == 9
    assert written["error"]["code"] == types.INTERNAL_ERROR
    assert written["error"]["message"].startswith("Internal error: the result is not writable as JSON")


@pytest.mark.skipif(sys.platform == "win32", reason="pipes are written in a worker thread on Windows")
async def test_an_answer_larger_than_the_pipe_holds_reaches_a_reader_in_the_same_event_loop_whole() -> None:
    # Written at once while the pipe has room, the rest only after waiting for room: were a
    # full pipe written without waiting, the write would block the event loop, and with it
    # the reader below, for good.
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    text = "0123456789" * 200_000  # 2 MB: some thirty times what a pipe holds
    notification = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/x", params={"t": text})
    received = bytearray()

    async def read_one_line() -> None:
        while not received.endswith(b"\n"):
            await anyio.wait_readable(stdout_read)
            received.extend(os.read(stdout_read, 4096))

    try:
        async with stdio_transport(stdin_fd=stdin_read, stdout_fd=stdout_write) as (_, outgoing):
            with anyio.fail_after(ANSWER_WAIT):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(read_one_line)
                    await outgoing.send(SessionMessage(notification))
    finally:
        for descriptor in (stdin_read, stdin_write, stdout_read, stdout_write):
            os.close(descriptor)

    assert json.loads(received)["params"]["t"] == text
