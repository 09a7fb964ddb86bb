"""Scale: the gateway with 0 to 10,000 descriptors — start, tools/list, memory, calls, idle CPU.

Run: .venv/bin/python bench/scale.py [--sizes 0 100 1000 10000] [--repeat 5] [--calls 100]
         [--idle-seconds 10] [--serve-args '--poll-interval 0'] [--markdown]
(from another checkout's venv: PYTHONPATH=src:bench python bench/scale.py ...)

For each size N it writes N descriptors once, reused by every run: the 99 real-world
descriptors of bench/data/search/catalog (three dialects) repeated under new ids
(`<id>.copy<n>`), with a made-up word after each name, in the description and in each
operation's description, half as DIR/<id>/aai.json and half as DIR/<id>.json; plus one HTTP app
whose base URL is a local echo endpoint (bench/echo_asgi.py under uvicorn, in its own process),
which a config.toml (AAI_GATEWAY_CONFIG) trusts (`[consent.auto_allow]`) and pins
(`[listing] pinned`), so tools/list holds it however many apps there are. Before measuring,
`aai-gateway scan --json` must show every file loaded and the echo app listed; it counts how many
of the N apps are listable here (other systems' apps and missing programs are not). Then, round
by round (bench/harness.py: every measurement once per round), it measures:

  start, cold    spawn `python -m aai_gateway serve --no-default-paths --path DIR` with a new,
                 empty cache directory (AAI_GATEWAY_CACHE_DIR; the files themselves are in the
                 OS's page cache: every measurement reads them just before, untimed) → MCP SDK
                 client (2025-11-25 handshake) → the first tools/list answer; then the RSS of
                 the gateway process (VmRSS in /proc/PID/status)
  start, warm    the same with this size's cache directory, which an untimed start before the
                 first round filled (and every warm start since); then, in that session: the RSS,
                 the time of the first `aai_search` sent after a --settle-seconds pause (an
                 agent that searches a few seconds after its start: a bounded gateway builds
                 its index meanwhile, and the search waits for what is left of the build), the
                 CPU time (utime + stime, /proc/PID/stat) the gateway uses over --idle-seconds
                 of nothing once it is quiet after that search (a second with at most one clock
                 tick), as a share of one core (and, apart, the CPU time it uses from its first
                 answer until then: start-up work left for after the answer and the search's,
                 the index build included, not idle)
  calls          side by side: a warm gateway of every size started and kept open at once, each
                 sent one aai_search (its index built), then --calls rounds in which every
                 gateway, in an order that turns each round, gets one `aai_exec` call of the echo
                 app; the same for reads of the echo app's guide (its `app_<id>` entry) and of
                 one catalog app's guide (per run and size: the median call); then each one's RSS.
                 Calls of every size so share the same seconds of the machine: what disturbs
                 one disturbs all, and the ratios to 10 apps hold on a busy machine
  baseline       the minimal SDK server (bench/plain_mcp_server.py) spawned the same way, to its
                 first tools/list answer
  scan+validate  in this process, the gateway's catalog build over DIR (discovery.build_catalog,
                 as bench/scan_validate.py), and reading + json.load of the same files

The gateway runs as a user runs it, with default options (its change polling on, counted in the
idle CPU) unless --serve-args says otherwise. Calls go through the SDK session's send_request:
`Client.call_tool` lists the tools again before each call of a tool it has not seen listed (an
app's entry once tools/list is bounded), and that client-side extra would be counted against the
gateway. Sizes 0 and 10 are always measured: memory growth is counted from 0, and per-call and
guide-read latencies are compared with 10 apps. Prints one table (sizes as columns; the median
and range of the runs; ratios of the medians with the range of the ratios within one round) and
the issue 15 targets at the largest size; --markdown prints the table in markdown too. Progress
goes to stderr. Linux only (it reads /proc). Ctrl-C stops every process it started and removes
its temporary folders.
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import json
import os
import random
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from aai_gateway.bulk import without_cyclic_gc
from aai_gateway.service.naming import app_tool_names
from call_overhead import APP_ID, PAYLOAD, free_port, start_endpoint, write_descriptor
from harness import Measurement, Timing, add_repeat_option, gateway_server, interleaved, private_folders
from process_cpu import TICKS_PER_SECOND, child_pids, tree_cpu
from scan_validate import gateway_scan

BENCH = Path(__file__).resolve().parent
CATALOG = BENCH / "data" / "search" / "catalog"
SIZES = (0, 100, 1000, 10_000)
ECHO_ID = APP_ID
"""The HTTP app that is called, whose base URL is the local echo endpoint."""
REFERENCE = 10
"""Apps the per-call and guide-read latencies are compared with."""
FIRST_QUERY = "send a message to a colleague"
"""The first aai_search of a session (any query: the first waits for the index, not the words)."""
SEED = 20261126
PROC = Path("/proc")


# --------------------------------------------------------------------------- descriptors


def catalog_documents() -> list[dict[str, Any]]:
    """The catalog's descriptors as JSON documents, in file-name order."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(CATALOG.glob("*.json"))]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))


def _with_label(names: str, label: str) -> str:
    """A `|`-separated name (dialects A and B) with `label` after each name."""
    return "|".join(f"{name} {label}" for name in names.split("|"))


def copy_of(document: Mapping[str, Any], number: int) -> tuple[str, dict[str, Any]]:
    """Descriptor number `number`: `document` (a catalog descriptor) under the id `<id>.copy<number>`,
    with a made-up word after each name, two in the description and one in each operation's
    description, so that texts grow with the count as they would with real apps. Copy `number` is
    the same whatever the size it is written for."""
    rng = random.Random(f"{SEED}:{number}")
    doc = copy.deepcopy(dict(document))
    label = _word(rng).title()
    if "schemaVersion" in doc:  # dialect C
        app = doc["app"]
        app_id = app["id"] = f"{app['id']}.copy{number}"
        app["name"] = {tag: f"{name} {label}" for tag, name in app["name"].items()}
        holder: dict[str, Any] = app
        tools = list(doc.get("tools", []))
    elif "appId" in doc or "platforms" in doc:  # dialect B, multi-platform
        app_id = doc["appId"] = f"{doc['appId']}.copy{number}"
        doc["name"] = _with_label(doc["name"], label)
        holder = doc
        tools = [tool for section in doc["platforms"].values() for tool in section.get("tools", [])]
    else:  # dialect A
        app = doc["app"]
        app_id = app["id"] = f"{app['id']}.copy{number}"
        app["name"] = _with_label(app["name"], label)
        holder = app
        tools = list(doc.get("tools", []))
    holder["description"] = f"{holder.get('description', '')} {_word(rng)} {_word(rng)}".strip()
    for tool in tools:
        tool["description"] = f"{tool.get('description', '')} {_word(rng)}".strip()
    return app_id, doc


def write_config(folder: Path) -> Path:
    """config.toml: the echo app trusted (no consent question) and pinned (listed whatever the
    number of apps)."""
    config = folder / "config.toml"
    config.write_text(
        f'[consent.auto_allow]\napps = ["{ECHO_ID}"]\n\n[listing]\npinned = ["{ECHO_ID}"]\n', encoding="utf-8"
    )
    return config


def write_descriptors(folder: Path, count: int, port: int) -> list[str]:
    """`count` catalog copies in `folder`, the echo app (base URL http://127.0.0.1:`port`) and
    config.toml; returns the copies' ids in order."""
    documents = catalog_documents()
    ids: list[str] = []
    for number in range(count):
        app_id, document = copy_of(documents[number % len(documents)], number)
        if number % 2 == 0:
            (folder / app_id).mkdir()
            path = folder / app_id / "aai.json"
        else:
            path = folder / f"{app_id}.json"
        path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")
        ids.append(app_id)
    write_descriptor(folder, port)  # echo.json (and a config.toml, replaced next)
    write_config(folder)
    return ids


def descriptor_files(folder: Path) -> list[Path]:
    """What the gateway reads in `folder`: DIR/*.json and DIR/*/aai.json."""
    return sorted([*folder.glob("*.json"), *folder.glob("*/aai.json")])


def read_into_page_cache(files: Sequence[Path]) -> None:
    """Every file read once, untimed, before each start and each in-process measurement: the
    kernel may reclaim the page cache of files left alone for a while (DAMON-based reclaim on
    this kind of VM), and whichever measurement came first in a round then read the disk (the
    json.load baseline measured 0.9-1.2 s in one run, 0.45-0.6 s with the files in memory)."""
    for path in files:
        path.read_bytes()


def json_load_all(files: Sequence[Path]) -> int:
    """The scan's baseline, with the cyclic GC off as the scan has it (scan_validate.py)."""
    with without_cyclic_gc():
        for path in files:
            with path.open("rb") as handle:
                json.load(handle)
    return len(files)


# --------------------------------------------------------------------------- processes


def gateway_environment(folder: Path, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        **private_folders(),
        "AAI_GATEWAY_CONFIG": str(folder / "config.toml"),
        "AAI_GATEWAY_CACHE_DIR": str(cache),
    }


def rss_bytes(pid: int) -> int:
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"no VmRSS for process {pid}")


def spawned_process(before: set[int], marker: str) -> int:
    """The one process this process started since `before` whose command line holds `marker`."""
    found = []
    for pid in child_pids() - before:
        try:
            command = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command:
            found.append(pid)
    if len(found) != 1:
        raise SystemExit(f"expected one new process running {marker}, found {found}")
    return found[0]


def stop_if_alive(pid: int) -> None:
    """Kills `pid` if it is still a child of this process (the SDK client normally stopped it)."""
    try:
        parent = int((PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return
    if parent == os.getpid():
        os.kill(pid, signal.SIGKILL)


@contextmanager
def temporary_folder(prefix: str) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------- measurements


@dataclass
class Workspace:
    """The descriptors of one size, written once and used by every run."""

    size: int
    folder: Path
    files: list[Path]
    ids: list[str]
    warm_cache: Path
    listable: int = 0
    guide_app: str | None = None
    """A catalog app that runs here and exists from the reference size on: its guide is read."""


@dataclass
class Session:
    """What one gateway run measured, besides its start time."""

    rss_start: int
    tools_bytes: int
    tools_chars: int
    entries: int
    cpu_at_answer: float
    """CPU seconds the gateway had used when its first tools/list answer arrived."""
    settle_cpu: float | None = None
    """CPU seconds from the first answer to the end of the first search: work left for after it."""
    first_search: float | None = None
    """Seconds the first aai_search took, sent after the settle pause."""
    idle_cpu: float | None = None


@dataclass
class CallsRun:
    """What one gateway of the side-by-side call phase measured: median seconds per call."""

    exec_call: float
    guide_echo: float
    guide_app: float | None
    rss_after: int
    """RSS after a search and the calls."""


@dataclass
class Options:
    repeat: int
    calls: int
    idle_seconds: float
    settle_seconds: float
    timeout: float
    serve_args: list[str]


@dataclass
class Results:
    timings: dict[tuple[str, int], Timing] = field(default_factory=dict)
    sessions: dict[tuple[str, int], list[Session]] = field(default_factory=dict)
    calls: dict[int, list[CallsRun]] = field(default_factory=dict)
    baseline_rss: list[int] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    """The 1-minute load average, every 5 s of the measurement (this benchmark adds about 1)."""


async def check_workspace(space: Workspace) -> None:
    """`aai-gateway scan --json` over the folder: every file loads, the echo app is listed; how
    many of the generated apps are listable here, and the catalog app whose guide is read."""
    with temporary_folder("aai-bench-scan-") as cache:
        done = await anyio.run_process(
            [
                sys.executable,
                "-m",
                "aai_gateway",
                "scan",
                "--json",
                "--no-default-paths",
                "--path",
                str(space.folder),
            ],
            env=gateway_environment(space.folder, cache),
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"aai-gateway scan failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    report = json.loads(done.stdout)
    if report["skipped"]:
        shown = "; ".join(f"{s['path']}: {s['reason']}" for s in report["skipped"][:3])
        raise SystemExit(f"{len(report['skipped'])} generated descriptors do not load: {shown}")
    if len(report["apps"]) != space.size + 1:
        raise SystemExit(f"scan found {len(report['apps'])} apps, expected {space.size + 1}")
    listing = report["listing"]
    if ECHO_ID not in listing["listed"]:
        raise SystemExit(f"tools/list would not list the echo app {ECHO_ID}: {listing}")
    space.listable = listing["listable"] - 1
    if space.listable * 10 < space.size:  # the catalog's web apps alone are 14 %
        raise SystemExit(
            f"only {space.listable} of the {space.size} generated apps are listable here: "
            "see `aai-gateway scan` over the catalog (bench/data/search/catalog) for why"
        )
    runs_here = {app["id"] for app in report["apps"] if app["runs_here"] == "yes"}
    space.guide_app = next((i for i in space.ids[:REFERENCE] if i in runs_here), None)
    if space.size >= REFERENCE and space.guide_app is None:
        raise SystemExit(f"none of the first {REFERENCE} generated apps runs here: no guide to read")


async def all_tools(client: Client, first: Any) -> list[Any]:
    tools = list(first.tools)
    cursor = first.next_cursor
    while cursor:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
    return tools


def successful(what: str, result: types.CallToolResult) -> None:
    if result.is_error:
        text = [block.text for block in result.content if isinstance(block, types.TextContent)]
        raise SystemExit(f"{what} failed: {' '.join(text) or result}")


async def gateway_run(
    space: Workspace, cache: Path, options: Options, *, full: bool
) -> tuple[float, Session]:
    """One gateway process: seconds from spawn to the first tools/list answer, then the figures
    of the session (with `full`: the first search and idle CPU)."""
    names = app_tool_names([ECHO_ID])
    server = gateway_server(space.folder, gateway_environment(space.folder, cache), options.serve_args)
    before = child_pids()
    pid = None
    try:
        with anyio.fail_after(options.timeout):
            started = time.perf_counter()
            async with Client(server, mode="legacy") as client:
                first = await client.list_tools()
                seconds = time.perf_counter() - started
                pid = spawned_process(before, "aai_gateway")
                cpu_at_answer = sum(tree_cpu(pid))
                session_rss = rss_bytes(pid)
                tools = await all_tools(client, first)
                if names[ECHO_ID] not in {tool.name for tool in tools}:
                    raise SystemExit(f"the gateway with {space.size} descriptors does not list {ECHO_ID}")
                wire = json.dumps(
                    {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]},
                    ensure_ascii=False,
                )
                session = Session(session_rss, len(wire.encode()), len(wire), len(tools), cpu_at_answer)
                if full:
                    await measure_session(client, pid, session, options)
        return seconds, session
    except TimeoutError:
        raise SystemExit(
            f"the gateway with {space.size} descriptors did not finish its run within "
            f"{options.timeout:.0f} s (--timeout)"
        ) from None
    finally:
        if pid is not None:
            stop_if_alive(pid)


async def measure_session(client: Client, pid: int, session: Session, options: Options) -> None:
    """The first search, the CPU after the first answer and when idle, into `session`."""
    await anyio.sleep(options.settle_seconds)
    searched = time.perf_counter()
    successful("aai_search", await client.call_tool("aai_search", {"query": FIRST_QUERY}))
    session.first_search = time.perf_counter() - searched
    await until_quiet(pid)
    cpu_before, wall_before = sum(tree_cpu(pid)), time.perf_counter()
    session.settle_cpu = cpu_before - session.cpu_at_answer
    await anyio.sleep(options.idle_seconds)
    session.idle_cpu = (sum(tree_cpu(pid)) - cpu_before) / (time.perf_counter() - wall_before)


QUIET_WITHIN_SECONDS = 30.0


async def until_quiet(pid: int) -> None:
    """Until a second passes in which the gateway and what it started use at most one clock
    tick: the search's own work may go on after its answer (a small catalog's first search
    builds the index, and the rest of it after answering), and is not idle time. Gives up after
    QUIET_WITHIN_SECONDS: the idle interval then measures whatever it is still doing."""
    deadline = time.perf_counter() + QUIET_WITHIN_SECONDS
    before = sum(tree_cpu(pid))
    while time.perf_counter() < deadline:
        await anyio.sleep(1.0)
        now = sum(tree_cpu(pid))
        if now - before <= 1.01 / TICKS_PER_SECOND:
            return
        before = now


def tool_call(client: Client, name: str, arguments: dict[str, Any]) -> Callable[[], Awaitable[None]]:
    """tools/call through the SDK session, not `Client.call_tool`: that one lists the tools again
    before every call of a tool it has not seen listed (an app's entry once tools/list is
    bounded), which would count the client's extra tools/list against the gateway."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))

    async def one_call() -> None:
        successful(name, await client.session.send_request(request, types.CallToolResult))

    return one_call


async def side_by_side_calls(spaces: Sequence[Workspace], options: Options) -> dict[int, CallsRun]:
    """A warm gateway of every size, all open at once; each searched once, then called in turns
    (`calls` in the module's docstring). The median call of each kind, and the RSS, by size."""
    guide_app = next((s.guide_app for s in spaces if s.guide_app), None)
    opened: list[tuple[Workspace, Client, int]] = []
    try:
        with anyio.fail_after(options.timeout):
            async with AsyncExitStack() as stack:
                return await _calls_in_turns(stack, opened, spaces, guide_app, options)
    except TimeoutError:
        raise SystemExit(
            f"the side-by-side calls did not finish within {options.timeout:.0f} s (--timeout)"
        ) from None
    finally:  # after every client has closed its session: whatever did not end with it
        for _space, _client, pid in opened:
            stop_if_alive(pid)


async def _calls_in_turns(
    stack: AsyncExitStack,
    opened: list[tuple[Workspace, Client, int]],
    spaces: Sequence[Workspace],
    guide_app: str | None,
    options: Options,
) -> dict[int, CallsRun]:
    """`side_by_side_calls` with its sessions opened on `stack` (and into `opened`)."""
    for space in spaces:
        server = gateway_server(
            space.folder, gateway_environment(space.folder, space.warm_cache), options.serve_args
        )
        before = child_pids()
        client = await stack.enter_async_context(Client(server, mode="legacy"))
        opened.append((space, client, spawned_process(before, "aai_gateway")))
    for _space, client, _pid in opened:  # every index built before the first timed call
        successful("aai_search", await client.call_tool("aai_search", {"query": FIRST_QUERY}))
    medians: dict[int, dict[str, float]] = {space.size: {} for space, _client, _pid in opened}
    kinds: list[tuple[str, str | None, dict[str, Any]]] = [
        ("exec_call", "aai_exec", {"app": ECHO_ID, "tool": "echo", "args": PAYLOAD}),
        ("guide_echo", ECHO_ID, {}),
        ("guide_app", guide_app, {}),
    ]
    for kind, name, arguments in kinds:
        entries = [
            (space, name if kind == "exec_call" else app_entry_name(space, name))
            for space, _client, _pid in opened
        ]
        sent = [
            (space.size, tool_call(client, entry, arguments))
            for (space, entry), (_space, client, _pid) in zip(entries, opened, strict=True)
            if entry is not None
        ]
        seconds: dict[int, list[float]] = {size: [] for size, _call in sent}
        for turn in range(options.calls if sent else 0):
            shift = turn % len(sent)
            for size, one_call in sent[shift:] + sent[:shift]:
                started = time.perf_counter()
                await one_call()
                seconds[size].append(time.perf_counter() - started)
        for size, taken in seconds.items():
            medians[size][kind] = statistics.median(taken)
    return {
        space.size: CallsRun(
            medians[space.size]["exec_call"],
            medians[space.size]["guide_echo"],
            medians[space.size].get("guide_app"),
            rss_bytes(pid),
        )
        for space, _client, pid in opened
    }


def app_entry_name(space: Workspace, app_id: str | None) -> str | None:
    """The tool name of `app_id`'s entry in `space`'s gateway, or None when it has no such app
    (the catalog app whose guide is read exists from the reference size on)."""
    if app_id is None or (app_id != ECHO_ID and app_id not in space.ids):
        return None
    return app_tool_names([app_id])[app_id]


async def baseline_run(options: Options) -> tuple[float, int]:
    server = StdioServerParameters(
        command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), "http://127.0.0.1:9"]
    )
    before = child_pids()
    pid = None
    try:
        with anyio.fail_after(options.timeout):
            started = time.perf_counter()
            async with Client(server, mode="legacy") as client:
                await client.list_tools()
                seconds = time.perf_counter() - started
                pid = spawned_process(before, "plain_mcp_server.py")
                return seconds, rss_bytes(pid)
    finally:
        if pid is not None:
            stop_if_alive(pid)


async def measure(spaces: Sequence[Workspace], options: Options) -> Results:
    results = Results()
    for space in spaces:
        await check_workspace(space)
        await gateway_run(space, space.warm_cache, options, full=True)  # fills the warm cache, checks calls
        progress(
            f"{space.size:,} descriptors written and checked ({space.listable:,} listable here), cache filled"
        )

    def start(kind: str, space: Workspace) -> Measurement:
        async def measurement() -> float:
            read_into_page_cache(space.files)
            if kind == "warm":
                seconds, session = await gateway_run(space, space.warm_cache, options, full=True)
            else:
                with temporary_folder("aai-bench-cache-") as cache:
                    seconds, session = await gateway_run(space, cache, options, full=False)
            results.sessions.setdefault((kind, space.size), []).append(session)
            return seconds

        return measurement

    def in_process(action: Callable[[], int], files: Sequence[Path]) -> Measurement:
        async def measurement() -> float:
            read_into_page_cache(files)
            gc.collect()
            started = time.perf_counter()
            action()
            return time.perf_counter() - started

        return measurement

    async def baseline() -> float:
        seconds, rss = await baseline_run(options)
        results.baseline_rss.append(rss)
        return seconds

    async def calls() -> float:
        started = time.perf_counter()
        for size, run in (await side_by_side_calls(spaces, options)).items():
            results.calls.setdefault(size, []).append(run)
        return time.perf_counter() - started

    measurements: dict[tuple[str, int], Measurement] = {("baseline", 0): baseline, ("calls", 0): calls}
    for space in spaces:
        files = space.files
        measurements["json", space.size] = in_process(functools.partial(json_load_all, files), files)
        measurements["scan", space.size] = in_process(functools.partial(gateway_scan, space.folder), files)
        measurements["cold", space.size] = start("cold", space)
        measurements["warm", space.size] = start("warm", space)
    done = 0

    def counted(measurement: Measurement) -> Measurement:
        async def measured() -> float:
            nonlocal done
            seconds = await measurement()
            done += 1
            if done % len(measurements) == 0:
                progress(f"round {done // len(measurements)} of {options.repeat} measured")
            return seconds

        return measured

    results.timings = await interleaved(
        {name: counted(measurement) for name, measurement in measurements.items()}, options.repeat
    )
    return results


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


async def until_interrupted(spaces: Sequence[Workspace], options: Options) -> Results | None:
    """`measure`, or None when SIGINT (Ctrl-C) or SIGTERM came first: the measurement is then
    cancelled, which stops the processes it started (the SDK client stops its server)."""
    results: list[Results] = []
    load: list[float] = []
    interrupted = False
    try:
        async with anyio.create_task_group() as tasks:

            async def watch() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        interrupted = True
                        tasks.cancel_scope.cancel()

            async def sample_load() -> None:
                while True:
                    load.append(os.getloadavg()[0])
                    await anyio.sleep(5)

            async def work() -> None:
                results.append(await measure(spaces, options))
                tasks.cancel_scope.cancel()

            tasks.start_soon(watch)
            tasks.start_soon(sample_load)
            tasks.start_soon(work)
    except BaseException:
        # A Ctrl-C in a terminal also reaches the servers and the endpoint, and what their
        # ending raises may come out before the cancellation does.
        if not interrupted:
            raise
    if interrupted:
        return None
    results[0].load = load
    return results[0]


# --------------------------------------------------------------------------- report


def mb(value: float) -> str:
    return f"{value / 1e6:,.1f}"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f}"


def ms1(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def hundredths(value: float) -> str:
    return f"{value:.2f}"


def spread(values: Sequence[float], show: Callable[[float], str], unit: str = "") -> str:
    """Median, then the smallest and largest value in brackets."""
    if not values:
        return "–"
    middle, low, high = (show(v) for v in (statistics.median(values), min(values), max(values)))
    return f"{middle}{unit} ({low}–{high})"


def times(value: float) -> str:
    return f"{value:,.0f}×" if value >= 100 else f"{value:.2f}×"


def ratio_cell(mine: Sequence[float], theirs: Sequence[float]) -> str:
    """The ratio of the medians, then the range of the ratios within one round."""
    if not mine or not theirs:
        return "–"
    rounds = [a / b for a, b in zip(mine, theirs, strict=True)]
    middle = statistics.median(mine) / statistics.median(theirs)
    return f"{times(middle)} ({times(min(rounds))[:-1]}–{times(max(rounds))[:-1]})"


def table(
    results: Results, spaces: Sequence[Workspace], options: Options
) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the report: one column per size."""
    timings, sessions = results.timings, results.sessions
    sizes = [space.size for space in spaces]

    def samples(kind: str, size: int) -> list[float]:
        return list(timings[kind, size].samples)

    def of(kind: str, size: int, name: str) -> list[float]:
        if kind == "calls":
            runs = results.calls.get(size, [])
            return [float(v) for r in runs if (v := getattr(r, name)) is not None]
        return [float(v) for s in sessions.get((kind, size), []) if (v := getattr(s, name)) is not None]

    baseline = samples("baseline", 0)
    by_size = {space.size: space for space in spaces}

    def growth(kind: str, name: str, size: int) -> str:
        if size < 100 or 0 not in sizes:
            return "–"
        per = [(a - b) / (size / 1000) for a, b in zip(of(kind, size, name), of(kind, 0, name), strict=True)]
        return spread(per, mb)

    def versus_reference(name: str, size: int) -> str:
        if size == REFERENCE:
            return "1.00× (reference)"
        return ratio_cell(of("calls", size, name), of("calls", REFERENCE, name))

    def list_size(size: int) -> str:
        """Bytes, ≈ tokens and tools of tools/list (the same in every run, else its range)."""
        chosen = [*sessions["warm", size], *sessions["cold", size]]
        seen = sorted({s.tools_bytes for s in chosen})
        shown = f"{seen[0]:,}" if len(seen) == 1 else f"{seen[0]:,}–{seen[-1]:,}"
        return f"{shown} B (≈ {chosen[0].tools_chars // 4:,} tok, {chosen[0].entries} tools)"

    def row(label: str, cell: Callable[[int], str]) -> list[str]:
        return [label, *(cell(size) for size in sizes)]

    calls = f"median of {options.calls} calls"
    rows = [
        row(
            "generated apps listable here",
            lambda n: f"{by_size[n].listable:,} of {n:,}",
        ),
        row(
            "descriptor files, MB",
            lambda n: mb(sum(path.stat().st_size for path in by_size[n].files)),
        ),
        row("start, cold cache, ms", lambda n: spread(samples("cold", n), ms)),
        row("start, warm cache, ms", lambda n: spread(samples("warm", n), ms)),
        row("warm start ÷ SDK server (target ≤ 2×)", lambda n: ratio_cell(samples("warm", n), baseline)),
        row("cold start ÷ SDK server", lambda n: ratio_cell(samples("cold", n), baseline)),
        row("json.load of the files, ms", lambda n: spread(samples("json", n), ms1)),
        row("scan + validate in-process, ms", lambda n: spread(samples("scan", n), ms1)),
        row(
            "scan + validate ÷ json.load (target ≤ 5×)",
            lambda n: ratio_cell(samples("scan", n), samples("json", n)),
        ),
        row(
            "cold start ÷ json.load (process and imports too)",
            lambda n: ratio_cell(samples("cold", n), samples("json", n)),
        ),
        row("tools/list", list_size),
        row("RSS after start, cold, MB", lambda n: spread(of("cold", n, "rss_start"), mb)),
        row("RSS after start, warm, MB", lambda n: spread(of("warm", n, "rss_start"), mb)),
        row("RSS after a search and the calls, MB", lambda n: spread(of("calls", n, "rss_after"), mb)),
        row("RSS growth per 1,000 vs 0, start, MB (≤ 15)", lambda n: growth("warm", "rss_start", n)),
        row("RSS growth per 1,000 vs 0, after calls, MB (≤ 15)", lambda n: growth("calls", "rss_after", n)),
        row(f"aai_exec, µs ({calls})", lambda n: spread(of("calls", n, "exec_call"), us)),
        row(f"aai_exec ÷ at {REFERENCE} apps (target ≤ 1.1×)", lambda n: versus_reference("exec_call", n)),
        row("guide read, echo app, µs", lambda n: spread(of("calls", n, "guide_echo"), us)),
        row(f"guide read, echo ÷ at {REFERENCE} apps (≤ 1.1×)", lambda n: versus_reference("guide_echo", n)),
        row("guide read, catalog app, µs", lambda n: spread(of("calls", n, "guide_app"), us)),
        row(f"guide read, catalog ÷ at {REFERENCE} (≤ 1.1×)", lambda n: versus_reference("guide_app", n)),
        row(
            f"first aai_search, {options.settle_seconds:g} s after the first answer, ms",
            lambda n: spread(of("warm", n, "first_search"), ms),
        ),
        row(
            "CPU from the first answer until quiet after that search, ms",
            lambda n: spread(of("warm", n, "settle_cpu"), ms),
        ),
        row(
            f"idle CPU over {options.idle_seconds:g} s, % of a core (target 0)",
            lambda n: spread([v * 100 for v in of("warm", n, "idle_cpu")], hundredths),
        ),
    ]
    header = ["descriptors", *(f"{n:,}" + (" (ref.)" if n == REFERENCE else "") for n in sizes)]
    return header, rows


def targets(results: Results, spaces: Sequence[Workspace], idle_seconds: float) -> list[str]:
    """The issue's targets at the largest size, each with its figure and whether it is met."""
    timings, sessions = results.timings, results.sessions
    size = max(space.size for space in spaces)
    if size <= REFERENCE:
        return []

    def med(kind: str, name: str | None = None, n: int = size) -> float:
        if name is None:
            return statistics.median(timings[kind, n].samples)
        runs: Sequence[Any] = results.calls[n] if kind == "calls" else sessions[kind, n]
        return statistics.median(float(getattr(r, name)) for r in runs if getattr(r, name) is not None)

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    warm = med("warm") / med("baseline", n=0)
    scan = med("scan") / med("json")
    cold = med("cold") / med("json")
    lines = [
        f"targets at {size:,} descriptors (medians):",
        f"  warm start ≤ 2× the minimal SDK server's: {warm:.2f}× — {verdict(warm <= 2)}",
        f"  first start's scan + validate ≤ 5× json.load of the files: {scan:.1f}× — {verdict(scan <= 5)}"
        f" (the whole cold start, process and imports included: {cold:.1f}×)",
    ]
    for name, label in (
        ("exec_call", "aai_exec"),
        ("guide_echo", "echo guide read"),
        ("guide_app", "catalog guide read"),
    ):
        ratio = med("calls", name) / med("calls", name, REFERENCE)
        lines.append(f"  {label} ≤ 1.1× at {REFERENCE} apps: {ratio:.2f}× — {verdict(ratio <= 1.1)}")
    if size >= 100:
        for kind, name, when in (
            ("warm", "rss_start", "at start"),
            ("calls", "rss_after", "after a search and the calls"),
        ):
            per = (med(kind, name) - med(kind, name, 0)) / (size / 1000) / 1e6
            lines.append(
                f"  RSS growth ≤ 15 MB per 1,000 descriptors, {when}: {per:.1f} MB — {verdict(per <= 15)}"
            )
    idle = med("warm", "idle_cpu")
    tick = 1 / TICKS_PER_SECOND  # what /proc counts in: one tick over the interval is the noise floor
    lines.append(
        f"  an idle gateway uses no CPU (at most one {tick * 1e3:.0f} ms clock tick in "
        f"{idle_seconds:g} s): {idle * 100:.2f} % of a core — {verdict(idle * idle_seconds <= tick * 1.01)}"
    )
    return lines


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = []
    for line in [header, *rows]:
        cells = [
            line[0].ljust(widths[0]),
            *(cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)),
        ]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(line) + " |" for line in rows)
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        metavar="N",
        help="numbers of descriptors (default 0 100 1000 10000; 0 and 10 are always added)",
    )
    parser.add_argument(
        "--calls", type=int, default=100, help="sequential calls of each kind per run (default 100)"
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=10.0,
        help="the idle interval whose CPU time is measured (default 10)",
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=5.0,
        help="the pause after the first tools/list answer before the idle interval, whose CPU time "
        "is shown as work done after the answer (default 5)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds one gateway run may take: start, idle interval and calls (default 600)",
    )
    parser.add_argument(
        "--serve-args",
        default="",
        metavar="ARGS",
        help="more options for `aai-gateway serve`, one string (e.g. '--poll-interval 0')",
    )
    parser.add_argument("--markdown", action="store_true", help="also print the table in markdown")
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    if not PROC.joinpath("self", "status").exists():
        parser.error("this benchmark reads /proc: Linux only")
    if min(args.sizes) < 0 or args.calls < 1 or args.idle_seconds <= 0:
        parser.error("sizes must be ≥ 0, --calls ≥ 1, --idle-seconds > 0")
    options = Options(
        args.repeat,
        args.calls,
        args.idle_seconds,
        args.settle_seconds,
        args.timeout,
        shlex.split(args.serve_args),
    )
    sizes = sorted({0, REFERENCE, *args.sizes})
    signal.signal(signal.SIGTERM, _interrupt)  # cleaned up like Ctrl-C (anyio's own while measuring)
    port = free_port()
    try:
        with ExitStack() as stack:
            root = stack.enter_context(temporary_folder("aai-bench-scale-"))
            endpoint = start_endpoint(port)
            stack.callback(endpoint.wait, timeout=10)
            stack.callback(endpoint.terminate)
            spaces = []
            for size in sizes:
                folder, cache = root / f"apps-{size}", root / f"cache-{size}"
                folder.mkdir()
                cache.mkdir()
                ids = write_descriptors(folder, size, port)
                spaces.append(Workspace(size, folder, descriptor_files(folder), ids, cache))
            results = anyio.run(until_interrupted, spaces, options)
            if results is None:
                raise KeyboardInterrupt
            header, rows = table(results, spaces, options)
    except KeyboardInterrupt:
        print("interrupted: the processes it started are stopped, its folders removed", file=sys.stderr)
        return 130
    print(
        f"median (smallest–largest) of {args.repeat} runs, interleaved round by round; ratios: of the "
        f"medians (range: the ratios within one round). Per-call figures: {args.calls} sequential calls "
        f"of each kind per run, to the gateways of every size in turns; the run's median. "
        f"Baseline: minimal SDK server start "
        f"{spread(results.timings['baseline', 0].samples, ms, ' ms')}, "
        f"RSS {spread(results.baseline_rss, mb, ' MB')}. 1-minute load average while measuring "
        f"{spread(results.load, hundredths)} (this benchmark adds ~1), {os.cpu_count()} CPUs."
    )
    guide_app = next((s.guide_app for s in spaces if s.guide_app), None)
    print(
        f"catalog app whose guide is read: {guide_app}; gateway options: {options.serve_args or 'defaults'}"
    )
    print(text_table(header, rows))
    for line in targets(results, spaces, options.idle_seconds):
        print(line)
    if args.markdown:
        print()
        print(markdown_table(header, rows))
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
