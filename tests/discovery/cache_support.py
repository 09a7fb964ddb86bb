"""Starts of the gateway over a folder of descriptors with a card cache, for the cache's tests."""

from __future__ import annotations

import os
import time
from pathlib import Path

from aai_gateway.discovery import DiscoveryOptions, Layout, build_catalog, discovery_sources
from aai_gateway.discovery.card_cache import CardCache
from aai_gateway.discovery.catalog import Catalog
from aai_gateway.discovery.loading import FileLoads
from tests.builders import c_descriptor, write_json

LINUX = Layout(os="linux", home=Path("/nonexistent"), xdg_data_home=Path("/nonexistent"), xdg_data_dirs=())
HOUR_AGO = time.time() - 3600


def sources(folder: Path) -> list:  # type: ignore[type-arg]
    return discovery_sources(LINUX, DiscoveryOptions(paths=[folder], no_default_paths=True))


def write_app(folder: Path, app_id: str, *, name: str = "Notes", aged: bool = True) -> Path:
    path = write_json(folder / app_id / "aai.json", c_descriptor(app_id, name=name))
    if aged:  # older than the cache's two seconds of doubt
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    return path


def start(folder: Path, cache_dir: Path, build: str = "build-1") -> tuple[Catalog, FileLoads]:
    """What one start of the gateway does: a new process, the cache of `cache_dir`."""
    loads = FileLoads("linux", CardCache(cache_dir, "linux", build))
    return build_catalog(sources(folder), "linux", loads), loads


def five_apps(folder: Path) -> Path:
    for number in range(5):
        write_app(folder, f"dev.test.app{number}")
    return folder
