"""MCP servers nobody here wrote, behind the gateway: PyPI's `mcp-server-time` and
`mcp-server-git` over stdio, npm's `@modelcontextprotocol/server-everything` over stdio and over
Streamable HTTP. The SDK's client talks to a gateway process in both protocol generations; the
gateway talks to each server in the newest generation it knows (these speak 2025-11-25)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from tests.builders import trusting_config, write_json
from tests.peers import everything, mcp_server_git, mcp_server_time
from tests.server.conftest import connected, unused_port

pytestmark = pytest.mark.anyio

EVERYTHING_TOOLS = (
    "echo",
    "get-tiny-image",
    "trigger-long-running-operation",
    "get-structured-content",
    "trigger-elicitation-request",
)


def mcp_app(app_id: str, name: str, execution: dict[str, Any], tools: tuple[str, ...]) -> dict[str, Any]:
    """A descriptor declaring the server's tools by name (their schemas are the server's to check)."""
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {"id": app_id, "name": {"en": name}, "defaultLang": "en", "description": f"{name} for tests"},
        "execution": {"type": "mcp", "timeout": 30_000, **execution},
        "tools": [{"name": tool, "description": tool, "parameters": {"type": "object"}} for tool in tools],
    }


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    """The everything server over Streamable HTTP, started by the test on a free port."""
    port = unused_port()
    process = subprocess.Popen(
        [*everything(), "streamableHttp"],
        env={"PORT": str(port), "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (
                    "the everything server did not start"
                )
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory, everything_url: str) -> Path:
    root = tmp_path_factory.mktemp("real-mcp")
    repo = root / "repo"
    repo.mkdir()
    for git_args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@example.com"]):
        subprocess.run(["git", *git_args], cwd=repo, check=True)
    (repo / "notes.txt").write_text("untracked\n", encoding="utf-8")
    folder = root / "apps"
    write_json(
        folder / "time" / "aai.json",
        mcp_app(
            "dev.test.time",
            "Time",
            {"command": mcp_server_time(), "args": ["--local-timezone", "UTC"]},
            ("get_current_time",),
        ),
    )
    write_json(
        folder / "git" / "aai.json",
        mcp_app(
            "dev.test.git",
            "Git",
            {"command": mcp_server_git(), "args": ["--repository", str(repo)]},
            ("git_status",),
        ),
    )
    command, *args = everything()
    write_json(
        folder / "everything" / "aai.json",
        mcp_app(
            "dev.test.everything",
            "Everything",
            {"command": command, "args": [*args, "stdio"]},
            EVERYTHING_TOOLS,
        ),
    )
    write_json(
        folder / "everything-http" / "aai.json",
        mcp_app("dev.test.everythinghttp", "Everything over HTTP", {"url": everything_url}, EVERYTHING_TOOLS),
    )
    imported = mcp_app(
        "dev.test.timeimported",
        "Time, tools from the server",
        {"command": mcp_server_time(), "args": ["--local-timezone", "UTC"]},
        (),
    )
    del imported["tools"]  # as `aai-gateway import` writes it: the server lists its own tools
    write_json(folder / "time-imported" / "aai.json", imported)
    trusting_config(
        root / "config.toml",
        [
            "dev.test.time",
            "dev.test.git",
            "dev.test.everything",
            "dev.test.everythinghttp",
            "dev.test.timeimported",
        ],
    )
    (root / "repo-path").write_text(str(repo), encoding="utf-8")
    return folder


async def answer_elicitation(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    return types.ElicitResult(action="decline")


@pytest.fixture(scope="module")
async def gateway(apps: Path, mode: str) -> AsyncIterator[Client]:
    async with connected(apps, mode, name="agent-real", elicitation_callback=answer_elicitation) as client:
        yield client


async def exec_tool(
    client: Client, app: str, tool: str, args: dict[str, Any] | None = None, **options: Any
) -> types.CallToolResult:
    result = await client.call_tool("aai_exec", {"app": app, "tool": tool, "args": args or {}}, **options)
    if result.is_error:
        pytest.fail(f"{app} {tool} failed: {result.content}")
    return result


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def test_mcp_server_time_tells_the_time(gateway: Client) -> None:
    result = await exec_tool(gateway, "dev.test.time", "get_current_time", {"timezone": "UTC"})

    answer = json.loads(texts(result)[0])
    assert answer["timezone"] == "UTC" and "datetime" in answer


async def test_a_server_that_lists_its_own_tools_has_them_in_its_guide_and_they_run(gateway: Client) -> None:
    listed = await gateway.list_tools()
    [entry] = [tool for tool in listed.tools if "timeimported" in tool.name]

    guide = await gateway.call_tool(entry.name, {})
    text = "\n".join(texts(guide))
    assert "get_current_time" in text and "convert_time" in text  # read from the server itself
    assert "timezone" in text  # with the parameters of its own inputSchema
    result = await exec_tool(gateway, "dev.test.timeimported", "get_current_time", {"timezone": "UTC"})
    assert json.loads(texts(result)[0])["timezone"] == "UTC"


async def test_mcp_server_git_reports_the_status_of_a_repository(gateway: Client, apps: Path) -> None:
    repo = (apps.parent / "repo-path").read_text(encoding="utf-8")

    result = await exec_tool(gateway, "dev.test.git", "git_status", {"repo_path": repo})

    assert "notes.txt" in texts(result)[0]


@pytest.fixture(params=["dev.test.everything", "dev.test.everythinghttp"], ids=["stdio", "streamable HTTP"])
def everything_app(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


async def test_everything_echoes(gateway: Client, everything_app: str) -> None:
    result = await exec_tool(gateway, everything_app, "echo", {"message": "through the gateway"})

    assert texts(result) == ["Echo: through the gateway"]


async def test_everything_returns_its_image_as_an_image(gateway: Client, everything_app: str) -> None:
    result = await exec_tool(gateway, everything_app, "get-tiny-image")

    images = [block for block in result.content if isinstance(block, types.ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png" and len(images[0].data) > 100


async def test_everything_reports_progress_of_a_long_operation(gateway: Client, everything_app: str) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    result = await exec_tool(
        gateway,
        everything_app,
        "trigger-long-running-operation",
        {"duration": 0.6, "steps": 3},
        progress_callback=progress,
    )

    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert "Long running operation completed" in texts(result)[0]


async def test_everything_returns_structured_content(gateway: Client, everything_app: str) -> None:
    result = await exec_tool(gateway, everything_app, "get-structured-content", {"location": "Chicago"})

    assert result.structured_content is not None
    assert {"temperature", "conditions", "humidity"} <= result.structured_content.keys()


async def test_everythings_question_reaches_the_user_or_the_server_hears_why_not(
    gateway: Client, everything_app: str, mode: str
) -> None:
    result = await gateway.call_tool(
        "aai_exec", {"app": everything_app, "tool": "trigger-elicitation-request"}
    )

    if mode == "legacy":  # the gateway asks this client during the call; it declines
        assert result.is_error is False
        assert any("decline" in text.lower() for text in texts(result)), texts(result)
    else:  # nobody can be asked during a 2026-07-28 call: the server gets an error saying so
        assert result.is_error is True
        assert "the AAI gateway could not put this question to the user" in texts(result)[0]
