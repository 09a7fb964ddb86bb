"""What the CLI prints never passes a control sequence from a descriptor, the web cache or the
config file to the terminal: each command shows them as visible escapes, `--json` stays JSON."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from aai_gateway.auth import MemorySecretStore
from aai_gateway.cli import runtime
from aai_gateway.cli.common import configure_logging
from aai_gateway.cli.main import main
from aai_gateway.cli.terminal import visible
from aai_gateway.discovery.web_cache import WebCache
from tests.builders import c_descriptor, write_json

RETITLE = "\x1b]0;owned\x07"  # sets the terminal window's title
CLEAR = "\x1b[2J"
CSI = "\x9b2J"  # the C1 form of ESC [
RAW = ("\x1b", "\x07", "\x9b")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_no_control_sequences(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} reached the terminal: {text!r}"


@pytest.fixture
def hostile_apps(tmp_path: Path) -> Path:
    document = c_descriptor("dev.test.hostile", name=f"Evil{RETITLE}{CLEAR}App{CSI}")
    document["app"]["description"] = f"steals {RETITLE} the title"
    write_json(tmp_path / "apps" / "hostile.json", document)
    return tmp_path / "apps"


def test_visible_escapes_controls_and_keeps_newlines_tabs_and_ordinary_text() -> None:
    text = f"a\tb\nc{RETITLE}\r\x7f{CSI}\u202e\ud800 中文 é"

    assert visible(text) == "a\tb\nc\\u001b]0;owned\\u0007\\u000d\\u007f\\u009b2J\\u202e\\ud800 中文 é"
    # what a reader cannot see, escaped as the agent reads it (`shown_text.escaped_hidden`)
    assert visible("a\u200bb\U000e0041 👨\u200d👩") == "a\\u200bb\\udb40\\udc41 👨\u200d👩"


def test_scan_shows_an_apps_name_without_the_control_sequences_its_file_wrote(
    capsys: pytest.CaptureFixture[str], hostile_apps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A descriptor's texts lose them when it loads (descriptor/shown_text.py); `visible` is the
    terminal's own guard for the rest (file names, config keys, cache metadata, logs)."""
    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the whole name
    code, out, err = run(capsys, "scan", "--no-default-paths", "--path", str(hostile_apps))

    assert code == 0, err
    assert_no_control_sequences(out + err)
    assert " EvilApp " in out and "[2J" not in out and "owned" not in out


def test_scan_json_stays_json_and_holds_the_text_agents_read(
    capsys: pytest.CaptureFixture[str], hostile_apps: Path
) -> None:
    code, out, _ = run(capsys, "scan", "--json", "--no-default-paths", "--path", str(hostile_apps))

    assert code == 0
    assert_no_control_sequences(out)
    [app] = json.loads(out)["apps"]
    assert app["name"] == "EvilApp"
    assert any("terminal escape sequences removed" in w["message"] for w in app["warnings"])


def test_guide_keeps_its_lines_and_shows_no_control_sequence(
    capsys: pytest.CaptureFixture[str], hostile_apps: Path
) -> None:
    code, out, _ = run(capsys, "guide", "dev.test.hostile", "--no-default-paths", "--path", str(hostile_apps))

    assert code == 0
    assert_no_control_sequences(out)
    assert out.startswith("# EvilApp Operation Guide\n\n## App Info\n")
    assert "- Description: steals the title\n" in out


def test_validate_escapes_a_hostile_file_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_json(tmp_path / f"evil{RETITLE}.json", c_descriptor("dev.test.named"))

    code, out, _ = run(capsys, "validate", str(path))

    assert code == 0
    assert_no_control_sequences(out)
    assert "evil\\u001b]0;owned\\u0007.json: ok: dev.test.named 1.0.0" in out


def test_cache_list_escapes_what_the_cache_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "https://example.com/.well-known/aai.json?\u202e\u2066moc.elpmaxe"
    WebCache(tmp_path / "cache").put("https://example.com", source, b"{}")
    monkeypatch.setenv("AAI_GATEWAY_CACHE_DIR", str(tmp_path / "cache"))

    _, table, _ = run(capsys, "cache", "list")
    _, listing, _ = run(capsys, "cache", "list", "--json")

    assert "aai.json?\\u202e\\u2066moc.elpmaxe" in table and "\u202e" not in table
    assert json.loads(listing)["web"][0]["source_url"] == source


def test_auth_status_escapes_the_file_a_credential_is_bound_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "secret_store", MemorySecretStore)
    document = c_descriptor("dev.test.keyed", type="http", baseUrl="http://127.0.0.1:9")
    document["auth"] = {
        "type": "apiKey",
        "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://keys.example"},
    }
    folder = tmp_path / f"apps{CLEAR}"
    write_json(folder / "keyed.json", document)

    code, out, err = run(capsys, "auth", "status", "--no-default-paths", "--path", str(folder))

    assert code == 0, err
    assert_no_control_sequences(out)
    assert "apps\\u001b[2J" in out


def test_consent_list_escapes_what_the_config_file_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "secret_store", MemorySecretStore)
    config = tmp_path / "config.toml"
    config.write_text('[consent]\n"\\u001b]0;owned\\u0007" = true\n', encoding="utf-8")
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(config))

    code, out, _ = run(capsys, "consent", "list")

    assert code == 0
    assert_no_control_sequences(out)
    assert "consent.\\u001b]0;owned\\u0007: warning: unknown setting" in out


def test_log_lines_show_control_characters_as_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log_file = tmp_path / "gateway.log"
    configure_logging("WARNING", str(log_file))
    try:
        logging.getLogger("aai_gateway.test").warning("skipped %s", f"evil{RETITLE}.json")
    finally:
        logging.getLogger().handlers.clear()

    _, err = capsys.readouterr()
    for text in (err, log_file.read_text(encoding="utf-8")):
        assert_no_control_sequences(text)
        assert "skipped evil\\u001b]0;owned\\u0007.json" in text
