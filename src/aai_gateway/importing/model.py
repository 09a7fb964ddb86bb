"""What reading an MCP client's configuration yields: servers, their values, and problems.

A value in a client's configuration is either text the client passes on as it is, or text with
references the client resolves when it starts the server (`${env:TOKEN}`, VS Code's
`${input:api-key}`, Claude Code's `${TOKEN:-default}`). `ConfigValue` keeps both the text as
written and its pieces, so the import can tell a literal secret (to move into the keyring) from a
reference to one (nothing to move, but something the user must supply).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import Problem

Transport = Literal["stdio", "http", "sse"]
"""`http` is Streamable HTTP; `sse` the older HTTP+SSE transport, which the gateway does not
speak (such servers are listed, with a problem saying so)."""

ReferenceKind = Literal["env", "input", "file", "variable"]

CLAUDE_DESKTOP = "claude-desktop"
CLAUDE_CODE = "claude-code"
CURSOR = "cursor"
VSCODE = "vscode"
CODEX = "codex"
GEMINI = "gemini"
WINDSURF = "windsurf"
GENERIC = "generic"
"""A JSON file with `mcpServers` whose content does not tell which client wrote it: Claude
Desktop, Claude Code's `.mcp.json`, Cursor and Windsurf all use that shape."""

CLIENTS: tuple[str, ...] = (CLAUDE_DESKTOP, CLAUDE_CODE, CURSOR, VSCODE, CODEX, GEMINI, WINDSURF)


@dataclass(frozen=True, slots=True)
class Reference:
    """A piece of a value that the client fills in when it starts the server.

    - `env`: a variable of the client's environment (`name`); `default` is Claude Code's
      `${NAME:-default}` fallback.
    - `input`: a VS Code input variable (`name` is its id): the user types the value when the
      server first starts. `secret` is the input's `password: true`; `defined` is false when
      the file's `inputs` has no such id.
    - `file`: Windsurf's `${file:path}`, the content of a file (`name` is the path).
    - `variable`: another variable of the client (`${workspaceFolder}`, `${userHome}`, …).
    """

    kind: ReferenceKind
    name: str
    raw: str
    default: str | None = None
    secret: bool = False
    description: str | None = None
    defined: bool = True


@dataclass(frozen=True, slots=True)
class ConfigValue:
    """A string from a configuration: `raw` as written, `parts` its literal pieces and references
    in order (a literal value is one text part, or none when empty)."""

    raw: str
    parts: tuple[str | Reference, ...]

    @classmethod
    def literal(cls, text: str) -> ConfigValue:
        return cls(text, (text,) if text else ())

    @classmethod
    def joined(cls, parts: Iterable[str | Reference]) -> ConfigValue:
        pieces = tuple(part for part in parts if part != "")
        return cls("".join(p if isinstance(p, str) else p.raw for p in pieces), pieces)

    @property
    def is_literal(self) -> bool:
        """True when the client passes the text on unchanged (no reference in it)."""
        return all(isinstance(part, str) for part in self.parts)

    @property
    def references(self) -> tuple[Reference, ...]:
        return tuple(part for part in self.parts if isinstance(part, Reference))


@dataclass(frozen=True)
class FoundServer:
    """One server entry of one configuration file.

    `json_pointer` says where the entry is: an RFC 6901 pointer in a JSON file
    (`/mcpServers/git`, `/projects/~1home~1me~1app/mcpServers/git`), a dotted key path in a TOML
    file (`mcp_servers.git`). `name` is the entry's key exactly as written (it may hold any
    character; ids are derived from it later). `project` is the project a Claude Code user file
    lists the entry under. `include_tools`/`exclude_tools` are the tool filters the client
    applies (None: no allow-list). `ignored_keys` are settings the client has that the gateway
    does not carry over (timeouts, trust, OAuth client settings, …), for the import to mention.
    """

    client: str
    config_file: Path
    json_pointer: str
    name: str
    transport: Transport
    command: ConfigValue | None = None
    args: tuple[ConfigValue, ...] = ()
    env: dict[str, ConfigValue] = field(default_factory=dict)
    env_file: ConfigValue | None = None
    cwd: ConfigValue | None = None
    url: ConfigValue | None = None
    headers: dict[str, ConfigValue] = field(default_factory=dict)
    disabled: bool = False
    project: str | None = None
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    ignored_keys: tuple[str, ...] = ()

    @property
    def references(self) -> tuple[Reference, ...]:
        """Every reference in the entry's values, in order of appearance."""
        values = [self.command, *self.args, *self.env.values(), self.env_file, self.cwd, self.url]
        values += self.headers.values()
        return tuple(ref for value in values if value is not None for ref in value.references)


@dataclass(frozen=True)
class ConfigReport:
    """What reading one file found. `format` names the shape recognised (None: no MCP server
    configuration in the file). `servers` holds every entry that could be read, in file order;
    an entry that could not be read is only in `problems`. Each problem's pointer locates it;
    severity "error" at a server's pointer means that server cannot be imported as it is (an
    SSE server is listed, with such an error)."""

    path: Path
    client: str
    format: str | None
    servers: tuple[FoundServer, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


def same_named(servers: Iterable[FoundServer]) -> dict[str, list[FoundServer]]:
    """Servers that share a name (across files, or across scopes of one file), by name, in the
    order found: the import must give each its own id."""
    by_name: dict[str, list[FoundServer]] = {}
    for server in servers:
        by_name.setdefault(server.name, []).append(server)
    return {name: found for name, found in by_name.items() if len(found) > 1}
