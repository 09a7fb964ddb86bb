"""Clients of older protocol versions: a 2025-06-18 client (elicitation, but no titled `oneOf`
choices yet) is asked with `enum` + `enumNames`, which it renders as labelled choices; newer
clients keep the titled `oneOf`. The old client here speaks JSON-RPC over the gateway's stdio
as such a client does, message by message."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from aai_gateway.server.ask import choice_property
from aai_gateway.server.consent_prompt import consent_schema
from tests.builders import write_json
from tests.consent.apps import question
from tests.server.conftest import adapter_app

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class OldClient:
    """A 2025-06-18 MCP client: the handshake, then requests, answering elicitations itself."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.buffer = b""
        self.asked: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            with anyio.fail_after(30):
                self.buffer += await self.process.stdout.receive()
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, request_id: int, method: str, params: dict[str, Any], choose: str = "") -> Any:
        await self.send({"id": request_id, "method": method, "params": params})
        while True:
            message = await self.receive()
            if message.get("method") == "elicitation/create":
                self.asked.append(message["params"])
                answer = {"action": "accept", "content": {"decision": choose}}
                await self.send({"id": message["id"], "result": answer})
            elif message.get("id") == request_id:
                return message


async def test_a_2025_06_18_client_is_asked_with_enum_and_enum_names_and_its_answer_counts(
    tmp_path: Path,
) -> None:
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    command = [
        sys.executable,
        "-m",
        "aai_gateway",
        "serve",
        "--no-default-paths",
        "--path",
        str(tmp_path / "apps"),
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")  # nothing trusted: the user is asked
    async with await anyio.open_process(command, env=env) as process:
        client = OldClient(process)
        hello = await client.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "old-client", "version": "0.9"},
            },
        )
        assert hello["result"]["protocolVersion"] == "2025-06-18"
        await client.send({"method": "notifications/initialized"})
        call = {
            "name": "aai_exec",
            "arguments": {"app": "dev.test.adapter", "tool": "echo", "args": {"text": "hi"}},
        }
        done = await client.request(2, "tools/call", call, choose="allow_once")
        assert process.stdin is not None
        await process.stdin.aclose()
    [asked] = client.asked
    decision = asked["requestedSchema"]["properties"]["decision"]
    assert "oneOf" not in decision
    assert decision["enum"] == ["allow_once", "allow_tool", "allow_app", "deny"]
    assert decision["enumNames"] == [
        "Allow once",
        "Always allow this tool",
        "Always allow all tools of this app",
        "Deny",
    ]
    assert not done["result"].get("isError"), done
    assert json.loads(done["result"]["content"][0]["text"])["params"]["text"] == "hi"


@pytest.mark.parametrize(
    ("version", "titled"),
    [
        ("2024-11-05", False),
        ("2025-03-26", False),
        ("2025-06-18", False),
        ("2025-11-25", True),
        ("2026-07-28", True),
    ],
)
def test_each_protocol_version_gets_the_choice_form_it_knows(version: str, titled: bool) -> None:
    options = [("a", "First"), ("b", "Second")]
    prop = choice_property("Pick", options, version)
    if titled:
        assert prop["oneOf"] == [{"const": "a", "title": "First"}, {"const": "b", "title": "Second"}]
        assert "enumNames" not in prop
    else:
        assert (prop["enum"], prop["enumNames"]) == (["a", "b"], ["First", "Second"])
        assert "oneOf" not in prop
    assert consent_schema(question(), version)["properties"]["decision"].keys() == prop.keys()
