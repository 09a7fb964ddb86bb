"""A client's file with the imported servers replaced by the gateway alone: only those entries go,
everything else stays; Codex's TOML keeps its comments; a JSON file with comments is refused
rather than rewritten without them; the backup keeps no secret that moved into the keyring."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from aai_gateway.errors import UsageError
from aai_gateway.importing import read_config
from aai_gateway.importing.client_config import (
    ClientChange,
    GatewayCommand,
    backup_text,
    replaced_text,
    snippet,
)
from aai_gateway.importing.model import CLAUDE_CODE, CODEX, CURSOR, VSCODE
from tests.importing.helpers import SAMPLES

GATEWAY = GatewayCommand("/home/ada/.local/bin/aai-gateway", ("serve",))
GATEWAY_ENTRY = {"command": "/home/ada/.local/bin/aai-gateway", "args": ["serve"]}


def change(relative: str, client: str, *names: str) -> tuple[ClientChange, str]:
    path = SAMPLES / relative
    report = read_config(path, client)
    removed = tuple(s for s in report.servers if s.name in names)
    assert len(removed) == len(names)
    return ClientChange(path, client, report.format == "codex", removed), path.read_text(encoding="utf-8")


def test_claude_code_user_file_loses_only_the_imported_entries_and_gets_the_gateway_at_user_scope() -> None:
    found, text = change("claude-code/.claude.json", CLAUDE_CODE, "linear", "postgres")

    after = json.loads(replaced_text(found, text, GATEWAY))

    assert list(after["mcpServers"]) == ["context7", "firebase", "aai-gateway"]
    assert after["mcpServers"]["aai-gateway"] == GATEWAY_ENTRY
    assert list(after["projects"]["/home/ada/src/shop"]["mcpServers"]) == ["playwright"]
    assert (
        after["projects"]["/home/ada/src/shop"]["history"]
        == json.loads(text)["projects"]["/home/ada/src/shop"]["history"]
    )
    assert after["numStartups"] == 42


def test_vs_code_settings_with_a_trailing_comma_are_refused_and_the_gateway_goes_in_mcp_servers() -> None:
    found, text = change("vscode/settings.json", VSCODE, "fetch")

    with pytest.raises(UsageError, match="has comments or trailing commas, which rewriting it would lose"):
        replaced_text(found, text, GATEWAY)  # settings.json has a trailing comma
    assert json.loads(snippet(found, GATEWAY)) == {
        "mcp": {"servers": {"aai-gateway": {"type": "stdio", **GATEWAY_ENTRY}}}
    }


def test_a_json_file_with_comments_is_refused_rather_than_rewritten_without_them() -> None:
    found, text = change("cursor/mcp.json", CURSOR, "notion")

    with pytest.raises(UsageError, match=r"cursor/mcp\.json has comments or trailing commas"):
        replaced_text(found, text, GATEWAY)


def test_codex_keeps_its_comments_and_other_tables() -> None:
    found, text = change("codex/config.toml", CODEX, "github", "docs.internal")
    text = "# my Codex settings\n" + text

    after = replaced_text(found, text, GATEWAY)

    assert after.startswith('# my Codex settings\nmodel = "gpt-5-codex"')
    parsed = tomllib.loads(after)
    assert list(parsed["mcp_servers"]) == ["context7", "figma", "catalog", "aai-gateway"]
    assert parsed["mcp_servers"]["aai-gateway"] == GATEWAY_ENTRY
    assert tomllib.loads(snippet(found, GATEWAY)) == {"mcp_servers": {"aai-gateway": GATEWAY_ENTRY}}


def test_the_backup_holds_the_file_without_the_secrets_that_moved(tmp_path: Path) -> None:
    found, text = change("codex/config.toml", CODEX, "github")
    secret = "ghp_EXAMPLEexample0123456789EXAMPLEexam"

    backup = backup_text(
        found, text, {secret: "<moved to the OS keyring by aai-gateway import: app github, secret X>"}
    )

    assert secret in text and secret not in backup
    parsed = tomllib.loads(backup)
    assert parsed["mcp_servers"]["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"].startswith(
        "<moved to the OS keyring"
    )
    assert parsed["mcp_servers"]["catalog"] == tomllib.loads(text)["mcp_servers"]["catalog"]
