"""The gateway and an app whose tools are its MCP server's: listed before anyone asked the server,
the server asked once on first use (guide or call), the snapshot kept and re-applied when the
executor reports a new one, and the client told when that changes the list. The server is a real
SDK server process (tests/mcp_upstream.py) reached by the gateway's own mcp executor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, ExecutionType
from aai_gateway.discovery import build_catalog
from aai_gateway.discovery.mcp_snapshots import Snapshot, SnapshotStore
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.service import Caller, Gateway
from tests.builders import c_descriptor, mcp_descriptor, trusting_gate, write_json
from tests.snapshot_upstream import ReadCountingMcpExecutor, UpstreamTools

pytestmark = pytest.mark.anyio
APP = "dev.test.upstream"
TOOLS: list[dict[str, Any]] = [
    {"name": "get_time", "description": "Now", "inputSchema": {"type": "object"}},
    {"name": "bad name", "inputSchema": {"type": "object"}},
    {
        "name": "convert",
        "inputSchema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
    },
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Setup:
    def __init__(self, root: Path) -> None:
        self.apps = root / "apps"
        self.upstream = UpstreamTools(root / "tools.json", TOOLS, instructions="Times")
        self.store = SnapshotStore.in_cache(root / "cache")
        self.executor = ReadCountingMcpExecutor()
        self.list_changes = 0
        write_json(self.apps / "upstream" / "aai.json", mcp_descriptor(APP, **self.upstream.execution()))

    def serve(self, tools: list[dict[str, Any]]) -> None:
        """The server lists `tools` from now on, without saying so."""
        self.upstream.serve(tools)

    async def server_changes_its_tools(self, tools: list[dict[str, Any]]) -> None:
        """The server lists `tools` from now on and says its tools changed; returns once the
        executor has read them again and reported them (the gateway's listener comes first)."""
        reported = anyio.Event()

        async def heard(app: AppDescriptor, snapshot: Snapshot) -> None:
            reported.set()

        self.executor.on_snapshot(heard)
        self.upstream.serve(tools, announce=True)
        with anyio.fail_after(20):
            await reported.wait()

    def gateway(self, *, with_executor: bool = True) -> Gateway:
        registry = ExecutorRegistry()
        if with_executor:
            registry.register(ExecutionType.MCP, self.executor)
        catalog = build_catalog(
            [SourceSpec("--path", self.apps, Pattern.FILES_AND_APP_DIRS, explicit=True)],
            "linux",
            snapshots=self.store,
        )
        gateway = Gateway(catalog, registry, consent=trusting_gate(APP), snapshots=self.store)

        async def changed() -> None:
            self.list_changes += 1

        gateway.on_list_changed = changed
        return gateway


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    setup = Setup(tmp_path)
    try:
        yield setup
    finally:
        await setup.executor.aclose()


def listed(gateway: Gateway) -> list[str]:
    return [entry.app.id for entry in gateway.entries]


async def test_an_app_is_listed_before_its_server_was_ever_asked(setup: Setup) -> None:
    gateway = setup.gateway()

    assert listed(gateway) == [APP]
    assert setup.executor.taken == [] and setup.store.list() == []


async def test_without_an_mcp_executor_it_is_not_listed_and_a_refresh_says_why(setup: Setup) -> None:
    gateway = setup.gateway(with_executor=False)
    app = gateway.resolve(APP)

    with pytest.raises(AaiError) as refused:
        await gateway.refresh_snapshot(app)

    assert listed(gateway) == []
    assert refused.value.code is ErrorCode.NOT_IMPLEMENTED
    assert "no executor for execution type 'mcp' is installed" in refused.value.message
    assert "they are listed here once the gateway has asked the server" in await gateway.guide_of(app)


async def test_the_first_guide_asks_the_server_once_and_keeps_what_it_listed(setup: Setup) -> None:
    gateway = setup.gateway()
    entry = gateway.entry_for_tool_name(f"app_{APP}")
    assert entry is not None

    guide = await gateway.guide_of(entry.app)
    again = await gateway.guide_of(gateway.resolve(APP))

    assert "### get_time" in guide and "### convert" in guide and "bad name" not in guide
    assert again == guide
    assert setup.executor.taken == [APP]
    (kept,) = setup.store.list()
    assert (kept.listed, kept.instructions, kept.server.name if kept.server else None) == (
        3,
        "Times",
        "test-upstream",
    )
    assert setup.list_changes == 0  # the app was listed all along, with the same line


async def test_concurrent_first_uses_ask_the_server_once(setup: Setup) -> None:
    gateway = setup.gateway()
    app = gateway.resolve(APP)
    guides: list[str] = []

    async def read() -> None:
        guides.append(await gateway.guide_of(app))

    async with anyio.create_task_group() as tasks:
        for _ in range(5):
            tasks.start_soon(read)

    assert setup.executor.taken == [APP] and len(set(guides)) == 1


async def test_the_first_call_reads_the_tools_then_checks_and_runs_it(setup: Setup) -> None:
    gateway = setup.gateway()

    with pytest.raises(AaiError) as invalid:
        await gateway.execute(APP, "convert", {}, caller=Caller("agent"))
    result = await gateway.execute(APP, "convert", {"tz": "UTC"}, caller=Caller("agent"))

    assert invalid.value.code is ErrorCode.INVALID_PARAMS
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"tool": "convert", "arguments": {"tz": "UTC"}}
    assert setup.executor.taken == [APP]


async def test_a_later_gateway_lists_the_kept_tools_without_asking_the_server(setup: Setup) -> None:
    await setup.gateway().guide_of(setup.gateway().resolve(APP))
    setup.executor.taken.clear()

    later = setup.gateway()

    assert [t.name for t in later.resolve(APP).tools] == ["get_time", "convert"]
    assert "### convert" in await later.guide_of(later.resolve(APP))
    assert setup.executor.taken == []


async def test_a_list_the_executor_reports_is_applied_and_the_client_told_when_the_list_changed(
    setup: Setup,
) -> None:
    gateway = setup.gateway()
    await gateway.guide_of(gateway.resolve(APP))

    await setup.server_changes_its_tools([*TOOLS, {"name": "added", "inputSchema": {"type": "object"}}])
    assert [t.name for t in gateway.resolve(APP).tools] == ["get_time", "convert", "added"]
    assert setup.list_changes == 0  # the same line in tools/list: only the guide changed

    await setup.server_changes_its_tools([])
    assert listed(gateway) == [] and setup.list_changes == 1  # no tool left: the app is gone

    await setup.server_changes_its_tools(TOOLS)
    assert listed(gateway) == [APP] and setup.list_changes == 2
    (kept,) = setup.store.list()
    assert kept.listed == 3


async def test_an_explicit_refresh_reads_the_server_again(setup: Setup) -> None:
    gateway = setup.gateway()
    await gateway.guide_of(gateway.resolve(APP))
    setup.serve(TOOLS[:1])

    entry = await gateway.refresh_snapshot(gateway.resolve(APP))

    assert [t.name for t in entry.descriptor.tools] == ["get_time"] and entry.server_problems == ()
    assert setup.executor.taken == [APP, APP]


async def test_a_snapshot_taken_for_an_earlier_descriptor_is_not_applied(setup: Setup) -> None:
    gateway = setup.gateway()
    before = gateway.resolve(APP)
    snapshot = await setup.executor.take_snapshot(before, {})
    changed = mcp_descriptor(APP, **setup.upstream.execution(), env={"MODE": "v2"})
    write_json(setup.apps / "upstream" / "aai.json", changed)
    gateway = setup.gateway()

    entry = await gateway.apply_snapshot(gateway.resolve(APP), snapshot)

    assert entry.descriptor.tools == () and setup.store.list() == []


async def test_a_refresh_of_an_app_that_declares_its_tools_is_refused(setup: Setup) -> None:
    write_json(setup.apps / "plain.json", c_descriptor("dev.test.plain"))
    gateway = setup.gateway()

    with pytest.raises(AaiError) as refused:
        await gateway.refresh_snapshot(gateway.resolve("dev.test.plain"))

    assert refused.value.code is ErrorCode.INVALID_REQUEST
    assert "declares its tools in its descriptor" in refused.value.message


async def test_a_search_before_the_server_was_asked_says_which_operations_it_could_not_search(
    setup: Setup,
) -> None:
    gateway = setup.gateway()

    before = await gateway.search("convert a time zone")
    nothing = await gateway.search("zzyzx quux")
    next_page = await gateway.search("convert a time zone", offset=1)
    asked_before = list(setup.executor.taken)
    within = await gateway.search("convert", app=APP)
    after = await gateway.search("convert a time zone")

    note = f"the operations of 1 app whose MCP servers have not been asked for them yet (`{APP}`)."
    assert note in before.text and note in nothing.text and note not in next_page.text  # said once
    assert "convert" not in [r.tool for r in before.results] and asked_before == []
    assert next(r.tool for r in within.results) == "convert" and setup.executor.taken == [APP]
    assert (APP, "convert") in [(r.app, r.tool) for r in after.results]
    assert "Not searched" not in after.text
