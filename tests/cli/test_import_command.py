"""`aai-gateway import` as the user runs it (a child process, a home folder of the test's own):
descriptors the gateway then finds, plaintext secrets in a real keyring and in no file, the
no-keyring path, --dry-run, --replace with its backup, re-imports, and hostile server names."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.secrets import KeyringSecretStore
from tests.cli.processes import Ran, run_cli, user_env
from tests.importing.helpers import SAMPLES
from tests.keyring_session import PrivateKeyring

SAMPLE_FILES = [
    "claude-desktop/claude_desktop_config.json",
    "claude-code/.claude.json",
    "claude-code/.mcp.json",
    "cursor/mcp.json",
    "cursor/project/.cursor/mcp.json",
    "vscode/mcp.json",
    "vscode/settings.json",
    "codex/config.toml",
    "gemini/settings.json",
    "windsurf/mcp_config.json",
]
MOVED_SECRETS = [
    "ghp_EXAMPLEexample0123456789EXAMPLEexam",
    "lin_api_EXAMPLE0123456789abcdefEXAMPLE",
    "hunter2",
    "patEXAMPLE0123456.0123456789abcdef",
    "ntn_EXAMPLE0123456789abcdefEXAMPLE",
    "lp_EXAMPLE0123456789",
    "github_pat_EXAMPLE0123456789_abcdefghijklmnopqrstuvwxyz",
]
"""Secrets the samples hold in env or headers (the Claude Desktop postgres password sits in an
argument instead; its sample is left out where files are searched for secrets)."""


def copy_samples(tmp_path: Path, files: list[str] = SAMPLE_FILES) -> list[Path]:
    copies = []
    for relative in files:
        target = tmp_path / "configs" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / relative, target)
        copies.append(target)
    return copies


def import_(env: dict[str, str], *argv: str | Path) -> Ran:
    return run_cli(env, "import", *(str(arg) for arg in argv))


def files_holding(root: Path, secrets: list[str]) -> dict[str, list[str]]:
    """Every file under `root` that holds one of `secrets`, with the secrets it holds."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes().decode("utf-8", "replace")
            held = [secret for secret in secrets if secret in data]
            if held:
                found[str(path)] = held
    return found


def scanned_apps(env: dict[str, str]) -> dict[str, str]:
    """The apps the gateway finds in its default places (~/.aai here), by id → source file."""
    scan = run_cli(env, "scan", "--json")
    assert scan.code == 0, scan.err
    report = json.loads(scan.out)
    assert [s for s in report["skipped"] if "/.aai/" in s["path"]] == []
    return {app["id"]: app["source"] for app in report["apps"]}


def keyring_secrets(keyring: PrivateKeyring) -> dict[str, dict[str, str]]:
    store = CredentialStore(KeyringSecretStore(backend=keyring.backend()))
    return {c.app_id: c.secrets for c in store.stored() if c.kind == "secrets"}


def descriptor(home: Path, app_id: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(
        (home / ".aai" / app_id / "aai.json").read_text(encoding="utf-8")
    )
    return document


def test_every_sample_server_becomes_a_descriptor_the_gateway_finds_and_its_secrets_go_to_the_keyring_only(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = user_env(home, keyring)

    done = import_(env, *copy_samples(tmp_path), "--no-start")

    assert done.code == 0, done.err
    imported = sorted(p.name for p in (home / ".aai").iterdir())
    assert len(imported) >= 18
    apps = scanned_apps(env)
    assert {app_id: apps.get(app_id) for app_id in imported} == {
        app_id: str(home / ".aai" / app_id / "aai.json") for app_id in imported
    }
    # Only the password that Claude Desktop's postgres passes as an argument stays (with a warning).
    [in_args] = [
        app_id
        for app_id in imported
        if descriptor(home, app_id)["x-imported-from"]["file"].endswith("claude_desktop_config.json")  # type: ignore[index]
        and "postgres" in app_id
    ]
    assert files_holding(home, MOVED_SECRETS) == {str(home / ".aai" / in_args / "aai.json"): ["hunter2"]}
    assert "args[2] looks like a secret; it stays in the descriptor as written" in done.out
    assert [s for s in MOVED_SECRETS if s in done.out + done.err] == []
    stored = keyring_secrets(keyring)
    assert stored["github"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": MOVED_SECRETS[0]}
    assert stored["linear"] == {"Authorization": "Bearer " + MOVED_SECRETS[1]}
    assert {"DATABASE_URL": "postgresql://shop:hunter2@localhost:5432/shop"} in stored.values()
    assert "move the secret GITHUB_PERSONAL_ACCESS_TOKEN into the OS keyring" in done.out
    assert "aai-gateway auth set perplexity --secret PERPLEXITY_API_KEY" in done.out
    # The gateway reads them back for the same descriptor: the binding is the file it discovers.
    status = {row["app"]: row["state"] for row in json.loads(run_cli(env, "auth", "status", "--json").out)}
    assert status["github"] == "stored: GITHUB_PERSONAL_ACCESS_TOKEN"
    assert status["perplexity"] == "not set: PERPLEXITY_API_KEY"


def test_without_a_keyring_the_import_says_so_and_the_descriptors_read_the_gateways_environment(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    [config] = copy_samples(tmp_path, ["claude-code/.claude.json"])

    done = import_(user_env(home, None), config, "--no-start")

    assert done.code == 0, done.err
    assert "No usable OS keyring" in done.out
    assert descriptor(home, "linear")["execution"] == {
        "type": "mcp",
        "url": "https://mcp.linear.app/mcp",
        "headers": {"Authorization": {"env": "LINEAR_AUTHORIZATION"}},
    }
    assert "set LINEAR_AUTHORIZATION in the gateway's environment" in done.out
    assert files_holding(home, MOVED_SECRETS) == {}
    assert [s for s in MOVED_SECRETS if s in done.out + done.err] == []


def test_a_dry_run_prints_every_action_and_writes_and_stores_nothing(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    copies = copy_samples(tmp_path)
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}

    done = import_(user_env(home, keyring), *copies, "--dry-run", "--replace")

    assert done.code == 0, done.err
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before
    assert not (home / ".aai").exists()
    assert keyring_secrets(keyring) == {}
    assert f"would write {home / '.aai' / 'github' / 'aai.json'}" in done.out
    assert "would move the secret GITHUB_PERSONAL_ACCESS_TOKEN into the OS keyring" in done.out
    assert "each file is backed up next to itself and changed as shown" in done.out
    assert [s for s in MOVED_SECRETS if s in done.out + done.err] == []


def test_replace_backs_up_each_file_and_leaves_only_the_gateway_and_the_servers_not_imported(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    claude, codex, windsurf = copy_samples(
        tmp_path, ["claude-code/.claude.json", "codex/config.toml", "windsurf/mcp_config.json"]
    )
    originals = {path: path.read_text(encoding="utf-8") for path in (claude, codex, windsurf)}

    done = import_(user_env(home, keyring), claude, codex, windsurf, "--replace", "--no-start")

    assert done.code == 0, done.err
    gateway = {"command": sys.executable, "args": ["-m", "aai_gateway", "serve"]}
    after = json.loads(claude.read_text(encoding="utf-8"))
    assert after["mcpServers"] == {
        "firebase": json.loads(originals[claude])["mcpServers"]["firebase"],
        "aai-gateway": gateway,
    }
    assert list(after["projects"]["/home/ada/src/shop"]["mcpServers"]) == ["playwright"]
    assert list(tomllib.loads(codex.read_text(encoding="utf-8"))["mcp_servers"]) == ["catalog", "aai-gateway"]
    assert list(json.loads(windsurf.read_text(encoding="utf-8"))["mcpServers"]) == [
        "zapier",
        "git",
        "aai-gateway",
    ]
    for path in (claude, codex, windsurf):
        [backup] = path.parent.glob(path.name + ".aai-backup-*")
        assert f"backup: {backup}" in done.out
    [backup] = claude.parent.glob(".claude.json.aai-backup-*")
    kept = json.loads(backup.read_text(encoding="utf-8"))
    assert kept["mcpServers"]["linear"]["headers"]["Authorization"].startswith("<moved to the OS keyring")
    assert (
        kept["projects"]
        == json.loads(
            originals[claude].replace(
                "postgresql://shop:hunter2@localhost:5432/shop",
                kept["projects"]["/home/ada/src/shop"]["mcpServers"]["postgres"]["env"]["DATABASE_URL"],
            )
        )["projects"]
    )
    assert files_holding(tmp_path, MOVED_SECRETS) == {}  # new files, backups and descriptors


def test_replace_changes_the_file_a_symbolic_link_points_to_and_the_link_stays(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    [real] = copy_samples(tmp_path, ["windsurf/mcp_config.json"])
    link = tmp_path / "home" / ".codeium" / "windsurf" / "mcp_config.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)

    done = import_(user_env(tmp_path / "home", keyring), link, "--replace", "--no-start")

    assert done.code == 0, done.err
    assert link.is_symlink()
    assert link.resolve() == real.resolve()
    assert "aai-gateway" in json.loads(real.read_text(encoding="utf-8"))["mcpServers"]
    [backup] = link.parent.glob("mcp_config.json.aai-backup-*")
    assert not backup.is_symlink()


def test_a_file_with_comments_is_not_replaced_and_the_import_says_how_to_do_it_by_hand(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    [cursor] = copy_samples(tmp_path, ["cursor/mcp.json"])
    original = cursor.read_bytes()

    done = import_(user_env(tmp_path / "home", keyring), cursor, "--replace", "--no-start")

    assert done.code == 1
    assert "has comments or trailing commas, which rewriting it would lose; not changed" in done.err
    assert cursor.read_bytes() == original
    assert list(cursor.parent.glob("*.aai-backup-*")) == []
    assert (tmp_path / "home" / ".aai" / "notion" / "aai.json").is_file()


def test_importing_again_updates_the_same_descriptors_and_never_overwrites_one_it_did_not_write(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = user_env(home, keyring)
    own = home / ".aai" / "time" / "aai.json"
    own.parent.mkdir(parents=True)
    own_text = json.dumps(
        {
            "schemaVersion": "1.0",
            "version": "2.0.0",
            "app": {"id": "time", "name": {"en": "My time"}, "defaultLang": "en", "description": "Mine"},
            "execution": {"type": "mcp", "command": "my-time-server"},
        }
    )
    own.write_text(own_text, encoding="utf-8")
    [config] = copy_samples(tmp_path, ["claude-desktop/claude_desktop_config.json"])

    first = import_(env, config, "--no-start")
    folders = sorted(p.name for p in (home / ".aai").iterdir())
    config.write_text(
        config.read_text(encoding="utf-8").replace(MOVED_SECRETS[0], "ghp_ROTATEDrotated0123456789ROTATEDrot")
    )
    second = import_(env, config, "--no-start")

    assert first.code == 0 and second.code == 0, first.err + second.err
    assert own.read_text(encoding="utf-8") == own_text
    [time_id] = [name for name in folders if name.startswith("time-")]
    assert (
        f"{own} was not written by aai-gateway import; left as it is: this server is imported as {time_id}"
        in first.out
    )
    assert sorted(p.name for p in (home / ".aai").iterdir()) == folders
    assert f"update {home / '.aai' / 'github' / 'aai.json'}" in second.out
    assert keyring_secrets(keyring)["github"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_ROTATEDrotated0123456789ROTATEDrot"
    }
    assert descriptor(home, time_id)["x-imported-from"]["server"] == "time"  # type: ignore[index]


HOSTILE_NAMES = [
    "../../escape",
    "a/b\\c",
    "\x1b[31mred\x07",
    "..",
    "x" * 300,
    "CON",
    "日本語",
    "",
    "two\nlines",
]


def test_hostile_server_names_give_descriptors_only_in_their_own_folders(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = user_env(home, keyring)
    names = HOSTILE_NAMES
    config = tmp_path / "hostile.json"
    servers = {name: {"command": "mcp-server", "args": [str(index)]} for index, name in enumerate(names)}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    done = import_(env, config)

    assert done.code == 0, done.err
    written = sorted(tmp_path.rglob("aai.json"))
    assert len(written) == len(names)
    assert all(path.parent.parent == home / ".aai" for path in written)
    apps = scanned_apps(env)
    assert all(path.parent.name in apps for path in written)
    assert "\x1b" not in done.out + done.err
    assert "← two\\nlines (" in done.out  # one line: a line break in a name is shown, not printed


def test_a_file_whose_every_server_is_malformed_says_why_each_was_not_read_and_fails(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    servers = {"no-command": {"args": ["x"]}, "numeric": {"command": 5}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    not_servers = tmp_path / "array.json"
    not_servers.write_text(json.dumps({"mcpServers": [{"command": "x"}]}), encoding="utf-8")

    done = import_(user_env(tmp_path / "home", None), config, not_servers, "--dry-run")

    assert done.code == 1
    assert f"{config}: /mcpServers/no-command: has neither a command nor a url" in done.out
    assert f"{config}: /mcpServers/numeric/command: command is a number; expected a string" in done.out
    assert f"{not_servers}: /mcpServers: is an array; expected an object of servers by name" in done.out


def test_without_files_it_lists_the_configurations_of_every_client_found_in_their_default_places(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    places = {
        "claude-desktop/claude_desktop_config.json": home
        / ".config"
        / "Claude"
        / "claude_desktop_config.json",
        "cursor/mcp.json": home / ".cursor" / "mcp.json",
        "codex/config.toml": home / ".codex" / "config.toml",
    }
    for sample, place in places.items():
        place.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / sample, place)
    env = user_env(home, None)
    env.pop("CODEX_HOME", None)
    env.pop("COLUMNS")  # read through a pipe, as a script reads it: every cell whole

    done = import_(env, "--dry-run")

    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "Found 3 configuration files:"
    assert lines[1].split() == ["CLIENT", "FILE", "SERVERS"]
    rows = [line.split(maxsplit=2) for line in lines[3:6]]
    assert rows == [
        [
            "claude-desktop",
            str(places["claude-desktop/claude_desktop_config.json"]),
            "filesystem, github, postgres, time",
        ],
        ["cursor", str(places["cursor/mcp.json"]), "playwright, userjot, notion, events"],
        ["codex", str(places["codex/config.toml"]), "context7, github, figma, catalog, docs.internal"],
    ]
    assert not (home / ".aai").exists()
