"""Reading the MCP server configurations that MCP clients keep, for `aai-gateway import`.

`read_config(path)` reads one file (its format recognised by content) into `FoundServer`s and
located problems; `default_locations(home, platform, environ, project_dir)` lists the clients'
files that exist. Which literal values are secrets to keep out of files is the descriptor
layer's one detector (`descriptor.secret_shapes`).

Where each format is documented, and what was decided where the documentation is silent:

- **Claude Desktop** — `claude_desktop_config.json`, `mcpServers` of `{command, args, env}`;
  macOS `~/Library/Application Support/Claude/`, Windows `%APPDATA%\\Claude\\`
  (modelcontextprotocol.io/quickstart/user). Linux has no official build; the unofficial ones
  use `$XDG_CONFIG_HOME/Claude/` (decision). No variable expansion is documented, so values are
  read as literal text (decision).
- **Claude Code** — code.claude.com/docs/en/mcp: project scope `.mcp.json`; user scope
  `~/.claude.json` `mcpServers`; local scope `~/.claude.json` `projects[<absolute path>].mcpServers`.
  `type` is `stdio`, `http` (alias `streamable-http`) or `sse`; `${VAR}` and `${VAR:-default}`
  are expanded in `command`, `args`, `env`, `url` and `headers` (read the same way in both
  files: decision). Not documented but written by its `/mcp` screen: a project's
  `disabledMcpServers` list and an entry's `disabled: true` (anthropics/claude-code#13311,
  #33958); both mark a server disabled.
- **Cursor** — cursor.com/docs/context/mcp: `~/.cursor/mcp.json` and `.cursor/mcp.json`,
  `mcpServers` with `command`/`args`/`env`/`envFile` or `url`/`headers`, optional `type`;
  interpolation `${env:NAME}`, `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
  `${pathSeparator}`/`${/}` (confirmed here only through third-party summaries of that page).
- **VS Code** — code.visualstudio.com/docs/copilot/reference/mcp-configuration: `.vscode/mcp.json`
  and the profile's `mcp.json` (`%APPDATA%\\Code\\User`, `~/Library/Application Support/Code/User`,
  `$XDG_CONFIG_HOME/Code/User`, likewise `Code - Insiders`), `servers` of `{type: stdio|http|sse,
  command, args, env, envFile}` or `{type, url, headers}`, `inputs` of `{type: promptString, id,
  description, password}` used as `${input:id}`; an input with `password: true` is a secret the
  user types (recorded as a reference with `secret=True`, value unknown). Other variables:
  code.visualstudio.com/docs/reference/variables-reference. The earlier `"mcp": {"servers",
  "inputs"}` block of `settings.json` is read the same way (no longer documented).
- **Codex** — developers.openai.com/codex/mcp and the parser itself (openai/codex,
  `codex-rs/config/src/mcp_types.rs`): `~/.codex/config.toml` (`$CODEX_HOME`) and a project's
  `.codex/config.toml`, `[mcp_servers.<name>]` with `command`, `args`, `env`, `env_vars` (names
  passed on from Codex's environment), `cwd`, or `url`, `bearer_token_env_var`, `http_headers`,
  `env_http_headers` (header → variable); `enabled = false`; `enabled_tools`/`disabled_tools`.
  An inline `bearer_token` is refused by Codex and so here. Remote servers are Streamable HTTP.
- **Gemini CLI** — google-gemini/gemini-cli `docs/tools/mcp-server.md` (geminicli.com): user
  `~/.gemini/settings.json`, project `.gemini/settings.json`, `mcpServers` with `command`,
  `args`, `env`, `cwd`, or `url` / `httpUrl` and `headers`; `includeTools`/`excludeTools`;
  `mcp.allowed`/`mcp.excluded` (servers outside them are disabled). `$VAR` and `${VAR}` are
  expanded in settings strings (`docs/cli/configuration.md`). `httpUrl` is Streamable HTTP;
  `url` is SSE only with `type: "sse"`, otherwise Streamable HTTP (`createUrlTransport` in
  `packages/core/src/tools/mcp-client.ts`; the older documentation calls every `url` SSE).
- **Windsurf** — docs.windsurf.com/windsurf/cascade/mcp: `~/.codeium/windsurf/mcp_config.json`,
  `mcpServers` with `command`/`args`/`env` or `serverUrl` (or `url`) and `headers`;
  `${env:NAME}` interpolation in `command`, `args`, `env`, `serverUrl`, `url`, `headers`, and
  `${file:path}` (third-party summaries). `disabled` and `disabledTools` appear in files Windsurf
  writes but not in its documentation (read as a disabled server and excluded tools: decision).

Comments and trailing commas are accepted in every JSON file (VS Code, Cursor and Gemini CLI
allow them). A remote entry without a `type` is Streamable HTTP unless its URL path ends in
`/sse` (decision: clients without a type field try Streamable HTTP first and fall back to SSE,
and SSE servers conventionally serve `/sse`). SSE servers are listed with an error: the gateway
speaks stdio and Streamable HTTP only.
"""

from .locations import ConfigLocation, candidate_locations, default_locations
from .model import (
    CLIENTS,
    GENERIC,
    ConfigReport,
    ConfigValue,
    FoundServer,
    Reference,
    Transport,
    same_named,
)
from .reader import read_config
from .text import MAX_CONFIG_BYTES

__all__ = [
    "CLIENTS",
    "GENERIC",
    "MAX_CONFIG_BYTES",
    "ConfigLocation",
    "ConfigReport",
    "ConfigValue",
    "FoundServer",
    "Reference",
    "Transport",
    "candidate_locations",
    "default_locations",
    "read_config",
    "same_named",
]
