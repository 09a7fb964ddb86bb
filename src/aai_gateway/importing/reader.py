"""`read_config`: one file, whatever client wrote it, to every server it configures.

The shape is recognised by content, not by the file's name:

| content | format | client |
|---|---|---|
| TOML with `mcp_servers` | `codex` | Codex |
| JSON with `servers` (and `inputs`) | `vscode` | VS Code's `mcp.json` |
| JSON with `mcp.servers` | `vscode-settings` | VS Code's `settings.json` (earlier form) |
| JSON with `projects` | `claude-code-user` | Claude Code's `~/.claude.json` (user, project servers) |
| JSON with `mcpServers` | `mcpServers` | Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI |

A file with several of these sections is read for each. Which client's reference syntax applies
is the caller's `client` when it knows (a default location), else what the content says:
`httpUrl` or Gemini's `mcp` settings mean Gemini CLI, `serverUrl` Windsurf, anything else in
`mcpServers` shape stays `generic`.

Nothing here raises for what a file contains: every problem is recorded with its location, and
one bad entry never keeps the others out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..descriptor.quoting import quoted
from ..errors import Problem, json_pointer
from .entries import read_codex_entry, read_json_entry
from .fields import Setting, Token, kind_of
from .model import CLAUDE_CODE, CODEX, GEMINI, GENERIC, VSCODE, WINDSURF, ConfigReport, FoundServer
from .text import MAX_CONFIG_BYTES, Parsed, parse_text, read_text
from .values import Input

_NOT_MCP = (
    "holds no MCP server configuration: expected mcpServers (Claude Desktop, Claude Code, Cursor, "
    "Gemini CLI, Windsurf), servers (VS Code mcp.json), mcp.servers (VS Code settings), projects "
    "(Claude Code ~/.claude.json) or a TOML mcp_servers table (Codex)"
)


def read_config(path: Path, client: str | None = None, *, max_bytes: int = MAX_CONFIG_BYTES) -> ConfigReport:
    """Every server configured in the file at `path`. `client`: the client whose file it is,
    when the caller knows (it decides which references are resolved); None to tell from the
    content."""
    text, problem = read_text(path, max_bytes)
    if text is None:
        return _located(ConfigReport(path, client or GENERIC, None), [problem] if problem else [])
    parsed = parse_text(text)
    if parsed.problem is not None:
        return _located(ConfigReport(path, client or GENERIC, None), [parsed.problem])
    return _read_document(path, parsed, client)


def toml_path(tokens: tuple[Token, ...]) -> str:
    """`mcp_servers.git.env.TOKEN`; keys that are not bare TOML keys are quoted."""
    return ".".join(
        str(token) if isinstance(token, int) or _bare(token) else json.dumps(token, ensure_ascii=False)
        for token in tokens
    )


def _read_document(path: Path, parsed: Parsed, client: str | None) -> ConfigReport:
    document = parsed.document
    if not isinstance(document, dict):
        problem = Problem("", f"holds {kind_of(document)}, not a configuration object")
        return _located(ConfigReport(path, client or GENERIC, None), [problem])
    if parsed.syntax == "toml":
        return _read_codex(path, document, client or CODEX)
    formats: list[str] = []
    servers: list[FoundServer] = []
    problems: list[Problem] = []
    chosen = client or _guess_client(document)

    def section(
        tokens: tuple[Token, ...],
        setting: Setting,
        disabled: Callable[[str], bool] | None = None,
        project: str | None = None,
    ) -> None:
        entries = document
        for token in tokens:
            entries = entries[token]
        found, issues = _read_entries(entries, tokens, setting, disabled=disabled, project=project)
        servers.extend(found)
        problems.extend(issues)

    def setting(for_client: str, inputs: Mapping[str, Input] | None = None) -> Setting:
        return Setting(for_client, path, _locate_json, inputs or {}, parsed.duplicates)

    if "servers" in document:
        formats.append("vscode")
        inputs = _inputs(document.get("inputs"), ("inputs",), problems)
        section(("servers",), setting(client or VSCODE, inputs))
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and "servers" in mcp:
        formats.append("vscode-settings")
        inputs = _inputs(mcp.get("inputs"), ("mcp", "inputs"), problems)
        section(("mcp", "servers"), setting(client or VSCODE, inputs))
    if "mcpServers" in document:
        formats.append("mcpServers")
        section(("mcpServers",), setting(chosen), _gemini_off(mcp))
    projects = document.get("projects")
    if isinstance(projects, dict):
        formats.append("claude-code-user")
        for project, entry in projects.items():
            if isinstance(entry, dict) and "mcpServers" in entry:
                off = _listed_in(entry.get("disabledMcpServers"))
                section(("projects", project, "mcpServers"), setting(client or CLAUDE_CODE), off, project)
    if "claude-code-user" in formats and "mcpServers" in formats:  # the user scope of that file
        formats.remove("mcpServers")
    if not formats:
        problems.append(Problem("", _NOT_MCP))
    report = ConfigReport(path, chosen, "+".join(formats) or None, tuple(servers))
    return _located(report, problems)


def _read_codex(path: Path, document: dict[str, Any], client: str) -> ConfigReport:
    if "mcp_servers" not in document:
        return _located(ConfigReport(path, client, None), [Problem("", _NOT_MCP)])
    setting = Setting(client, path, toml_path)
    servers, problems = _read_entries(document["mcp_servers"], ("mcp_servers",), setting, codex=True)
    return _located(ConfigReport(path, client, "codex", tuple(servers)), problems)


def _read_entries(
    entries: Any,
    tokens: tuple[Token, ...],
    setting: Setting,
    *,
    disabled: Callable[[str], bool] | None = None,
    project: str | None = None,
    codex: bool = False,
) -> tuple[list[FoundServer], list[Problem]]:
    problems: list[Problem] = []
    if not isinstance(entries, dict):
        message = f"is {kind_of(entries)}; expected an object of servers by name"
        return [], [Problem(setting.locate(tokens), message)]
    servers: list[FoundServer] = []
    for key in setting.duplicates.get(id(entries), []):
        problems.append(
            Problem(
                setting.locate((*tokens, key)),
                f"server {quoted(key)} is defined more than once; the client uses the last one",
                "warning",
            )
        )
    for name, raw in entries.items():
        where = (*tokens, name)
        if not isinstance(raw, dict):
            problems.append(
                Problem(setting.locate(where), f"server {quoted(name)} is {kind_of(raw)}; expected an object")
            )
            continue
        if codex:
            server, issues = read_codex_entry(name, raw, where, setting)
        else:
            off = disabled is not None and disabled(name)
            server, issues = read_json_entry(name, raw, where, setting, listed_off=off, project=project)
        problems.extend(issues)
        if server is not None:
            servers.append(server)
    return servers, problems


def _listed_in(names: Any) -> Callable[[str], bool]:
    """Claude Code's per-project `disabledMcpServers`."""
    off = {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()
    return lambda name: name in off


def _gemini_off(mcp: Any) -> Callable[[str], bool] | None:
    """Gemini CLI's `mcp.excluded` (never connected) and `mcp.allowed` (only these are)."""
    if not isinstance(mcp, dict):
        return None
    excluded, allowed = mcp.get("excluded"), mcp.get("allowed")
    off = {n for n in excluded if isinstance(n, str)} if isinstance(excluded, list) else set()
    only = {n for n in allowed if isinstance(n, str)} if isinstance(allowed, list) else None
    return lambda name: name in off or (only is not None and name not in only)


def _guess_client(document: dict[str, Any]) -> str:
    if "projects" in document:
        return CLAUDE_CODE
    if "servers" in document or (isinstance(document.get("mcp"), dict) and "servers" in document["mcp"]):
        return VSCODE
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and ({"allowed", "excluded", "serverCommand"} & set(mcp)):
        return GEMINI
    entries = document.get("mcpServers")
    values = (
        [entry for entry in entries.values() if isinstance(entry, dict)] if isinstance(entries, dict) else []
    )
    if any("httpUrl" in entry for entry in values):
        return GEMINI
    if any("serverUrl" in entry for entry in values):
        return WINDSURF
    return GENERIC


def _inputs(raw: Any, tokens: tuple[Token, ...], problems: list[Problem]) -> dict[str, Input]:
    """VS Code's input variables by id; malformed ones are skipped with a warning (a reference
    to them is then reported as undefined)."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        problems.append(
            Problem(json_pointer(*tokens), f"inputs is {kind_of(raw)}; expected an array", "warning")
        )
        return {}
    found: dict[str, Input] = {}
    for index, item in enumerate(raw):
        ident = item.get("id") if isinstance(item, dict) else None
        if not isinstance(ident, str) or not ident:
            problems.append(
                Problem(json_pointer(*tokens, index), "an input needs a string id; skipped", "warning")
            )
            continue
        description = item.get("description")
        found[ident] = Input(
            ident, description if isinstance(description, str) else None, item.get("password") is True
        )
    return found


def _locate_json(tokens: tuple[Token, ...]) -> str:
    return json_pointer(*tokens)


def _bare(key: str) -> bool:
    return bool(key) and all(c.isascii() and (c.isalnum() or c in "_-") for c in key)


def _located(report: ConfigReport, problems: list[Problem]) -> ConfigReport:
    file = str(report.path)
    located = tuple(problem.located(file) for problem in problems)
    return ConfigReport(report.path, report.client, report.format, report.servers, located)
