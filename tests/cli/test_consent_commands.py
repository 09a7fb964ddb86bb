"""`aai-gateway consent list|grant|revoke` over an in-memory secret store: grants by discovery or
by the exact source CONSENT_REQUIRED names, revokes that need no descriptor, callers checked."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from aai_gateway.auth import MemorySecretStore
from aai_gateway.cli import runtime
from aai_gateway.cli.main import main
from aai_gateway.consent import ConsentStore
from tests.builders import write_json
from tests.server.conftest import adapter_app


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> MemorySecretStore:
    store = MemorySecretStore()
    monkeypatch.setattr(runtime, "secret_store", lambda: store)
    monkeypatch.setattr(runtime, "consent_store", lambda: ConsentStore(store))
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    return store


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    return tmp_path / "apps"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    code, out, _ = run(capsys, "consent", "list", "--json")
    assert code == 0
    rows: list[dict[str, str]] = json.loads(out)
    return [{k: v for k, v in row.items() if k != "decided_at"} for row in rows]


def found(apps: Path) -> list[str]:
    return ["--no-default-paths", "--path", str(apps)]


def grant(capsys: pytest.CaptureFixture[str], apps: Path, *argv: str) -> tuple[int, str, str]:
    """`consent grant ARGV` finding the app by discovery in `apps`."""
    return run(capsys, "consent", "grant", *argv, *found(apps))


def test_a_grant_by_discovery_is_bound_to_the_apps_absolute_file(
    capsys: pytest.CaptureFixture[str],
    secrets: MemorySecretStore,
    apps: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(apps.parent)
    code, out, _ = run(
        capsys, "consent", "grant", "--caller", "claude-code", "--app", "echo box", "--tool", "echo",
        "--no-default-paths", "--path", "apps",
    )  # fmt: skip
    assert code == 0 and "claude-code may now use echo of dev.test.adapter" in out
    assert listed(capsys) == [
        {
            "caller": "claude-code",
            "app": "dev.test.adapter",
            "tool": "echo",
            "decision": "allow",
            "source": f"file:{apps / 'adapter.json'}",  # not the relative apps/adapter.json
        }
    ]


def test_a_grant_by_source_needs_no_discovery(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path
) -> None:
    source = f"file:{apps / 'adapter.json'}"
    code, out, _ = run(
        capsys, "consent", "grant", "--caller=cursor", "--app=dev.test.adapter", "--all", f"--source={source}"
    )
    assert code == 0 and "cursor may now use all tools of dev.test.adapter" in out
    assert listed(capsys) == [
        {"caller": "cursor", "app": "dev.test.adapter", "tool": "*", "decision": "allow", "source": source}
    ]
    code, _, err = run(
        capsys, "consent", "grant", "--caller=cursor", "--app=x", "--all", "--source=file:rel.json"
    )
    assert code == 2 and "absolute path" in err
    code, _, err = run(
        capsys, "consent", "grant", "--caller=cursor", "--app=x", "--all", "--source=http://a.b"
    )
    assert code == 2 and "write file:/absolute/path, bundled or https://origin" in err


def test_no_lasting_grant_goes_to_a_nameless_or_blank_caller(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path
) -> None:
    for caller in ("Unknown Client", " Unknown Client "):
        code, _, err = grant(capsys, apps, "--caller", caller, "--app", "dev.test.adapter", "--all")
        assert code == 2 and "consent.auto_allow" in err
    code, _, err = grant(capsys, apps, "--caller", "  ", "--app", "dev.test.adapter", "--all")
    assert code == 2 and "--caller is empty" in err
    grant(capsys, apps, "--caller", " zed ", "--app", "dev.test.adapter", "--all")
    assert [row["caller"] for row in listed(capsys)] == ["zed"]  # as the server names the client


def test_an_unknown_tool_is_named_with_the_apps_tools(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path
) -> None:
    code, _, err = grant(capsys, apps, "--caller", "a", "--app", "dev.test.adapter", "--tool", "ech")
    assert code == 2 and "has no tool 'ech'; its tools: echo, fail, sleep" in err


def test_revoke_works_from_the_stored_record_even_when_the_descriptor_is_gone(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path
) -> None:
    grant(capsys, apps, "--caller", "a", "--app", "dev.test.adapter", "--tool", "echo")
    grant(capsys, apps, "--caller", "a", "--app", "dev.test.adapter", "--tool", "fail")
    (apps / "adapter.json").unlink()
    code, out, _ = run(
        capsys, "consent", "revoke", "--caller", "a", "--app", "dev.test.adapter", "--tool", "echo"
    )
    assert code == 0 and out.startswith("Revoked for a: echo of dev.test.adapter")
    assert [row["tool"] for row in listed(capsys)] == ["fail"]
    code, out, _ = run(capsys, "consent", "revoke", "--caller", "a", "--app", "dev.test.adapter")
    assert out.startswith("Revoked for a: every tool of dev.test.adapter")
    code, out, _ = run(capsys, "consent", "revoke", "--caller", "a", "--app", "dev.test.adapter")
    assert code == 0 and out.startswith("Nothing was stored for a: every tool of dev.test.adapter")
    assert ConsentStore(secrets).list() == []


def test_revoke_finds_the_app_by_name_through_discovery(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path
) -> None:
    grant(capsys, apps, "--caller", "a", "--app", "dev.test.adapter", "--all")
    code, out, _ = run(capsys, "consent", "revoke", "--caller", "a", "--app", "echo box", *found(apps))
    assert code == 0 and out.startswith("Revoked for a: every tool of dev.test.adapter")


def test_list_shows_a_table_and_the_settings_in_effect(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore, apps: Path, tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "consent", "list")
    assert code == 0 and out.startswith("No consent decisions are stored.")
    assert f"no {tmp_path / 'config.toml'}: consent defaults" in out
    (tmp_path / "config.toml").write_text("[consent]\nalways_ask = true\n", encoding="utf-8")
    grant(capsys, apps, "--caller", "a", "--app", "dev.test.adapter", "--tool", "echo")
    _, out, _ = run(capsys, "consent", "list")
    header, _, row = out.splitlines()[:3]
    assert header.split() == ["CALLER", "APP", "TOOL", "DECISION", "DECIDED", "(UTC)", "SOURCE"]
    assert row.split()[:4] == ["a", "dev.test.adapter", "echo", "allow"]
    assert "always_ask = true: every execution asks" in out


def test_revoking_an_app_id_with_decisions_from_two_sources_asks_which_one_is_meant(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore
) -> None:
    for source in ("bundled", "https://evil.example"):
        code, _, err = run(
            capsys,
            "consent",
            "grant",
            "--caller=cursor",
            "--app=com.github.api",
            "--all",
            f"--source={source}",
        )
        assert code == 0, err
    code, _, err = run(capsys, "consent", "revoke", "--caller=cursor", "--app=com.github.api", "--all")
    assert code == 2
    assert "--source=bundled" in err and "--source=https://evil.example" in err
    assert len(listed(capsys)) == 2  # nothing was forgotten
    code, out, _ = run(
        capsys, "consent", "revoke", "--caller=cursor", "--app=com.github.api", "--all", "--source=bundled"
    )
    assert code == 0 and "Revoked" in out
    assert [row["source"] for row in listed(capsys)] == ["https://evil.example"]


def test_the_revoke_commands_printed_for_an_ambiguous_revoke_work_as_printed(
    capsys: pytest.CaptureFixture[str], secrets: MemorySecretStore
) -> None:
    for source in ("https://a.example", "https://b.example"):
        grant_by_source = [
            "consent",
            "grant",
            "--caller=cc",
            "--app=dev.x",
            "--tool=whoami",
            f"--source={source}",
        ]
        assert run(capsys, *grant_by_source)[0] == 0
    code, _, err = run(capsys, "consent", "revoke", "--caller=cc", "--app=dev.x")
    assert code == 2
    printed = [line.split(": ", 1)[1] for line in err.splitlines() if "aai-gateway consent revoke" in line]
    assert len(printed) == 2 and all("--tool" not in command for command in printed)
    code, out, _ = run(capsys, *shlex.split(printed[1])[1:])  # exactly as printed
    assert code == 0 and "Revoked" in out
    assert [row["source"] for row in listed(capsys)] == ["https://a.example"]
    assert run(capsys, "consent", "revoke", "--caller=cc", "--app=dev.x", "--tool=")[0] == 2
