"""A gateway process over stdio, driven by the SDK's own MCP client in both protocol generations."""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.builders import c_descriptor, trusting_config, write_json

ADAPTER = Path(__file__).with_name("demo_adapter.py")
Connect = Callable[..., Any]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(
    scope="module", params=["legacy", "auto"], ids=["2025-11-25 handshake", "2026-07-28 per-request"]
)
def mode(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def adapter_app(app_id: str = "dev.test.adapter", *, timeout_ms: int = 20_000) -> dict[str, Any]:
    document = c_descriptor(
        app_id,
        name="Adapter",
        type="stdio",
        command=sys.executable,
        args=[str(ADAPTER)],
        timeout=timeout_ms,
    )
    document["app"]["aliases"] = ["echo box" if app_id == "dev.test.adapter" else f"{app_id} box"]
    document["tools"] = [
        {
            "name": "echo",
            "description": "Return the arguments",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "count": {"type": "integer", "minimum": 1, "default": 1},
                },
                "required": ["text"],
            },
        },
        {"name": "fail", "description": "Answer with an app error", "parameters": {"type": "object"}},
        {
            "name": "sleep",
            "description": "Wait",
            "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        },
    ]
    return document


def listing_config(apps_dir: Path, text: str) -> None:
    config = apps_dir.parent / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")


def big_app(count: int) -> dict[str, Any]:
    document = c_descriptor("dev.test.big", name="Big", type="http", baseUrl="http://127.0.0.1:9")
    document["tools"] = [
        {
            "name": f"op_{i:03d}",
            "description": f"Operation {i}: does one thing. Then explains how, at length.",
            "parameters": {
                "type": "object",
                "properties": {"target": {"type": "string", "description": "What it acts on"}},
                "required": ["target"],
            },
        }
        for i in range(count)
    ]
    return document


def fill_apps_dir(folder: Path) -> Path:
    """An adapter app (and a slow twin), an HTTP app nobody listens for, and a DBus app."""
    write_json(folder / "adapter.json", adapter_app())
    write_json(folder / "slow.json", adapter_app("dev.test.slow", timeout_ms=500))
    write_json(
        folder / "offline.json",
        c_descriptor(
            "dev.test.offline", name="Offline", type="http", baseUrl=f"http://127.0.0.1:{unused_port()}"
        ),
    )
    write_json(
        folder / "bus.json", c_descriptor("dev.test.bus", name="Bus", type="dbus", service="dev.test.Bus")
    )
    trusting_config(
        folder.parent / "config.toml",
        ["dev.test.adapter", "dev.test.slow", "dev.test.offline", "dev.test.bus"],
    )
    return folder


@pytest.fixture
def apps_dir(tmp_path: Path) -> Path:
    """A fresh folder of apps for tests that change it or need their own gateway."""
    return fill_apps_dir(tmp_path / "apps")


@pytest.fixture(scope="module")
def shared_apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fill_apps_dir(tmp_path_factory.mktemp("shared") / "apps")


@pytest.fixture(scope="module")
async def gateway(shared_apps: Path, mode: str) -> AsyncIterator[Client]:
    """One gateway process per protocol generation, shared by a module's read-only tests.
    Its log (INFO) is at `shared_apps.parent / f"gateway-{mode}.log"`."""
    log = shared_apps.parent / f"gateway-{mode}.log"
    async with connected(
        shared_apps, mode, "--log-level", "INFO", "--log-file", str(log), name="agent-x"
    ) as client:
        yield client


def gateway_command(folder: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(folder), *extra],
        env={
            "HOME": str(folder.parent),
            "PATH": "/usr/bin:/bin",
            "AAI_GATEWAY_CONFIG": str(folder.parent / "config.toml"),
        },
    )


@asynccontextmanager
async def connected(
    folder: Path, mode: str, *extra: str, name: str = "test-agent", **client_options: Any
) -> AsyncIterator[Client]:
    async with Client(
        gateway_command(folder, *extra),
        mode=mode,
        client_info=types.Implementation(name=name, version="1.0"),
        **client_options,
    ) as client:
        yield client
