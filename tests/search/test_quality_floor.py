"""A quality floor: on the project's three query sets (bench/data/search; bench/data/search-holdout
and bench/data/search-holdout2, each written by someone who had not seen the engine, all three
development sets now), the engine finds a right answer among its first five results for at least
90 % of the queries, overall and in every language. This is the issue's target, measured the way
bench/search_quality.py measures it (no timing). The third set's kept-back half is under it
(docs/performance.md): the floor guards against regressions, not for unseen queries."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "search_quality.py"
DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
SETS = ["search", "search-holdout", "search-holdout2"]
FLOOR = 0.9


def harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("search_quality_harness", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return harness()


@pytest.mark.parametrize("data", SETS)
def test_recall_at_five_reaches_the_floor_overall_and_in_every_language(bench: ModuleType, data: str) -> None:
    folder = DATA / data
    apps = bench.load_apps(folder / "catalog")
    queries = bench.load_queries(folder / "queries.json")
    assert bench.query_problems(apps, queries) == []
    found = bench.run_engine("gateway", bench.gateway_engine, apps, queries).ranks
    below = {}
    for label, members in bench.groups(queries):
        if label == "overall" or label.startswith("lang "):
            recall = bench.recall((found[i] for i in members), 5)
            if recall < FLOOR:
                below[label] = round(recall, 3)
    assert below == {}
