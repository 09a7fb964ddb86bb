"""Search quality: recall@1 and recall@5 of app and operation search over a fixed catalog and query
set, per language, per kind of query and overall, for a plain BM25 baseline and any engine given.

Run: .venv/bin/python bench/search_quality.py [--engine MODULE:FACTORY] [--misses] [--platform linux]
     [--data DIR]

The catalog (bench/data/search/catalog/, ~100 descriptors modelled on real MCP servers and apps) is
loaded as the gateway loads it; the queries (bench/data/search/queries.json) and how they were
built are described in bench/data/search/README.md.

An engine is plugged in with `--engine module:factory` (`module` importable, e.g. from `src/` or
`bench/`): `factory(apps)` gets the loaded `AppDescriptor`s and returns `search(query, limit)`,
which answers a list of `(app_id, tool_name_or_None)`, best first: None for the app itself. A
result counts for an expected `{"app": A, "tool": null}` when its app is A (the app or any of its
operations); for `{"app": A, "tool": T}` only the operation (A, T) itself counts. A query is
recalled at k when one of its first k results counts for one of its expected answers.

The baseline is rank-bm25's BM25Okapi over one document per app (its names in every language,
aliases, description) and one per operation (the app's names and aliases, the operation's name,
description, title and parameter names), lower-cased and split on whitespace, punctuation and `_`:
no stemming, no CJK segmentation, no typo tolerance. It is computed in the same run.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import os
import random
import re
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aai_gateway.cli.common import host_layout
from aai_gateway.descriptor.card import card_of, texts_of
from aai_gateway.descriptor.model import AppDescriptor, Tool
from aai_gateway.descriptor.platforms import Platform
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.search.corpus import IndexedApp

DATA = Path(__file__).resolve().parent / "data" / "search"
CATALOG = DATA / "catalog"
QUERIES = DATA / "queries.json"
LANGUAGES = ("en", "zh", "ja", "de", "fr", "es")
KINDS = ("app", "task", "operation", "typo", "variant", "parameter", "synonym")
CUTOFFS = (1, 5)

Target = tuple[str, str | None]
"""A search result or an expected answer: (app id, operation name), None for the app itself."""
SearchFunction = Callable[[str, int], Sequence[Target]]
EngineFactory = Callable[[Sequence[AppDescriptor]], SearchFunction]


@dataclass(frozen=True)
class Query:
    text: str
    lang: str
    kind: str
    expected: tuple[Target, ...]


@dataclass(frozen=True)
class Document:
    target: Target
    text: str


# --------------------------------------------------------------------------- data


def load_apps(folder: Path = CATALOG, platform: Platform = "linux") -> list[AppDescriptor]:
    """The catalog's apps as the gateway loads them; every file must load."""
    sources = discovery_sources(
        host_layout(os.environ), DiscoveryOptions(paths=[folder], no_default_paths=True)
    )
    catalog = build_catalog(sources, host=platform)
    if catalog.skipped:
        problems = "; ".join(f"{s.path}: {s.reason}" for s in catalog.skipped)
        raise SystemExit(f"the search catalog has files the gateway skips: {problems}")
    return catalog.apps


def load_queries(path: Path = QUERIES) -> list[Query]:
    entries: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [
        Query(
            text=entry["query"],
            lang=entry["lang"],
            kind=entry["kind"],
            expected=tuple((answer["app"], answer["tool"]) for answer in entry["expected"]),
        )
        for entry in entries
    ]


def query_problems(apps: Sequence[AppDescriptor], queries: Sequence[Query]) -> list[str]:
    """What is wrong with the query set against the catalog: unknown apps or operations, unknown
    languages or kinds, queries without answers or given twice."""
    tools = {app.id: {tool.name for tool in app.tools} for app in apps}
    problems: list[str] = []
    seen: set[str] = set()
    for query in queries:
        where = f"query {query.text!r}"
        if query.text in seen:
            problems.append(f"{where}: given twice")
        seen.add(query.text)
        if query.lang not in LANGUAGES:
            problems.append(f"{where}: language {query.lang!r} is not one of {', '.join(LANGUAGES)}")
        if query.kind not in KINDS:
            problems.append(f"{where}: kind {query.kind!r} is not one of {', '.join(KINDS)}")
        if not query.expected:
            problems.append(f"{where}: no expected answer")
        for app_id, tool in query.expected:
            if app_id not in tools:
                problems.append(f"{where}: expects app {app_id!r}, which the catalog does not have")
            elif tool is not None and tool not in tools[app_id]:
                problems.append(f"{where}: expects {app_id}/{tool}, which the app does not have")
    return problems


# --------------------------------------------------------------------------- documents and baseline


def app_words(app: AppDescriptor) -> list[str]:
    return [*app.names.names.values(), *app.aliases]


def tool_words(tool: Tool) -> list[str]:
    title = tool.annotations.title if tool.annotations and tool.annotations.title else ""
    parameters = tool.parameters.get("properties", {})
    return [tool.name, title, tool.description, *(parameters if isinstance(parameters, dict) else ())]


def documents(apps: Iterable[AppDescriptor]) -> list[Document]:
    """One document per app and one per operation, over the fields the search covers."""
    out: list[Document] = []
    for app in apps:
        out.append(Document((app.id, None), "\n".join([*app_words(app), app.description])))
        out += [
            Document((app.id, tool.name), "\n".join([*app_words(app), *tool_words(tool)]))
            for tool in app.tools
        ]
    return out


_SEPARATORS = re.compile(r"[\W_]+")


def plain_tokens(text: str) -> list[str]:
    """Lower-cased, split on whitespace, punctuation and underscores; nothing else."""
    return [token for token in _SEPARATORS.split(text.lower()) if token]


def bm25_baseline(apps: Sequence[AppDescriptor]) -> SearchFunction:
    """Plain BM25Okapi over `documents(apps)`; results with a positive score, best first."""
    try:
        from rank_bm25 import BM25Okapi  # noqa: PLC0415 (the `bench` extra)
    except ImportError as exc:
        raise SystemExit("the BM25 baseline needs rank-bm25: pip install -e '.[bench]'") from exc
    docs = documents(apps)
    index = BM25Okapi([plain_tokens(doc.text) for doc in docs])

    def search(query: str, limit: int) -> list[Target]:
        tokens = plain_tokens(query)
        if not tokens:
            return []
        scores = index.get_scores(tokens)
        ranked = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
        return [docs[i].target for i in ranked[:limit] if scores[i] > 0]

    return search


def indexed(apps: Sequence[AppDescriptor]) -> list[IndexedApp]:
    """The apps as the gateway's index holds them: cards and operations' texts."""
    return [IndexedApp(card_of(app), texts_of(app)) for app in apps]


def gateway_engine(apps: Sequence[AppDescriptor], *, concepts: bool = True) -> SearchFunction:
    """The gateway's own engine (`aai_gateway.search.SearchIndex`)."""
    from aai_gateway.search import SearchIndex  # noqa: PLC0415

    index = SearchIndex(indexed(apps), concepts=concepts)

    def search(query: str, limit: int) -> list[Target]:
        return [(hit.app.id, hit.tool) for hit in index.search(query, limit)]

    return search


def gateway_without_lexicon(apps: Sequence[AppDescriptor]) -> SearchFunction:
    """The gateway's engine with its concept lexicon switched off."""
    return gateway_engine(apps, concepts=False)


# --------------------------------------------------------------------------- measuring


def counts_for(result: Target, expected: Target) -> bool:
    app_id, tool = expected
    return result[0] == app_id and (tool is None or result[1] == tool)


def first_hit(results: Sequence[Target], expected: Sequence[Target]) -> int | None:
    """The 1-based rank of the first result that counts for an expected answer, None if none."""
    for rank, result in enumerate(results, start=1):
        if any(counts_for(result, answer) for answer in expected):
            return rank
    return None


@dataclass(frozen=True)
class Run:
    name: str
    ranks: tuple[int | None, ...]
    results: tuple[tuple[Target, ...], ...]
    seconds: tuple[float, ...]
    build_seconds: float


def run_engine(
    name: str, factory: EngineFactory, apps: Sequence[AppDescriptor], queries: Sequence[Query]
) -> Run:
    started = time.perf_counter()
    search = factory(apps)
    build_seconds = time.perf_counter() - started
    ranks: list[int | None] = []
    results: list[tuple[Target, ...]] = []
    seconds: list[float] = []
    limit = max(CUTOFFS)
    for query in queries:
        started = time.perf_counter()
        answer = tuple(search(query.text, limit))[:limit]
        seconds.append(time.perf_counter() - started)
        results.append(answer)
        ranks.append(first_hit(answer, query.expected))
    return Run(name, tuple(ranks), tuple(results), tuple(seconds), build_seconds)


def recall(ranks: Iterable[int | None], cutoff: int) -> float:
    taken = list(ranks)
    return sum(1 for rank in taken if rank is not None and rank <= cutoff) / len(taken) if taken else 0.0


DEV_APPS: frozenset[str] | None = None
"""The apps of the development half when the data folder names them (`halves.json`): a query is
`dev` when every app it expects is one of them, else `check`."""


def load_halves(folder: Path) -> frozenset[str] | None:
    """The development half's apps of a data folder's `halves.json` (`{"dev_apps": [...]}`), if any."""
    path = folder / "halves.json"
    if not path.is_file():
        return None
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["dev_apps"])


def half_of(query: Query) -> str:
    """`dev` or `check`: by app when the data folder splits its apps (DEV_APPS), else by a hash of
    the query's text. The engine is tuned on the dev half; the check half is looked at only for
    the figures it reaches."""
    if DEV_APPS is not None:
        return "dev" if all(app in DEV_APPS for app, _tool in query.expected) else "check"
    return "dev" if hashlib.sha256(query.text.encode("utf-8")).digest()[0] % 2 == 0 else "check"


def groups(queries: Sequence[Query]) -> list[tuple[str, list[int]]]:
    """(label, indexes of its queries): overall, each half, each language, each kind; empty groups
    left out."""
    out = [("overall", list(range(len(queries))))]
    for half in ("dev", "check"):
        members = [i for i, q in enumerate(queries) if half_of(q) == half]
        if members and len(members) < len(queries):
            out.append((f"half {half}", members))
    for field, values in (("lang", LANGUAGES), ("kind", KINDS)):
        for value in values:
            members = [i for i, q in enumerate(queries) if getattr(q, field) == value]
            if members:
                out.append((f"{field} {value}", members))
    return out


def table(queries: Sequence[Query], runs: Sequence[Run]) -> str:
    header = f"{'':<16}{'queries':>8}" + "".join(
        f"{run.name + f' R@{k}':>{max(14, len(run.name) + 6)}}" for run in runs for k in CUTOFFS
    )
    lines = [header, "-" * len(header)]
    for label, members in groups(queries):
        cells = "".join(
            f"{recall((run.ranks[i] for i in members), k):>{max(14, len(run.name) + 6)}.3f}"
            for run in runs
            for k in CUTOFFS
        )
        lines.append(f"{label:<16}{len(members):>8}{cells}")
    return "\n".join(lines)


def timing_line(run: Run) -> str:
    per_query = [s * 1e3 for s in run.seconds]
    return (
        f"{run.name}: index built in {run.build_seconds * 1e3:,.1f} ms; per query median "
        f"{statistics.median(per_query):.3f} ms ({min(per_query):.3f}–{max(per_query):.3f})"
    )


def misses(queries: Sequence[Query], run: Run, cutoff: int) -> list[str]:
    lines = [f"{run.name}: queries not recalled at {cutoff}"]
    for query, rank, answer in zip(queries, run.ranks, run.results, strict=True):
        if rank is None or rank > cutoff:
            expected = ", ".join(f"{a}/{t}" if t else a for a, t in query.expected)
            got = ", ".join(f"{a}/{t}" if t else a for a, t in answer[:cutoff]) or "nothing"
            lines.append(f"  [{query.lang} {query.kind}] {query.text!r}: want {expected}; got {got}")
    return lines


def engine_from(spec: str) -> tuple[str, EngineFactory]:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--engine {spec!r}: write it as module:factory")
    factory = getattr(importlib.import_module(module_name), attribute)
    if not callable(factory):
        raise SystemExit(f"--engine {spec!r}: {attribute} is not callable")
    return attribute, factory


# --------------------------------------------------------------------------- at scale


def synthetic_apps(apps: Sequence[AppDescriptor], count: int, seed: int = 20261125) -> list[AppDescriptor]:
    """`count` apps made from the catalog's: app i is catalog app i mod N under a new id, with a
    made-up word in its name, its description and each operation's description, so that texts
    and the vocabulary grow with the catalog as they would with real apps."""
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))

    out: list[AppDescriptor] = []
    for number in range(count):
        app = apps[number % len(apps)]
        label = word()
        names = app.names.model_copy(
            update={"names": {tag: f"{name} {label.title()}" for tag, name in app.names.names.items()}}
        )
        tools = tuple(
            tool.model_copy(update={"description": f"{tool.description} {word()}"}) for tool in app.tools
        )
        out.append(
            app.model_copy(
                update={
                    "id": f"{app.id}-{number}",
                    "names": names,
                    "description": f"{app.description} {word()} {word()}",
                    "tools": tools,
                }
            )
        )
    return out


def scale_report(apps: Sequence[AppDescriptor], queries: Sequence[Query], count: int, repeats: int) -> str:
    """Build time, memory held by the index and query latency of the gateway's engine over
    `count` synthetic apps."""
    from aai_gateway.search import SearchIndex  # noqa: PLC0415

    many = synthetic_apps(apps, count)
    operations = sum(len(app.tools) for app in many)
    SearchIndex(indexed(apps[:2]))  # libraries loaded and warmed: what is measured is the build itself
    builds: list[float] = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        index = SearchIndex(indexed(many))
        builds.append(time.perf_counter() - started)
        del index
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = SearchIndex(indexed(many))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    seconds: list[float] = []
    for query in queries:
        started = time.perf_counter()
        index.search(query.text, max(CUTOFFS))
        seconds.append(time.perf_counter() - started)
    per_query = [s * 1e3 for s in seconds]
    return (
        f"{count:,} apps, {operations:,} operations: build median {statistics.median(builds):.2f} s "
        f"({min(builds):.2f}–{max(builds):.2f}, {repeats} runs); index holds {held / 1e6:.1f} MB "
        f"({held / 1e6 / (count / 1000):.2f} MB per 1,000 apps); per query median "
        f"{statistics.median(per_query):.2f} ms ({min(per_query):.2f}–{max(per_query):.2f}, "
        f"{len(queries)} queries)"
    )


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="another engine to measure next to the gateway's and the baseline (repeatable)",
    )
    parser.add_argument(
        "--platform",
        default="linux",
        choices=["linux", "macos", "windows"],
        help="the host the catalog is loaded for (default linux)",
    )
    parser.add_argument("--misses", action="store_true", help="list the queries each engine misses at 5")
    parser.add_argument(
        "--half",
        choices=["all", "dev", "check"],
        default="all",
        help="only the queries of one half (dev: tuned on; check: looked at for the final figures)",
    )
    parser.add_argument(
        "--scale",
        type=int,
        nargs="*",
        metavar="APPS",
        help="also measure build time, memory and latency over this many synthetic apps (default 10000)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="index builds per --scale size (default 3)")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        metavar="DIR",
        help="a data folder with catalog/ and queries.json (default bench/data/search; "
        "bench/data/search-holdout is the held-out set)",
    )
    args = parser.parse_args(argv)
    global DEV_APPS  # noqa: PLW0603 (the data folder's halves, for half_of)
    DEV_APPS = load_halves(args.data)
    apps = load_apps(args.data / "catalog", args.platform)
    queries = load_queries(args.data / "queries.json")
    problems = query_problems(apps, queries)
    if problems:
        raise SystemExit("the query set does not fit the catalog:\n" + "\n".join(problems))
    if args.half != "all":
        queries = [query for query in queries if half_of(query) == args.half]
    engines: list[tuple[str, EngineFactory]] = [
        ("bm25", bm25_baseline),
        ("gateway", gateway_engine),
        ("no-lexicon", gateway_without_lexicon),
        *map(engine_from, args.engine),
    ]
    runs = [run_engine(name, factory, apps, queries) for name, factory in engines]
    operations = sum(len(app.tools) for app in apps)
    print(f"{len(apps)} apps, {operations} operations, {len(queries)} queries ({args.half})")
    print(table(queries, runs))
    for run in runs:
        print(timing_line(run))
    if args.misses:
        for run in runs:
            print("\n".join(misses(queries, run, max(CUTOFFS))))
    for count in [10_000] if args.scale == [] else (args.scale or []):
        print(scale_report(apps, queries, count, max(1, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
