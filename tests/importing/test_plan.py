"""The import plan for the sample configuration of every client: descriptors the gateway's own
loader accepts, literal secrets out of them (into the keyring, or environment references where
there is none), client references turned into what the user must set, and every server that
cannot be imported listed with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aai_gateway.descriptor import Source, load_document
from aai_gateway.importing import read_config
from aai_gateway.importing.conversion import ImportSettings
from aai_gateway.importing.description import describe_from_server
from aai_gateway.importing.model import CLAUDE_CODE, CLAUDE_DESKTOP, CODEX, CURSOR, GEMINI, VSCODE, WINDSURF
from aai_gateway.importing.plan import MARKER, ImportPlan, Written, plan_import
from tests.importing.helpers import SAMPLES

CLIENT_FILES = [
    (CLAUDE_DESKTOP, "claude-desktop/claude_desktop_config.json"),
    (CLAUDE_CODE, "claude-code/.claude.json"),
    (CLAUDE_CODE, "claude-code/.mcp.json"),
    (CURSOR, "cursor/mcp.json"),
    (CURSOR, "cursor/project/.cursor/mcp.json"),
    (VSCODE, "vscode/mcp.json"),
    (VSCODE, "vscode/settings.json"),
    (CODEX, "codex/config.toml"),
    (GEMINI, "gemini/settings.json"),
    (WINDSURF, "windsurf/mcp_config.json"),
]
LITERAL_SECRETS = [
    "ghp_EXAMPLEexample0123456789EXAMPLEexam",
    "Bearer lin_api_EXAMPLE0123456789abcdefEXAMPLE",
    "patEXAMPLE0123456.0123456789abcdef",
    "Bearer ntn_EXAMPLE0123456789abcdefEXAMPLE",
    "lp_EXAMPLE0123456789",
    "Bearer github_pat_EXAMPLE0123456789_abcdefghijklmnopqrstuvwxyz",
]
HOME = Path("/home/ada")


def plan(*, keyring: bool = True, workspace: Path | None = None) -> ImportPlan:
    reports = [read_config(SAMPLES / file, client) for client, file in CLIENT_FILES]
    settings = ImportSettings(Path("/home/ada/.aai"), keyring, HOME, {"HOME": "/home/ada"}, workspace)
    return plan_import(reports, {}, settings)


def written(found: ImportPlan, app_id: str) -> Written:
    return next(w for w in found.written if w.app_id == app_id)


@pytest.mark.parametrize("keyring", [True, False])
def test_every_imported_sample_server_is_a_descriptor_the_gateway_loader_accepts(keyring: bool) -> None:
    found = plan(keyring=keyring, workspace=Path("/home/ada/src/shop"))

    assert len(found.written) >= 20
    for item in found.written:
        result = load_document(item.document, Source(kind="file", location=str(item.path)))
        assert result.errors == [], (item.app_id, [p.render() for p in result.errors])
        assert result.descriptor is not None and result.descriptor.id == item.app_id
        assert item.path == Path("/home/ada/.aai") / item.app_id / "aai.json"
        assert "tools" not in item.document
        assert item.document[MARKER] == {
            "client": item.server.client,
            "file": str(item.server.config_file),
            "server": item.server.name,
            "pointer": item.server.json_pointer,
        }


def test_literal_secrets_move_into_the_keyring_and_never_into_a_descriptor() -> None:
    found = plan()

    documents = json.dumps([w.document for w in found.written])
    moved = found.moved_values
    for secret in LITERAL_SECRETS:
        assert secret not in documents
        assert secret in moved
    github = written(found, "github")
    assert github.document["execution"]["env"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": {"secret": "GITHUB_PERSONAL_ACCESS_TOKEN"}
    }
    assert github.moved == {"GITHUB_PERSONAL_ACCESS_TOKEN": LITERAL_SECRETS[0]}
    assert "ghp_" not in repr(github)
    postgres = next(
        w for w in found.written if w.server.client == CLAUDE_CODE and w.server.name == "postgres"
    )
    assert postgres.document["execution"]["env"] == {"DATABASE_URL": {"secret": "DATABASE_URL"}}
    assert postgres.moved == {"DATABASE_URL": "postgresql://shop:hunter2@localhost:5432/shop"}


def test_without_a_keyring_literal_secrets_become_variables_of_the_gateways_environment() -> None:
    found = plan(keyring=False)

    documents = json.dumps([w.document for w in found.written])
    assert found.moved_values == []
    for secret in LITERAL_SECRETS:
        assert secret not in documents
    linear = written(found, "linear")
    assert linear.document["execution"]["headers"] == {"Authorization": {"env": "LINEAR_AUTHORIZATION"}}
    [needed] = linear.variables_to_set
    assert needed.variable == "LINEAR_AUTHORIZATION"
    assert ".claude.json" in needed.what and "lin_api" not in needed.what


def test_client_references_become_environment_references_or_secrets_the_user_stores() -> None:
    found = plan()

    fetch = written(found, "fetch")
    assert fetch.document["execution"]["env"] == {"HTTPS_PROXY": {"env": "HTTPS_PROXY"}}
    assert [v.variable for v in fetch.variables_to_set] == ["HTTPS_PROXY"]
    perplexity = written(found, "perplexity")
    assert perplexity.document["execution"]["env"] == {"PERPLEXITY_API_KEY": {"secret": "PERPLEXITY_API_KEY"}}
    [to_set] = perplexity.secrets_to_set
    assert (
        to_set.name == "PERPLEXITY_API_KEY"
        and "VS Code input 'perplexity-key' (Perplexity API Key)" in to_set.what
    )
    userjot = written(found, "userjot")
    [to_set] = userjot.secrets_to_set
    assert "'Bearer ${env:USERJOT_API_TOKEN}'" in to_set.what


def test_disabled_sse_and_unresolvable_servers_are_skipped_each_with_its_reason() -> None:
    reasons = {(s.server.client, s.server.name): s.reason for s in plan().skipped}

    assert "disabled in claude-code's configuration" in reasons[(CLAUDE_CODE, "firebase")]
    assert "disabled in windsurf's configuration" in reasons[(WINDSURF, "git")]
    assert "disabled in gemini's configuration" in reasons[(GEMINI, "experimental")]
    assert "uses the SSE transport" in reasons[(CLAUDE_CODE, "asana")]
    assert "uses the SSE transport" in reasons[(WINDSURF, "zapier")]
    assert "--project DIR" in reasons[(GEMINI, "pythonTools")]
    assert "${workspaceFolder}" in reasons[(VSCODE, "memory")]


def test_the_workspace_fills_in_workspace_folder_and_relative_folders() -> None:
    found = plan(workspace=Path("/home/ada/src/shop"))

    assert written(found, "memory").document["execution"]["env"] == {
        "MEMORY_FILE_PATH": "/home/ada/src/shop/.memory.json"
    }
    assert (
        written(found, "pythontools").document["execution"]["cwd"] == "/home/ada/src/shop/mcp-servers/python"
    )


def test_a_project_file_fills_in_its_own_workspace_folder() -> None:
    found = plan()

    lapras = written(found, "lapras")
    assert lapras.document["execution"]["args"][-1] == str(SAMPLES / "cursor" / "project")


def test_a_secret_in_an_argument_stays_with_a_warning_saying_what_to_do() -> None:
    postgres = next(
        w for w in plan().written if w.server.client == CLAUDE_DESKTOP and w.server.name == "postgres"
    )

    [warning] = postgres.warnings
    assert warning.startswith("args[2] looks like a secret; it stays in the descriptor as written")
    assert f"aai-gateway auth set {postgres.app_id} --secret NAME" in warning
    assert "hunter2" not in warning


def test_the_same_server_in_two_files_is_imported_once_and_same_names_of_other_servers_get_suffixes() -> None:
    found = plan()

    github = {(w.server.client, w.app_id) for w in found.written if w.server.name == "github"}
    assert (
        len(github) == 3
    )  # npx (Claude Desktop), remote (VS Code, then Gemini), docker (Codex, then Windsurf)
    ids = dict(github)
    assert ids[CLAUDE_DESKTOP] == "github"
    assert (
        ids[VSCODE].startswith("github-") and ids[CODEX].startswith("github-") and ids[VSCODE] != ids[CODEX]
    )
    assert {(s.server.client, s.app_id) for s in found.same} == {
        (GEMINI, ids[VSCODE]),
        (WINDSURF, ids[CODEX]),
    }


def test_without_a_snapshot_the_description_comes_from_the_name_and_never_shows_a_secret() -> None:
    execution = {
        "command": "/usr/local/bin/npx",
        "args": ["-y", "--token", "s3cr3t", "@scope/server-x", "ghp_EXAMPLEexample0123456789EXAMPLEexam"],
    }

    description = describe_from_server("My\x1b[2J Server", execution)

    assert description == "MCP server My Server, runs npx @scope/server-x"
    assert describe_from_server("api", {"url": "https://user:pw@mcp.example.com/mcp?key=k"}) == (
        "MCP server api at mcp.example.com (Streamable HTTP)"
    )
