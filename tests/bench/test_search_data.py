"""The data of bench/search_quality.py: the catalog loads as the gateway loads it, and every query
names only apps and operations that catalog has, so the measurement cannot quietly rot."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor.model import AppDescriptor
from aai_gateway.descriptor.platforms import Platform
from aai_gateway.discovery import build_catalog
from aai_gateway.discovery.sources import Pattern, SourceSpec

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "search"
# The folders held to these checks: the development set and the eighth to sixteenth held-out sets. For
# these the checks are only about loading, answers and counts; no test here measures a search on it.
FOLDERS = [
    DATA,
    DATA.parent / "search-holdout7",
    DATA.parent / "search-holdout8",
    DATA.parent / "search-holdout9",
    DATA.parent / "search-holdout10",
    DATA.parent / "search-holdout11",
    DATA.parent / "search-holdout12",
    DATA.parent / "search-holdout13",
    DATA.parent / "search-holdout14",
    DATA.parent / "search-holdout15",
]
LANGUAGES = {"en", "zh", "ja", "de", "fr", "es"}
KINDS = {"app", "task", "operation", "typo", "variant", "parameter", "synonym"}
DESKTOPS: list[Platform] = ["linux", "macos", "windows"]


def catalog_apps(host: Platform, data: Path = DATA) -> tuple[list[AppDescriptor], list[str]]:
    source = SourceSpec("--path", data / "catalog", Pattern.FILES_AND_APP_DIRS, explicit=True)
    catalog = build_catalog([source], host=host)
    warnings = [f"{e.path}: {p.pointer}: {p.message}" for e in catalog.entries for p in e.warnings]
    return catalog.apps, [f"{s.path}: {s.reason}" for s in catalog.skipped] + warnings


def queries(data: Path = DATA) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((data / "queries.json").read_text(encoding="utf-8"))
    return entries


@pytest.mark.parametrize("data", FOLDERS, ids=lambda d: d.name)
@pytest.mark.parametrize("host", DESKTOPS)
def test_every_catalog_file_loads_without_a_problem_and_every_app_has_operations(
    host: Platform, data: Path
) -> None:
    apps, problems = catalog_apps(host, data)
    assert problems == []
    assert len(apps) == len(list((data / "catalog").glob("*.json")))
    assert 60 <= len(apps) <= 150
    assert [app.id for app in apps if not app.tools] == []
    # An operation is found by what it says: a one-letter placeholder (a generator's "R" or "W"
    # written where the description belongs) made 18 apps of one set unfindable but by name.
    assert [
        (app.id, tool.name) for app in apps for tool in app.tools if len(tool.description.strip()) < 2
    ] == []


@pytest.mark.parametrize("data", FOLDERS, ids=lambda d: d.name)
@pytest.mark.parametrize("host", DESKTOPS)
def test_every_expected_answer_is_an_app_or_operation_of_the_catalog(host: Platform, data: Path) -> None:
    apps, _ = catalog_apps(host, data)
    tools = {app.id: {tool.name for tool in app.tools} for app in apps}
    unknown = [
        (entry["query"], answer)
        for entry in queries(data)
        for answer in entry["expected"]
        if answer["tool"] not in tools.get(answer["app"], set()) | {None} or answer["app"] not in tools
    ]
    assert unknown == []


@pytest.mark.parametrize("data", FOLDERS, ids=lambda d: d.name)
def test_the_query_set_has_the_size_languages_and_kinds_it_is_reported_by(data: Path) -> None:
    entries = queries(data)
    assert len(entries) >= 240
    assert {e["lang"] for e in entries} <= LANGUAGES
    assert {e["kind"] for e in entries} == KINDS
    per_language = Counter(e["lang"] for e in entries)
    assert min(per_language[lang] for lang in ("en", "zh", "ja", "de")) >= 50
    assert per_language["fr"] + per_language["es"] > 0
    assert all(e["expected"] and set(e) == {"query", "lang", "kind", "expected"} for e in entries)
    assert [text for text, n in Counter(e["query"] for e in entries).items() if n > 1] == []
