"""Small builders of valid descriptors, shared by test modules outside tests/descriptor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.consent.config import parse_config_text
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.consent.store import ConsentStore


def c_descriptor(
    app_id: str, *, name: str = "Test App", platform: str = "linux", **execution: Any
) -> dict[str, Any]:
    """A valid dialect-C descriptor with one tool; `execution` defaults to a stdio adapter."""
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": platform,
        "app": {
            "id": app_id,
            "name": {"en": name, "zh-CN": f"{name}（中文）"},
            "defaultLang": "en",
            "description": f"{name} for tests",
        },
        "execution": execution or {"type": "stdio", "command": "adapter"},
        "tools": [
            {
                "name": "ping",
                "description": "Answer with pong",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        ],
    }


def mcp_descriptor(app_id: str, *, name: str = "Test Server", **execution: Any) -> dict[str, Any]:
    """A valid dialect-C `mcp` descriptor that leaves its tools to its server (no `tools`, no
    `platform`); `execution` defaults to a stdio server the tests never start."""
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {
            "id": app_id,
            "name": {"en": name},
            "defaultLang": "en",
            "description": f"{name} for tests",
        },
        "execution": {"type": "mcp", **(execution or {"command": "test-mcp-server", "args": ["--stdio"]})},
    }


def write_json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def trusting_config_text(apps: list[str]) -> str:
    listed = ", ".join(json.dumps(app) for app in apps)
    return f"[consent.auto_allow]\napps = [{listed}]\n"


def trusting_config(path: Path, apps: list[str]) -> Path:
    """A gateway config.toml that auto-allows `apps` (ids of local apps, or web origins), so tests
    about something other than consent run without being asked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(trusting_config_text(apps), encoding="utf-8")
    return path


def trusting_gate(*apps: str) -> ConsentGate:
    """An in-process consent gate (memory store) that auto-allows `apps`, and asks about others."""
    return ConsentGate(
        ConsentStore(MemorySecretStore()), parse_config_text(trusting_config_text(list(apps))).config
    )
