"""`scan`, `validate` and `diff` as a user runs them, with a hostile descriptor among the files: they
finish normally and name the file and pointer, never with a traceback (issue 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.builders import c_descriptor, write_json

HOSTILE_VERSION = "1" + "0" * 5000 + ".0.0"


def aai_gateway(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aai_gateway", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "AAI_GATEWAY_PATH": ""},
        check=False,
        timeout=60,
    )


def folder_with_a_hostile_file(tmp_path: Path) -> tuple[Path, Path, Path]:
    good = write_json(tmp_path / "apps" / "good.json", c_descriptor("dev.test.good"))
    hostile = c_descriptor("dev.test.hostile")
    hostile["version"] = HOSTILE_VERSION
    bad = write_json(tmp_path / "apps" / "hostile.json", hostile)
    return tmp_path / "apps", good, bad


def test_scan_lists_the_good_app_and_the_hostile_file_with_its_pointer(tmp_path: Path) -> None:
    folder, _, bad = folder_with_a_hostile_file(tmp_path)

    done = aai_gateway("scan", "--json", "--no-default-paths", "--path", str(folder))

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert [a["id"] for a in report["apps"]] == ["dev.test.good"]
    [skipped] = report["skipped"]
    assert skipped["path"] == str(bad)
    assert [p["pointer"] for p in skipped["problems"] if p["severity"] == "error"] == ["/version"]


def test_validate_reports_the_hostile_file_at_its_pointer_and_exits_one(tmp_path: Path) -> None:
    _, good, bad = folder_with_a_hostile_file(tmp_path)

    done = aai_gateway("validate", str(good), str(bad))

    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    assert f"{good}: ok: dev.test.good 1.0.0" in done.stdout
    assert (
        f"{bad}: /version: version '10000000000000000000000000000000…' (5005 characters) is too long"
    ) in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) < 400


def test_diff_with_a_version_of_thousands_of_digits_names_it_instead_of_crashing(tmp_path: Path) -> None:
    old = write_json(tmp_path / "old.json", c_descriptor("dev.test.app"))
    changed = c_descriptor("dev.test.app")
    changed["version"] = "1.0.0-" + "1" + "0" * 5000  # valid semver, but its comparison once ran int()
    new = write_json(tmp_path / "new.json", changed)

    done = aai_gateway("diff", str(old), str(new))

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{new}: /version: version '1.0.0-100000" in done.stderr
    assert "…' (5007 characters) is too long" in done.stderr
