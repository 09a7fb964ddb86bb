"""`aai-gateway scan` shows how tools/list lists the apps (`[listing]` of config.toml), and
`aai-gateway guide APP --operations` prints what `app_<id>` answers with `operations`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from tests.builders import c_descriptor, write_json
from tests.server.conftest import adapter_app


@pytest.fixture
def apps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three apps that run here, and a config.toml (empty until a test writes its [listing])."""
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    for name in ("one", "two"):
        document = c_descriptor(f"dev.test.{name}", name=name, type="http", baseUrl="http://127.0.0.1:9")
        write_json(tmp_path / "apps" / f"{name}.json", document)
    (tmp_path / "config.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "apps"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listing_section(out: str) -> list[str]:
    """The lines of scan's tools/list section."""
    section = out.split("\ntools/list ([listing] in config.toml)\n", 1)[1].split("\n\n", maxsplit=1)[0]
    return [line.strip() for line in section.splitlines()]


def test_scan_shows_the_listing_mode_the_threshold_and_the_pins(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    _, out, _ = run(capsys, "scan", "--no-default-paths", "--path", str(apps))
    assert listing_section(out) == ["every app listed (3 apps, at most max_apps = 20)", "pinned: none"]

    (apps.parent / "config.toml").write_text(
        '[listing]\nmax_apps = 2\npinned = ["dev.test.one", "dev.test.gone", 5]\n', encoding="utf-8"
    )
    _, out, _ = run(capsys, "scan", "--no-default-paths", "--path", str(apps))
    head = listing_section(out)
    assert head[0] == (
        "bounded (3 apps, more than max_apps = 2): aai_search, web_discover, aai_exec and 1 pinned app"
    )
    assert head[1] == "pinned: dev.test.one, dev.test.gone"
    assert "pinned but not an app listed here: dev.test.gone" in head
    assert any(line.startswith("problem: ") and "listing.pinned[2]" in line for line in head)


def test_scan_json_reports_the_listing(capsys: pytest.CaptureFixture[str], apps: Path) -> None:
    (apps.parent / "config.toml").write_text('[listing]\nmax_apps = 1\npinned = ["dev.test.two"]\n')
    _, out, _ = run(capsys, "scan", "--json", "--no-default-paths", "--path", str(apps))
    listing = json.loads(out)["listing"]
    assert listing == {
        "mode": "bounded",
        "max_apps": 1,
        "listable": 3,
        "listed": ["dev.test.two"],
        "pinned": ["dev.test.two"],
        "unknown_pins": [],
        "cannot_run_here": {},
        "left_out": [],
        "problems": [],
    }


def test_guide_operations_prints_the_details_of_the_named_operations(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = run(
        capsys, "guide", "echo box", "--operations", "sleep,echo", "--no-default-paths", "--path", str(apps)
    )
    assert code == 0
    assert out.startswith("# Adapter: operation details")
    assert out.index("### sleep") < out.index("### echo") and "### fail" not in out


def test_guide_operations_with_an_unknown_name_fails_naming_the_closest(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, _, err = run(
        capsys, "guide", "dev.test.adapter", "--operations", "ecco", "--no-default-paths", "--path", str(apps)
    )
    assert code == 2
    assert "no operation 'ecco' (did you mean 'echo'?)" in err


def test_a_command_other_than_serve_leaves_pin_warnings_to_scans_listing_section(
    capsys: pytest.CaptureFixture[str], apps: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (apps.parent / "config.toml").write_text('[listing]\npinned = ["dev.test.gone"]\n', encoding="utf-8")

    with caplog.at_level(logging.WARNING, logger="aai_gateway"):
        code, _, err = run(capsys, "guide", "dev.test.one", "--no-default-paths", "--path", str(apps))

    assert code == 0
    assert "pinned but" not in err + caplog.text  # its output is the guide, not the config's state
