"""Discovery over a fake home: every source, precedence, and every way a file can be unusable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.builders import c_descriptor, write_json

SCAN_LAYOUT = Path(__file__).with_name("scan_layout.py")


def layout_spec(root: Path, os_name: str, *, paths: list[Path], dev: bool = False) -> dict[str, Any]:
    home = root / "home"
    return {
        "os": os_name,
        "home": str(home),
        "xdg_data_home": str(home / ".local" / "share"),
        "xdg_data_dirs": [str(root / "usr" / "local" / "share"), str(root / "usr" / "share")],
        "appdata": str(root / "AppData" / "Roaming"),
        "opt_root": str(root / "opt"),
        "applications_roots": [str(root / "Applications"), str(home / "Applications")],
        "derived_data": str(home / "Library" / "Developer" / "Xcode" / "DerivedData"),
        "paths": [str(p) for p in paths],
        "dev": dev,
        "bundled_dir": str(root / "bundled"),
    }


def run_scan(spec: dict[str, Any]) -> dict[str, Any]:
    """Scan in a child process; as root, without the capabilities that bypass file permissions."""
    command = [sys.executable, str(SCAN_LAYOUT), json.dumps(spec)]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *command]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env, timeout=60)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def apps(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["id"], a["source_label"], a["source"]) for a in result["apps"]]


def skipped(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["path"], s["reason"]) for s in result["skipped"]]


@pytest.fixture
def linux_home(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path
    home = root / "home"
    extra = root / "extra"
    write_json(extra / "alpha.json", c_descriptor("dev.test.alpha", name="Alpha"))
    write_json(extra / "beta" / "aai.json", c_descriptor("dev.test.beta", name="Beta"))
    (extra / "notes.txt").write_text("not a descriptor")
    dot_aai = home / ".aai"
    write_json(dot_aai / "dev.test.alpha" / "aai.json", c_descriptor("dev.test.alpha", name="Alpha (home)"))
    write_json(dot_aai / "dev.test.gamma" / "aai.json", c_descriptor("dev.test.gamma", name="Gamma"))
    (dot_aai / "broken").mkdir()
    (dot_aai / "broken" / "aai.json").write_text("{not json")
    (dot_aai / "emptydir").mkdir()
    xdg_home = home / ".local" / "share" / "applications" / "aai"
    write_json(xdg_home / "delta.json", c_descriptor("dev.test.delta", name="Delta"))
    secret = write_json(xdg_home / "secret.json", c_descriptor("dev.test.secret"))
    secret.chmod(0)
    bad_version = c_descriptor("dev.test.badversion")
    bad_version["version"] = "1.0"
    write_json(xdg_home / "bad-version.json", bad_version)
    xdg_dir = root / "usr" / "local" / "share" / "applications" / "aai"
    xdg_dir.mkdir(parents=True)
    (xdg_dir / "loop.json").symlink_to(xdg_dir / "loop2.json")
    (xdg_dir / "loop2.json").symlink_to(xdg_dir / "loop.json")
    (xdg_dir / "dangling.json").symlink_to(root / "nowhere.json")
    epsilon = {
        "schema_version": "1.0",
        "appId": "dev.test.epsilon",
        "name": "Epsilon|厄普西隆",
        "description": "A DBus app",
        "version": "2.1",
        "platforms": {
            "linux": {
                "automation": "dbus",
                "service": "dev.test.Epsilon",
                "object": "/dev/test/Epsilon",
                "interface": "dev.test.Epsilon",
                "tools": [
                    {
                        "name": "ping",
                        "description": "Ping",
                        "parameters": {"type": "object"},
                        "method": "Ping",
                    }
                ],
            }
        },
    }
    write_json(root / "opt" / "epsilon" / "aai.json", epsilon)
    (root / "opt" / "tools").mkdir()
    write_json(root / "bundled" / "zeta.json", c_descriptor("dev.test.zeta", name="Zeta"))
    write_json(root / "bundled" / "gamma.json", c_descriptor("dev.test.gamma", name="Gamma (bundled)"))
    return root, extra


def test_linux_discovery_reads_every_source_in_precedence_order_and_reports_every_skipped_file(
    linux_home: tuple[Path, Path],
) -> None:
    root, extra = linux_home
    home = root / "home"
    result = run_scan(layout_spec(root, "linux", paths=[extra]))

    assert apps(result) == [
        ("dev.test.alpha", "--path", str(extra / "alpha.json")),
        ("dev.test.beta", "--path", str(extra / "beta" / "aai.json")),
        ("dev.test.delta", "XDG_DATA_HOME", str(home / ".local/share/applications/aai/delta.json")),
        ("dev.test.epsilon", "/opt", str(root / "opt/epsilon/aai.json")),
        ("dev.test.gamma", "~/.aai", str(home / ".aai/dev.test.gamma/aai.json")),
        ("dev.test.zeta", "bundled", str(root / "bundled/zeta.json")),
    ]
    xdg_home = home / ".local/share/applications/aai"
    xdg_dir = root / "usr/local/share/applications/aai"
    assert skipped(result) == [
        (
            str(home / ".aai/broken/aai.json"),
            "invalid descriptor: /: invalid JSON at line 1 column 2: "
            "Expecting property name enclosed in double quotes",
        ),
        (
            str(home / ".aai/dev.test.alpha/aai.json"),
            f"duplicate app id 'dev.test.alpha': already provided by {extra / 'alpha.json'} (--path), "
            "which takes precedence",
        ),
        (
            str(xdg_home / "bad-version.json"),
            "invalid descriptor: /version: version '1.0' is not a semantic version; "
            "write it as MAJOR.MINOR.PATCH, e.g. '1.0.0'",
        ),
        (str(xdg_home / "secret.json"), "permission denied"),
        (str(xdg_dir / "dangling.json"), "broken symlink"),
        (str(xdg_dir / "loop.json"), "symlink loop"),
        (str(xdg_dir / "loop2.json"), "symlink loop"),
        (
            str(root / "bundled/gamma.json"),
            f"duplicate app id 'dev.test.gamma': already provided by {home / '.aai/dev.test.gamma/aai.json'} "
            "(~/.aai), which takes precedence",
        ),
    ]
    statuses = [(s["label"], s["status"], s["found"]) for s in result["sources"]]
    assert statuses == [
        ("--path", "ok", 2),
        ("~/.aai", "ok", 2),
        ("XDG_DATA_HOME", "ok", 1),
        ("XDG_DATA_DIRS", "ok", 0),
        ("XDG_DATA_DIRS", "does not exist", 0),
        ("/opt", "ok", 1),
        ("bundled", "ok", 2),
    ]


def test_a_dialect_b_descriptor_found_on_linux_offers_its_linux_tools(linux_home: tuple[Path, Path]) -> None:
    root, extra = linux_home
    result = run_scan(layout_spec(root, "linux", paths=[extra]))
    epsilon = next(a for a in result["apps"] if a["id"] == "dev.test.epsilon")
    assert (epsilon["platform"], epsilon["execution"], epsilon["tools"], epsilon["version"]) == (
        "linux",
        ["dbus"],
        ["ping"],
        "2.1.0",
    )


def test_no_default_paths_reads_only_the_given_paths_and_reports_a_missing_one(
    linux_home: tuple[Path, Path],
) -> None:
    root, extra = linux_home
    spec = layout_spec(root, "linux", paths=[extra, root / "missing"])
    spec["no_default_paths"] = True
    result = run_scan(spec)
    assert [a[0] for a in apps(result)] == ["dev.test.alpha", "dev.test.beta"]
    assert skipped(result) == [(str(root / "missing"), "path does not exist")]


def test_a_file_given_as_path_is_read_directly(tmp_path: Path) -> None:
    file = write_json(tmp_path / "single" / "app.json", c_descriptor("dev.test.single"))
    spec = layout_spec(tmp_path, "linux", paths=[file])
    spec["no_default_paths"] = True
    assert apps(run_scan(spec)) == [("dev.test.single", "--path", str(file))]


def test_macos_discovery_finds_bundles_up_to_depth_four_skips_loops_and_adds_xcode_products_with_dev(
    tmp_path: Path,
) -> None:
    applications = tmp_path / "Applications"
    resources = Path("Contents/Resources/aai.json")
    write_json(applications / "Alpha.app" / resources, c_descriptor("dev.mac.alpha", platform="macos"))
    write_json(
        applications / "Utilities/Beta.app" / resources, c_descriptor("dev.mac.beta", platform="macos")
    )
    write_json(applications / "a/b/c/Deep.app" / resources, c_descriptor("dev.mac.deep", platform="macos"))
    write_json(
        applications / "a/b/c/d/TooDeep.app" / resources, c_descriptor("dev.mac.toodeep", platform="macos")
    )
    (applications / "NoDescriptor.app/Contents/Resources").mkdir(parents=True)
    (applications / "Utilities/Loop").symlink_to(applications)
    home_apps = tmp_path / "home" / "Applications"
    write_json(home_apps / "Gamma.app" / resources, c_descriptor("dev.mac.gamma", platform="macos"))
    products = tmp_path / "home/Library/Developer/Xcode/DerivedData/Proj-abc/Build/Products/Debug"
    write_json(products / "Dev.app" / resources, c_descriptor("dev.mac.dev", platform="macos"))
    xdg = tmp_path / "home/.local/share/applications/aai"
    write_json(xdg / "linux-only.json", c_descriptor("dev.linux.only"))

    plain = run_scan(layout_spec(tmp_path, "macos", paths=[]))
    assert [a[0] for a in apps(plain)] == ["dev.mac.alpha", "dev.mac.beta", "dev.mac.deep", "dev.mac.gamma"]
    assert skipped(plain) == [
        (str(applications / "Utilities/Loop"), "symlink loop (directory already visited)")
    ]

    with_dev = run_scan(layout_spec(tmp_path, "macos", paths=[], dev=True))
    assert ("dev.mac.dev", "Xcode DerivedData", str(products / "Dev.app" / resources)) in apps(with_dev)


def test_windows_discovery_reads_appdata_and_the_user_aai_folder(tmp_path: Path) -> None:
    write_json(
        tmp_path / "AppData/Roaming/aai/one.json",
        c_descriptor("dev.win.one", platform="windows", type="com", progId="One.App"),
    )
    write_json(tmp_path / "home/.aai/dev.win.two/aai.json", c_descriptor("dev.win.two", platform="windows"))
    write_json(tmp_path / "home/.local/share/applications/aai/x.json", c_descriptor("dev.linux.only"))
    result = run_scan(layout_spec(tmp_path, "windows", paths=[]))
    assert [(a[0], a[1]) for a in apps(result)] == [("dev.win.one", "%APPDATA%"), ("dev.win.two", "~/.aai")]


def test_the_same_file_reached_through_two_sources_is_not_a_duplicate(tmp_path: Path) -> None:
    write_json(tmp_path / "home/.aai/dev.test.same/aai.json", c_descriptor("dev.test.same"))
    result = run_scan(layout_spec(tmp_path, "linux", paths=[tmp_path / "home/.aai"]))
    assert [a[0] for a in apps(result)] == ["dev.test.same"]
    assert skipped(result) == []


def test_descriptors_shipped_with_the_gateway_are_marked_bundled(linux_home: tuple[Path, Path]) -> None:
    root, extra = linux_home
    result = run_scan(layout_spec(root, "linux", paths=[extra]))
    assert [a["id"] for a in result["apps"] if a["source_label"] == "bundled"] == ["dev.test.zeta"]
