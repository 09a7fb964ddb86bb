"""The CLI as a user runs it: output people can read, JSON scripts can read, and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from aai_gateway import __version__
from aai_gateway.cli.main import main
from tests.builders import c_descriptor, write_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"aai-gateway {__version__}"


@pytest.mark.parametrize(
    ("value", "complaint"), [("1000", "1000 is too small"), ("4MiB", "'4MiB' is not a whole number of bytes")]
)
def test_serve_refuses_an_unusable_message_size_limit_before_serving(
    capsys: pytest.CaptureFixture[str], value: str, complaint: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--no-default-paths", "--max-message-bytes", value])
    assert exited.value.code == 2
    assert complaint in capsys.readouterr().err


def test_scan_lists_every_bundled_example_in_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scan", "--no-default-paths", "--path", str(EXAMPLES), "--platform", "linux")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("ID"))
    assert header.split() == [
        "ID",
        "NAME",
        "PLATFORM",
        "EXECUTION",
        "TOOLS",
        "RUNS",
        "HERE",
        "SERVER",
        "SOURCE",
    ]
    for app_dir in sorted(p for p in EXAMPLES.iterdir() if (p / "aai.json").is_file()):
        assert app_dir.name in out
    assert "Skipped" not in out


def test_scan_shows_localized_names_for_the_requested_locale(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_json(tmp_path / "app.json", c_descriptor("dev.test.locale", name="Notes"))
    _, out, _ = run(capsys, "scan", "--no-default-paths", "--path", str(tmp_path), "--locale", "zh-TW")
    assert "Notes（中文）" in out


def test_scan_alias_and_json_output_report_apps_and_skipped_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_json(tmp_path / "good.json", c_descriptor("dev.test.good"))
    (tmp_path / "bad.json").write_text('{"schemaVersion": "1.0"}')
    code, out, _ = run(capsys, "--scan", "--json", "--no-default-paths", "--path", str(tmp_path))
    assert code == 0
    report = json.loads(out)
    assert [a["id"] for a in report["apps"]] == ["dev.test.good"]
    assert report["apps"][0]["tools"] == ["ping"]
    [bad] = report["skipped"]
    assert bad["path"] == str(tmp_path / "bad.json")
    assert {p["pointer"] for p in bad["problems"]} >= {"/version", "/platform", "/app", "/tools"}


def test_validate_reports_every_problem_and_exits_one_when_any_file_is_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = write_json(tmp_path / "good.json", c_descriptor("dev.test.good"))
    broken = c_descriptor("dev.test.broken")
    broken["version"] = "one"
    broken["tools"].append(dict(broken["tools"][0]))
    bad = write_json(tmp_path / "bad.json", broken)
    code, out, _ = run(capsys, "validate", str(good), str(bad))
    assert code == 1
    assert f"{good}: ok: dev.test.good 1.0.0, dialect C, linux: 1 tool" in out
    assert f"{bad}: INVALID (2 errors)" in out
    assert f"{bad}: /version: version 'one' is not a semantic version" in out
    assert f"{bad}: /tools/1/name: duplicate tool name 'ping' (first defined at /tools/0)" in out
    assert "1 of 2 files valid" in out


def test_validate_passes_all_bundled_examples_even_with_strict_warnings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [str(p) for p in sorted(EXAMPLES.glob("*/aai.json"))]
    assert len(files) >= 6
    code, out, _ = run(capsys, "validate", "--strict", "--json", *files)
    assert code == 0, out
    assert json.loads(out)["ok"] is True


def test_validate_strict_fails_on_warnings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    document = c_descriptor("dev.test.warn")
    document["app"]["aliasses"] = ["typo"]
    path = write_json(tmp_path / "warn.json", document)
    assert run(capsys, "validate", str(path))[0] == 0
    code, out, _ = run(capsys, "validate", "--strict", str(path))
    assert code == 1
    assert "/app/aliasses: warning: unknown field 'aliasses' is ignored; did you mean 'aliases'?" in out


def test_validate_reports_an_unreadable_path_instead_of_crashing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "validate", str(tmp_path / "missing.json"))
    assert code == 1
    assert "cannot read file: does not exist" in out


def test_schema_is_draft7_and_accepts_every_bundled_camelcase_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0
    schema: dict[str, Any] = json.loads(out)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    validator = jsonschema_rs.validator_for(schema)
    camel = [p for p in EXAMPLES.glob("*/aai.json") if "schemaVersion" in json.loads(p.read_text())]
    assert camel
    for path in camel:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        assert errors == [], path


def test_schema_flags_what_the_gateway_rejects(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "schema")
    schema = json.loads(out)
    validator = jsonschema_rs.validator_for(schema)
    no_base_url = c_descriptor("dev.test.http", type="http")
    assert not validator.is_valid(no_base_url)
    bad_parameters = c_descriptor("dev.test.params")
    bad_parameters["tools"][0]["parameters"]["properties"]["text"]["type"] = "strng"
    assert not validator.is_valid(bad_parameters)


def test_diff_exits_one_when_the_version_bump_is_too_small(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = write_json(tmp_path / "old.json", c_descriptor("dev.test.diff"))
    changed = c_descriptor("dev.test.diff")
    changed["version"] = "1.1.0"
    changed["tools"][0]["parameters"]["required"] = ["text"]
    new = write_json(tmp_path / "new.json", changed)
    code, out, _ = run(capsys, "diff", str(old), str(new))
    assert code == 1
    assert "MAJOR  parameter became required" in out
    assert "Version 1.0.0 → 1.1.0: NOT OK, needs a MAJOR bump: use 2.0.0 or later" in out
    changed["version"] = "2.0.0"
    write_json(new, changed)
    assert run(capsys, "diff", str(old), str(new))[0] == 0


def test_diff_of_an_invalid_file_names_the_file_and_its_problems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = write_json(tmp_path / "old.json", c_descriptor("dev.test.diff"))
    (tmp_path / "new.json").write_text("[]")
    code, _, err = run(capsys, "diff", str(old), str(tmp_path / "new.json"))
    assert code == 2
    assert f"{tmp_path / 'new.json'}: /: an aai.json must be a JSON object, not an array" in err


def test_the_console_script_reads_aai_gateway_path_and_keeps_stdout_for_output(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_json(first / "a.json", c_descriptor("dev.test.one"))
    write_json(second / "b" / "aai.json", c_descriptor("dev.test.two"))
    env = {**os.environ, "AAI_GATEWAY_PATH": os.pathsep.join([str(first), str(second)])}
    done = subprocess.run(
        [sys.executable, "-m", "aai_gateway", "scan", "--json", "--no-default-paths"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert [a["id"] for a in json.loads(done.stdout)["apps"]] == ["dev.test.one", "dev.test.two"]


def test_validate_reports_an_applescript_comment_whose_end_is_in_doubt_at_its_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tool = {
        "name": "greet",
        "description": "Greet someone",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
        "script": '(* say "*)" *) set x to "Hi ${who}"',
    }
    document = {
        "schema_version": "1.0",
        "appId": "dev.test.greeter",
        "name": "Greeter",
        "description": "Greets",
        "version": "1.0",
        "platforms": {"macos": {"automation": "applescript", "tools": [tool]}},
    }
    path = write_json(tmp_path / "greeter.json", document)

    code, out, _ = run(capsys, "validate", str(path))

    assert code == 1
    assert (
        f"{path}: /platforms/macos/tools/0/script: the block comment (* … *) at character 1 holds a "
        'double quote (")'
    ) in out


@pytest.mark.skipif(sys.platform == "win32", reason="a pipe named by its /dev/fd path")
def test_validate_and_diff_read_a_descriptor_from_a_pipe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`cat aai.json | aai-gateway validate /dev/stdin`, `aai-gateway diff <(git show …) aai.json`."""
    text = json.dumps(c_descriptor("dev.test.piped")).encode()
    path = write_json(tmp_path / "aai.json", c_descriptor("dev.test.piped"))

    def piped() -> str:
        reading, writing = os.pipe()
        os.write(writing, text)
        os.close(writing)
        return f"/dev/fd/{reading}"

    named = piped()
    code, out, _ = run(capsys, "validate", named)
    os.close(int(named.rsplit("/", 1)[1]))
    assert code == 0 and f"{named}: ok: dev.test.piped 1.0.0" in out, out
    named = piped()
    code, out, err = run(capsys, "diff", named, str(path))
    os.close(int(named.rsplit("/", 1)[1]))
    assert code == 0, err


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_scan_reads_each_descriptor_once_however_few_the_catalog_keeps_in_memory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: list[str]
) -> None:
    from aai_gateway.discovery import file_outcomes, loading

    for number in range(6):
        write_json(tmp_path / f"app{number}" / "aai.json", c_descriptor(f"dev.test.app{number}"))
    monkeypatch.setattr(loading, "HELD_DESCRIPTORS", 2)  # as with thousands of apps: fewer held than listed
    read: list[str] = []

    def counted(path: str, *rest: Any) -> Any:
        read.append(path)
        return file_outcomes.read_file(path, *rest)

    monkeypatch.setattr(loading, "read_file", counted)

    code, out, _ = run(capsys, "scan", "--no-default-paths", "--path", str(tmp_path), *output)

    assert code == 0 and "dev.test.app5" in out
    assert len(read) == len(set(read)) <= 6


@pytest.mark.parametrize("notice_from", [3, 4])
def test_scan_says_how_many_descriptor_files_it_reads_when_they_are_many(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notice_from: int
) -> None:
    from aai_gateway.cli import common

    for number in range(3):
        write_json(tmp_path / f"app{number}" / "aai.json", c_descriptor(f"dev.test.app{number}"))
    monkeypatch.setattr(common, "READING_NOTICE_FROM", notice_from)

    code, _, err = run(capsys, "scan", "--no-default-paths", "--path", str(tmp_path))

    assert code == 0
    assert ("Reading 3 descriptor files…" in err) is (notice_from == 3)
