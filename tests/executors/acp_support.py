"""Descriptors and helpers for tests of ACP apps, driven by the offline agent in acp_agent.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.executors import Invocation, ProgressReporter
from aai_gateway.executors.base import PermissionAsker

AGENT = Path(__file__).with_name("acp_agent.py")
LINE_AGENT = Path(__file__).with_name("line_agent.py")  # splits its input as str.splitlines() does
APP_ID = "dev.test.acpagent"


def acp_document(
    *,
    log: Path | None = None,
    timeout_ms: int | None = None,
    command: str = sys.executable,
    app_id: str = APP_ID,
    agent: Path = AGENT,
) -> dict[str, Any]:
    """A dialect-C descriptor of the test agent, with the three ACP tools and one unknown tool."""
    env = {"ACP_TEST_MARKER": "from-descriptor"}
    if log is not None:
        env["ACP_TEST_LOG"] = str(log)
    execution: dict[str, Any] = {
        "type": "acp",
        "start": {"command": command, "args": [str(agent)], "env": env},
    }
    if timeout_ms is not None:
        execution["timeout"] = timeout_ms
    session = {"sessionId": {"type": "string"}}
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "linux",
        "app": {
            "id": app_id,
            "name": {"en": "Test Agent"},
            "defaultLang": "en",
            "description": "An offline ACP agent for tests",
        },
        "execution": execution,
        "tools": [
            {
                "name": "new_session",
                "description": "Start a session",
                "parameters": {
                    "type": "object",
                    "properties": {"cwd": {"type": "string"}},
                    "required": ["cwd"],
                },
            },
            {
                "name": "prompt",
                "description": "Send a prompt",
                "parameters": {
                    "type": "object",
                    "properties": {**session, "cwd": {"type": "string"}, "prompt": {"type": "string"}},
                    "required": ["prompt"],
                },
            },
            {
                "name": "cancel",
                "description": "Cancel the running turn",
                "parameters": {"type": "object", "properties": session, "required": ["sessionId"]},
            },
            {"name": "summarize", "description": "Not an ACP operation", "parameters": {"type": "object"}},
        ],
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
    arguments: dict[str, Any],
    *,
    progress: ProgressReporter | None = None,
    ask_permission: PermissionAsker | None = None,
) -> Invocation:
    found = app.tool(tool)
    assert found is not None
    return Invocation(app, found, arguments, "test-1", progress, ask_permission=ask_permission)
