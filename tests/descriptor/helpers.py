"""Shared builders for the descriptor tests: spec fixtures, minimal valid descriptors, loading."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import LoadResult, Platform, Source, load_text
from aai_gateway.errors import Problem

SPEC_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "spec"
FRAGMENTS_FILE = SPEC_DIR / "fragments.json"
HOSTS: tuple[Platform, ...] = ("linux", "macos", "windows")

JsonDict = dict[str, Any]


def spec_fixture_paths() -> list[Path]:
    """Every descriptor in tests/fixtures/spec (fragments.json holds pieces, not descriptors)."""
    return sorted(p for p in SPEC_DIR.glob("*.json") if p != FRAGMENTS_FILE)


def read_fixture(name: str) -> JsonDict:
    document: JsonDict = json.loads((SPEC_DIR / name).read_text(encoding="utf-8"))
    return document


def fragments() -> JsonDict:
    document: JsonDict = json.loads(FRAGMENTS_FILE.read_text(encoding="utf-8"))
    return document


def source(location: str = "test/aai.json") -> Source:
    return Source(kind="file", location=location)


def load(document: JsonDict | str | bytes, host: Platform = "linux") -> LoadResult:
    """Load a descriptor given as a Python document (serialized here) or as raw text."""
    data = document if isinstance(document, str | bytes) else json.dumps(document, ensure_ascii=False)
    return load_text(data, source(), host)


def error_pointers(result: LoadResult) -> list[str]:
    return [p.pointer for p in result.errors]


def only_error(result: LoadResult) -> Problem:
    """The single error of a result that must have exactly one (the failure lists them all)."""
    assert result.descriptor is None, "expected the descriptor to be rejected"
    assert len(result.errors) == 1, [p.render() for p in result.errors]
    return result.errors[0]


def rendered(result: LoadResult) -> list[str]:
    return [p.render() for p in result.problems]


# --------------------------------------------------------------------------- minimal valid descriptors


def search_tool_parameters() -> JsonDict:
    return {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["query"],
    }


def valid_a(platform: str = "macos") -> JsonDict:
    """A dialect-A descriptor; `web` gets http + base_url, the desktop platforms `ipc`."""
    document: JsonDict = {
        "schema_version": "1.0",
        "version": "1.0.0",
        "platform": platform,
        "app": {
            "id": "com.example.notes",
            "name": "Notes|笔记",
            "description": "Note taking",
            "aliases": ["memo"],
        },
        "execution": {"type": "ipc"},
        "tools": [
            {"name": "search", "description": "Search notes", "parameters": search_tool_parameters()},
            {"name": "open", "description": "Open a note", "parameters": {"type": "object"}},
        ],
    }
    if platform == "web":
        document["execution"] = {
            "type": "http",
            "base_url": "https://api.example.com/v1",
            "default_headers": {"Accept": "application/json"},
        }
        document["tools"][0]["execution"] = {"path": "/search", "method": "POST"}
        document["tools"][1]["execution"] = {"path": "/notes/{query}", "method": "GET"}
        document["tools"][1]["parameters"] = search_tool_parameters()
    return document


def valid_c(platform: str = "web") -> JsonDict:
    """A dialect-C descriptor; `web` uses http with an apiKey, `macos` Apple Events."""
    document: JsonDict = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": platform,
        "app": {
            "id": "com.example.notes",
            "name": {"en": "Notes", "zh-CN": "笔记"},
            "defaultLang": "en",
            "description": "Note taking",
            "aliases": ["memo"],
        },
        "execution": {"type": "apple-events"},
        "tools": [
            {"name": "search", "description": "Search notes", "parameters": search_tool_parameters()},
            {"name": "open", "description": "Open a note", "parameters": {"type": "object"}},
        ],
    }
    if platform == "web":
        document["execution"] = {
            "type": "http",
            "baseUrl": "https://api.example.com/v1",
            "defaultHeaders": {"Accept": "application/json"},
        }
        document["auth"] = {
            "type": "apiKey",
            "apiKey": {"location": "header", "name": "X-Token", "obtainUrl": "https://example.com/tokens"},
        }
        document["tools"][0]["execution"] = {"path": "/search", "method": "POST"}
        document["tools"][1]["execution"] = {"path": "/notes/{query}", "method": "GET"}
        document["tools"][1]["parameters"] = search_tool_parameters()
    return document


def valid_mcp(transport: str = "stdio") -> JsonDict:
    """A dialect-C `mcp` descriptor without `platform` and `tools` (the server lists them):
    `stdio` starts `uvx mcp-server-time`, `http` reaches a Streamable HTTP server."""
    document: JsonDict = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {
            "id": "time",
            "name": {"en": "Time"},
            "defaultLang": "en",
            "description": "Current time and time-zone conversion",
            "aliases": ["clock"],
        },
        "execution": {
            "type": "mcp",
            "command": "uvx",
            "args": ["mcp-server-time"],
            "cwd": "/abs/dir",
            "env": {"TZ": "UTC", "GITHUB_TOKEN": {"secret": "GITHUB_TOKEN"}, "OTHER": {"env": "MY_VAR"}},
            "timeout": 60000,
        },
    }
    if transport == "http":
        document["execution"] = {
            "type": "mcp",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": {"secret": "authorization"}, "X-Plain": "value"},
        }
    return document


def valid_b() -> JsonDict:
    """A dialect-B descriptor with a macos, linux and web section."""
    return {
        "schema_version": "1.0",
        "appId": "com.example.notes",
        "name": "Notes|笔记",
        "description": "Note taking",
        "version": "1.0",
        "aliases": ["memo"],
        "platforms": {
            "macos": {
                "automation": "applescript",
                "tools": [
                    {
                        "name": "search",
                        "description": "Search notes",
                        "parameters": search_tool_parameters(),
                        "script": 'tell application "Notes" to search "${query}"',
                    }
                ],
            },
            "linux": {
                "automation": "dbus",
                "service": "org.example.Notes",
                "object": "/org/example/Notes",
                "interface": "org.example.Notes",
                "tools": [
                    {
                        "name": "search",
                        "description": "Search notes",
                        "parameters": search_tool_parameters(),
                        "method": "Search",
                    }
                ],
            },
            "web": {
                "automation": "restapi",
                "base_url": "https://api.example.com/v1",
                "default_headers": {"Accept": "application/json"},
                "tools": [
                    {
                        "name": "search",
                        "description": "Search notes",
                        "parameters": search_tool_parameters(),
                        "endpoint": "/search",
                        "method": "POST",
                        "body": {"query": "${query}"},
                    }
                ],
            },
        },
    }


def with_changes(document: JsonDict, *changes: tuple[str, Any]) -> JsonDict:
    """A deep copy of `document` with each (`/json/pointer`, value) set; value `DELETE` removes."""
    result = copy.deepcopy(document)
    for pointer, value in changes:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        parent: Any = result
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if isinstance(parent, list):
            if value is DELETE:
                del parent[int(last)]
            else:
                parent[int(last)] = value
        elif value is DELETE:
            del parent[last]
        else:
            parent[last] = value
    return result


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE: Any = _Delete()
