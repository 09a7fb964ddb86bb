"""The descriptors of bench/scale.py: copies of the search catalog that all load, and an echo app
that the gateway lists however many apps there are, so the benchmark measures what it says."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import scale
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.cli.common import host_layout
from aai_gateway.consent import ConsentStore, load_config
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.service import Gateway

COUNT = 45  # more than the default max_apps (20): tools/list is bounded and holds only the pins


def test_generated_descriptors_load_without_a_problem_and_the_called_app_is_listed_when_bounded(
    tmp_path: Path,
) -> None:
    ids = scale.write_descriptors(tmp_path, COUNT, port=9)
    sources = discovery_sources(
        host_layout(os.environ), DiscoveryOptions(paths=[tmp_path], no_default_paths=True)
    )
    catalog = build_catalog(sources, "linux")
    assert [f"{s.path}: {s.reason}" for s in catalog.skipped] == []
    assert [f"{e.path}: {p.message}" for e in catalog.entries for p in e.warnings] == []
    assert sorted(app.id for app in catalog.apps) == sorted([*ids, scale.ECHO_ID])
    assert len(set(ids)) == COUNT
    assert len(scale.descriptor_files(tmp_path)) == COUNT + 1
    assert scale.json_load_all(scale.descriptor_files(tmp_path)) == COUNT + 1

    config = load_config(tmp_path / "config.toml")
    assert config.problems == ()
    # Bounded whatever runs on this machine (a fresh one lacks npx, uvx and the like, and lists
    # fewer apps): what bench/scale.py meets from 100 descriptors on.
    listing = dataclasses.replace(config.listing, max_apps=COUNT // 10)
    gateway = Gateway(
        catalog,
        default_registry(ExecutorSettings(environ=os.environ)),
        consent=ConsentGate(ConsentStore(MemorySecretStore()), config.config),
        listing=listing,
    )
    assert gateway.listing.mode == "bounded"
    assert [entry.app.id for entry in gateway.listing.entries] == [scale.ECHO_ID]
    assert gateway.listing.listable > COUNT // 10  # the catalog's web apps run anywhere


def test_copy_number_n_is_the_same_file_at_every_size(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    small.mkdir()
    large.mkdir()
    ids = scale.write_descriptors(small, 5, port=9)
    assert scale.write_descriptors(large, 12, port=9)[:5] == ids
    for path in scale.descriptor_files(small):
        assert path.read_bytes() == (large / path.relative_to(small)).read_bytes()
