"""Where descriptors live, in precedence order (docs/architecture.md, "Discovery sources and
precedence").

`Layout` holds the machine's directories (`cli/` reads them from platformdirs and the environment,
tests build one by hand). `discovery_sources()` is pure: layout in, ordered list of places to
look out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

HostOs = Literal["linux", "macos", "windows"]


class Pattern(StrEnum):
    FILES_AND_APP_DIRS = "DIR/*.json and DIR/*/aai.json"
    APP_DIRS = "DIR/*/aai.json"
    FILES = "DIR/*.json"
    BUNDLES = "DIR/**/*.app/Contents/Resources/aai.json"
    XCODE_PRODUCTS = "DIR/*/Build/Products/*/*.app/Contents/Resources/aai.json"


@dataclass(frozen=True)
class SourceSpec:
    label: str
    root: Path
    pattern: Pattern
    explicit: bool = False  # named by the user: a missing root is then worth reporting
    bundled: bool = False  # shipped with the gateway: trusted like the gateway itself


@dataclass(frozen=True)
class Layout:
    os: HostOs
    home: Path
    xdg_data_home: Path
    xdg_data_dirs: tuple[Path, ...]
    appdata: Path | None = None
    opt_root: Path = Path("/opt")
    applications_roots: tuple[Path, ...] = ()
    derived_data: Path | None = None
    bundle_depth: int = 4


BUNDLED_DIR = Path(__file__).resolve().parent.parent / "bundled"


@dataclass(frozen=True)
class DiscoveryOptions:
    paths: Sequence[Path] = field(default_factory=tuple)
    no_default_paths: bool = False  # only --path: no user folders, no bundled descriptors
    dev: bool = False
    bundled_dir: Path | None = BUNDLED_DIR


def paths_from_env(value: str | None) -> list[Path]:
    """`AAI_GATEWAY_PATH` is an os.pathsep-separated list, like PATH."""
    return [Path(p) for p in (value or "").split(os.pathsep) if p.strip()]


def discovery_sources(layout: Layout, options: DiscoveryOptions) -> list[SourceSpec]:
    sources = [
        SourceSpec("--path", Path(p), Pattern.FILES_AND_APP_DIRS, explicit=True) for p in options.paths
    ]
    if options.no_default_paths:
        return sources
    sources.append(SourceSpec("~/.aai", layout.home / ".aai", Pattern.APP_DIRS))
    if layout.os == "linux":
        sources.append(
            SourceSpec("XDG_DATA_HOME", layout.xdg_data_home / "applications" / "aai", Pattern.FILES)
        )
        sources += [
            SourceSpec("XDG_DATA_DIRS", data_dir / "applications" / "aai", Pattern.FILES)
            for data_dir in layout.xdg_data_dirs
        ]
        sources.append(SourceSpec("/opt", layout.opt_root, Pattern.APP_DIRS))
    elif layout.os == "macos":
        sources += [SourceSpec("Applications", root, Pattern.BUNDLES) for root in layout.applications_roots]
        if options.dev and layout.derived_data is not None:
            sources.append(SourceSpec("Xcode DerivedData", layout.derived_data, Pattern.XCODE_PRODUCTS))
    elif layout.os == "windows" and layout.appdata is not None:
        sources.append(SourceSpec("%APPDATA%", layout.appdata / "aai", Pattern.FILES))
    if options.bundled_dir is not None:
        sources.append(SourceSpec("bundled", options.bundled_dir, Pattern.FILES, bundled=True))
    return sources
