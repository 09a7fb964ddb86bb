"""A realistic configuration file of every client, read to exactly the servers it configures:
local and remote servers, plaintext secrets, references the client resolves, VS Code inputs,
disabled servers and tool filters."""

from __future__ import annotations

from dataclasses import replace

from aai_gateway.importing import ConfigValue, FoundServer, Reference, Transport, read_config
from aai_gateway.importing.model import (
    CLAUDE_CODE,
    CLAUDE_DESKTOP,
    CODEX,
    CURSOR,
    GEMINI,
    GENERIC,
    VSCODE,
    WINDSURF,
)
from tests.importing.helpers import SAMPLES, env, lit, lits, problems_of, value, variable

SSE = (
    "uses the SSE transport, which the gateway does not speak (it speaks stdio and Streamable HTTP); "
    "if the server also offers Streamable HTTP (often at a URL ending in /mcp), change the client's "
    "entry to that and import again"
)
GITHUB_TOKEN = "ghp_EXAMPLEexample0123456789EXAMPLEexam"


def test_claude_desktop_servers_are_read_with_their_literal_secrets_and_no_expansion() -> None:
    path = SAMPLES / "claude-desktop" / "claude_desktop_config.json"
    report = read_config(path, CLAUDE_DESKTOP)

    def server(name: str, command: str, args: tuple[str, ...], **env: ConfigValue) -> FoundServer:
        return FoundServer(
            CLAUDE_DESKTOP, path, f"/mcpServers/{name}", name, "stdio", lit(command), lits(*args), env
        )

    assert report.format == "mcpServers"
    assert report.servers == (
        # Claude Desktop documents no expansion: "${HOME}" reaches the server as written.
        server(
            "filesystem",
            "npx",
            ("-y", "@modelcontextprotocol/server-filesystem", "/Users/ada/Desktop", "${HOME}/Downloads"),
        ),
        server(
            "github",
            "npx",
            ("-y", "@modelcontextprotocol/server-github"),
            GITHUB_PERSONAL_ACCESS_TOKEN=lit(GITHUB_TOKEN),
        ),
        server(
            "postgres",
            "npx",
            ("-y", "@modelcontextprotocol/server-postgres", "postgresql://shop:hunter2@localhost:5432/shop"),
        ),
        server("time", "uvx", ("mcp-server-time", "--local-timezone=Europe/Paris")),
    )
    assert report.problems == ()


def test_a_file_of_unknown_client_treats_dollar_braces_as_environment_references() -> None:
    report = read_config(SAMPLES / "claude-desktop" / "claude_desktop_config.json")
    assert report.client == GENERIC
    assert report.servers[0].args[3] == value(env("HOME"), "/Downloads")


def test_claude_code_project_file_has_remote_servers_expansions_and_an_sse_server() -> None:
    path = SAMPLES / "claude-code" / ".mcp.json"
    report = read_config(path, CLAUDE_CODE)

    def remote(name: str, transport: Transport, url: ConfigValue, **headers: ConfigValue) -> FoundServer:
        return FoundServer(
            CLAUDE_CODE, path, f"/mcpServers/{name}", name, transport, url=url, headers=headers
        )

    assert report.servers == (
        remote("sentry", "http", lit("https://mcp.sentry.dev/mcp")),
        remote(
            "api-server",
            "http",
            value(
                env("API_BASE_URL", "${API_BASE_URL:-https://api.example.com}", "https://api.example.com"),
                "/mcp",
            ),
            Authorization=value("Bearer ", env("API_KEY")),
        ),
        remote("asana", "sse", lit("https://mcp.asana.com/sse")),
        FoundServer(
            CLAUDE_CODE,
            path,
            "/mcpServers/airtable",
            "airtable",
            "stdio",
            command=lit("npx"),
            args=lits("-y", "airtable-mcp-server"),
            env={"AIRTABLE_API_KEY": lit("patEXAMPLE0123456.0123456789abcdef")},
        ),
    )
    assert problems_of(report.problems) == [("/mcpServers/asana", "error", f"server 'asana' {SSE}")]
    assert {p.file for p in report.problems} == {str(path)}


def test_claude_code_user_file_has_user_and_per_project_servers_and_their_disabled_state() -> None:
    path = SAMPLES / "claude-code" / ".claude.json"
    report = read_config(path, CLAUDE_CODE)
    shop = "/home/ada/src/shop"
    in_shop = f"/projects/{shop.replace('/', '~1')}/mcpServers"
    assert report.format == "claude-code-user"
    assert report.servers == (
        FoundServer(
            CLAUDE_CODE,
            path,
            "/mcpServers/context7",
            "context7",
            "stdio",
            lit("npx"),
            lits("--yes", "@upstash/context7-mcp"),
        ),
        FoundServer(
            CLAUDE_CODE,
            path,
            "/mcpServers/linear",
            "linear",
            "http",
            url=lit("https://mcp.linear.app/mcp"),
            headers={"Authorization": lit("Bearer lin_api_EXAMPLE0123456789abcdefEXAMPLE")},
        ),
        FoundServer(
            CLAUDE_CODE,
            path,
            "/mcpServers/firebase",
            "firebase",
            "stdio",
            lit("npx"),
            lits("-y", "firebase-tools@latest", "mcp"),
            disabled=True,
        ),
        FoundServer(
            CLAUDE_CODE,
            path,
            f"{in_shop}/postgres",
            "postgres",
            "stdio",
            lit("npx"),
            lits("-y", "@modelcontextprotocol/server-postgres"),
            env={"DATABASE_URL": lit("postgresql://shop:hunter2@localhost:5432/shop")},
            project=shop,
        ),
        FoundServer(
            CLAUDE_CODE,
            path,
            f"{in_shop}/playwright",
            "playwright",
            "stdio",
            lit("npx"),
            lits("@playwright/mcp@latest"),
            disabled=True,  # the project's disabledMcpServers
            project=shop,
        ),
    )
    assert report.problems == ()


def test_cursor_files_with_comments_trailing_commas_env_references_and_env_file() -> None:
    path = SAMPLES / "cursor" / "mcp.json"
    report = read_config(path, CURSOR)
    assert report.servers == (
        FoundServer(
            CURSOR,
            path,
            "/mcpServers/playwright",
            "playwright",
            "stdio",
            lit("npx"),
            lits("@playwright/mcp@latest"),
        ),
        FoundServer(
            CURSOR,
            path,
            "/mcpServers/userjot",
            "userjot",
            "http",
            url=lit("https://api.userjot.com/v1/mcp"),
            headers={"Authorization": value("Bearer ", env("USERJOT_API_TOKEN", "${env:USERJOT_API_TOKEN}"))},
        ),
        FoundServer(
            CURSOR,
            path,
            "/mcpServers/notion",
            "notion",
            "http",
            url=lit("https://mcp.notion.com/mcp"),
            headers={"Authorization": lit("Bearer ntn_EXAMPLE0123456789abcdefEXAMPLE")},
        ),
        FoundServer(
            CURSOR, path, "/mcpServers/events", "events", "sse", url=lit("http://localhost:8000/sse")
        ),
    )
    assert problems_of(report.problems) == [("/mcpServers/events", "error", f"server 'events' {SSE}")]

    project = SAMPLES / "cursor" / "project" / ".cursor" / "mcp.json"
    assert read_config(project, CURSOR).servers == (
        FoundServer(
            CURSOR,
            project,
            "/mcpServers/lapras",
            "lapras",
            "stdio",
            lit("npx"),
            (*lits("-y", "@lapras-inc/lapras-mcp-server", "--root"), value(variable("workspaceFolder"))),
            env={"LAPRAS_API_KEY": lit("lp_EXAMPLE0123456789")},
            env_file=value(variable("workspaceFolder"), "/.env"),
        ),
    )


def test_vscode_inputs_become_references_and_a_password_input_is_a_secret_to_supply() -> None:
    path = SAMPLES / "vscode" / "mcp.json"
    report = read_config(path)
    key = Reference(
        "input", "perplexity-key", "${input:perplexity-key}", secret=True, description="Perplexity API Key"
    )
    workspace = Reference(
        "input", "workspace-name", "${input:workspace-name}", description="Name of the events workspace"
    )
    assert (report.client, report.format) == (VSCODE, "vscode")
    assert report.servers == (
        FoundServer(
            VSCODE,
            path,
            "/servers/perplexity",
            "perplexity",
            "stdio",
            lit("npx"),
            lits("-y", "server-perplexity-ask"),
            env={"PERPLEXITY_API_KEY": value(key)},
        ),
        FoundServer(
            VSCODE,
            path,
            "/servers/github",
            "github",
            "http",
            url=lit("https://api.githubcopilot.com/mcp/"),
            headers={"Authorization": lit("Bearer github_pat_EXAMPLE0123456789_abcdefghijklmnopqrstuvwxyz")},
        ),
        FoundServer(
            VSCODE,
            path,
            "/servers/memory",
            "memory",
            "stdio",
            lit("npx"),
            lits("-y", "@modelcontextprotocol/server-memory"),
            env={"MEMORY_FILE_PATH": value(variable("workspaceFolder"), "/.memory.json")},
            env_file=value(variable("workspaceFolder"), "/.env"),
        ),
        FoundServer(
            VSCODE,
            path,
            "/servers/sandboxed",
            "sandboxed",
            "stdio",
            lit("npx"),
            lits("-y", "@example/mcp-server"),
            ignored_keys=("sandboxEnabled", "sandbox"),
        ),
        FoundServer(
            VSCODE,
            path,
            "/servers/events",
            "events",
            "sse",
            url=lit("https://events.example.com/sse"),
            headers={"X-Workspace": value(workspace)},
        ),
    )
    assert report.servers[0].references == (key,)
    assert problems_of(report.problems) == [
        (
            "/servers/sandboxed/sandboxEnabled",
            "warning",
            "the client runs this server in its sandbox; the gateway runs it without one",
        ),
        (
            "/servers/sandboxed/sandbox",
            "warning",
            "the client's sandbox rules for this server are not carried over",
        ),
        ("/servers/events", "error", f"server 'events' {SSE}"),
    ]


def test_vscode_settings_file_with_the_earlier_mcp_block_is_read_too() -> None:
    path = SAMPLES / "vscode" / "settings.json"
    report = read_config(path)
    assert (report.client, report.format, report.problems) == (VSCODE, "vscode-settings", ())
    assert report.servers == (
        FoundServer(
            VSCODE,
            path,
            "/mcp/servers/fetch",
            "fetch",
            "stdio",
            lit("uvx"),
            lits("mcp-server-fetch"),
            env={"HTTPS_PROXY": value(env("HTTPS_PROXY", "${env:HTTPS_PROXY}"))},
        ),
    )


def test_codex_tables_with_named_variables_headers_and_disabled_servers() -> None:
    path = SAMPLES / "codex" / "config.toml"
    report = read_config(path)

    def named(variable_name: str, prefix: str = "") -> ConfigValue:
        return value(prefix, env(variable_name, f"${{env:{variable_name}}}"))

    assert (report.client, report.format, report.problems) == (CODEX, "codex", ())
    assert report.servers == (
        FoundServer(
            CODEX,
            path,
            "mcp_servers.context7",
            "context7",
            "stdio",
            lit("npx"),
            lits("-y", "@upstash/context7-mcp"),
        ),
        FoundServer(
            CODEX,
            path,
            "mcp_servers.github",
            "github",
            "stdio",
            lit("docker"),
            lits(
                "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"
            ),
            env={"GITHUB_PERSONAL_ACCESS_TOKEN": lit(GITHUB_TOKEN), "HTTPS_PROXY": named("HTTPS_PROXY")},
            ignored_keys=("startup_timeout_sec",),
        ),
        FoundServer(
            CODEX,
            path,
            "mcp_servers.figma",
            "figma",
            "http",
            url=lit("https://mcp.figma.com/mcp"),
            headers={
                "X-Figma-Region": lit("us-east-1"),
                "Authorization": named("FIGMA_OAUTH_TOKEN", "Bearer "),
            },
        ),
        FoundServer(
            CODEX,
            path,
            "mcp_servers.catalog",
            "catalog",
            "http",
            url=lit("https://catalog.example.test/mcp"),
            # env_http_headers replaces the static header of the same name, whatever its case
            headers={"X-Api-Key": lit("ck_live_EXAMPLE0123456789"), "X-Team": named("CATALOG_TEAM")},
            disabled=True,
            exclude_tools=("delete_item",),
        ),
        FoundServer(
            CODEX,
            path,
            'mcp_servers."docs.internal"',
            "docs.internal",
            "stdio",
            lit("uvx"),
            lits("docs-mcp"),
            cwd=lit("/srv/docs"),
            include_tools=("search", "read"),
            ignored_keys=("tool_timeout_sec",),
        ),
    )


def test_gemini_settings_with_both_url_keys_env_expansion_filters_and_excluded_servers() -> None:
    path = SAMPLES / "gemini" / "settings.json"
    report = read_config(path)
    assert (report.client, report.format) == (GEMINI, "mcpServers")
    python_tools = FoundServer(
        GEMINI,
        path,
        "/mcpServers/pythonTools",
        "pythonTools",
        "stdio",
        lit("python"),
        lits("-m", "my_mcp_server", "--port", "8080"),
        env={
            "DATABASE_URL": value(env("DB_CONNECTION_STRING", "$DB_CONNECTION_STRING")),
            "API_KEY": value(env("EXTERNAL_API_KEY")),
        },
        cwd=lit("./mcp-servers/python"),
        ignored_keys=("timeout",),
    )
    assert report.servers == (
        python_tools,
        FoundServer(
            GEMINI,
            path,
            "/mcpServers/github",
            "github",
            "http",
            url=lit("https://api.githubcopilot.com/mcp/"),
            headers={"Authorization": lit(GITHUB_TOKEN)},
            ignored_keys=("timeout",),
        ),
        FoundServer(
            GEMINI,
            path,
            "/mcpServers/filteredServer",
            "filteredServer",
            "stdio",
            lit("python"),
            lits("-m", "my_mcp_server"),
            include_tools=("safe_tool", "file_reader"),
            exclude_tools=("dangerous_tool",),
        ),
        FoundServer(
            GEMINI,
            path,
            "/mcpServers/experimental",
            "experimental",
            "stdio",
            lit("node"),
            lits("dist/server.js"),
            disabled=True,  # mcp.excluded
            ignored_keys=("trust",),
        ),
        FoundServer(
            GEMINI,
            path,
            "/mcpServers/iapServer",
            "iapServer",
            "sse",
            url=lit("https://my-iap-service.run.app/sse"),
        ),
        # Gemini CLI takes a url without a type for Streamable HTTP
        FoundServer(
            GEMINI, path, "/mcpServers/docs", "docs", "http", url=lit("https://docs.example.com/mcp")
        ),
    )
    assert problems_of(report.problems) == [("/mcpServers/iapServer", "error", f"server 'iapServer' {SSE}")]


def test_windsurf_server_url_env_interpolation_and_disabled_servers() -> None:
    path = SAMPLES / "windsurf" / "mcp_config.json"
    report = read_config(path)
    assert report.client == WINDSURF
    assert report.servers == (
        FoundServer(
            WINDSURF,
            path,
            "/mcpServers/github",
            "github",
            "stdio",
            lit("docker"),
            lits(
                "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"
            ),
            env={"GITHUB_PERSONAL_ACCESS_TOKEN": lit(GITHUB_TOKEN)},
        ),
        FoundServer(
            WINDSURF,
            path,
            "/mcpServers/zapier",
            "zapier",
            "sse",
            url=lit("https://actions.zapier.com/mcp/sk-ak-EXAMPLE0123456789/sse"),
        ),
        FoundServer(
            WINDSURF,
            path,
            "/mcpServers/talaria",
            "talaria",
            "http",
            url=lit("https://api.newtalaria.com/mcp"),
            headers={"Authorization": value("Bearer ", env("TALARIA_MCP_TOKEN", "${env:TALARIA_MCP_TOKEN}"))},
        ),
        FoundServer(
            WINDSURF,
            path,
            "/mcpServers/git",
            "git",
            "stdio",
            lit("py"),
            lits("-m", "mcp_server_git"),
            disabled=True,
        ),
        FoundServer(
            WINDSURF,
            path,
            "/mcpServers/ollama",
            "ollama",
            "stdio",
            lit("py"),
            lits("-m", "mcp_ollama_python"),
            env={"OLLAMA_HOST": lit("http://127.0.0.1:11434")},
            exclude_tools=("ollama_delete",),
        ),
    )
    assert problems_of(report.problems) == [("/mcpServers/zapier", "error", f"server 'zapier' {SSE}")]


def test_the_client_named_by_the_caller_decides_which_references_are_resolved() -> None:
    path = SAMPLES / "gemini" / "settings.json"
    as_gemini = read_config(path).servers[0]
    as_claude_desktop = read_config(path, CLAUDE_DESKTOP).servers[0]
    assert as_gemini.env["DATABASE_URL"].references != ()
    assert as_claude_desktop == replace(
        as_gemini,
        client=CLAUDE_DESKTOP,
        env={"DATABASE_URL": lit("$DB_CONNECTION_STRING"), "API_KEY": lit("${EXTERNAL_API_KEY}")},
    )
