"""Executors come from the entry points of `aai_gateway.executors`: the built-in ones, and those
of a separately installed package (built here as a wheel and installed by pip), which may add an
executor but never replace a built-in one, and never stop the gateway by failing."""

from __future__ import annotations

import base64
import hashlib
import logging
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from importlib.metadata import distribution
from pathlib import Path

import pytest

from aai_gateway.descriptor import ExecutionType
from aai_gateway.discovery import Catalog, CatalogEntry
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import (
    ENTRY_POINT_GROUP,
    GATEWAY_DISTRIBUTION,
    default_registry,
    registry_from,
)
from aai_gateway.service import Caller, Gateway
from tests.builders import trusting_gate
from tests.executors.every_type import one_call_per_type

pytestmark = pytest.mark.anyio

PLUGIN = "aai-gateway-example-executor"
MODULE = "aai_example_executor"
PLUGIN_CODE = '''\
"""A package that ships an executor, registered like the gateway's own."""

from aai_gateway.descriptor import ExecutionType
from aai_gateway.executors.base import ExecutorSettings


class EchoExecutor:
    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings

    def unavailable_reason(self, tool):
        return None

    async def execute(self, invocation):
        return {"echo": invocation.arguments, "path": self.settings.environ.get("PATH")}

    async def aclose(self):
        return None


def com_bridge(settings):
    return [ExecutionType.COM], EchoExecutor(settings)


def takes_http(settings):
    return ["http"], EchoExecutor(settings)


def broken(settings):
    raise RuntimeError("this factory is broken")


def not_an_executor(settings):
    return ["stdio"], object()


def unknown_type(settings):
    return ["teleport"], EchoExecutor(settings)
'''
ENTRY_POINTS = f"""\
[aai_gateway.executors]
com-bridge = {MODULE}:com_bridge
takes-http = {MODULE}:takes_http
broken = {MODULE}:broken
not-an-executor = {MODULE}:not_an_executor
unknown-type = {MODULE}:unknown_type
missing-module = aai_no_such_module:factory
"""
SETTINGS = ExecutorSettings(environ={"PATH": "/opt/example/bin"})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build_wheel(folder: Path) -> Path:
    """The plugin as a wheel: its module and a .dist-info declaring its entry points."""
    info = "aai_gateway_example_executor-1.0.dist-info"
    files = {
        f"{MODULE}/__init__.py": PLUGIN_CODE,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PLUGIN}\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": ENTRY_POINTS,
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / "aai_gateway_example_executor-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where pip installed the plugin package (offline, from the wheel)."""
    folder = tmp_path_factory.mktemp("plugin")
    site = folder / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--quiet",
            "--target",
            str(site),
            str(build_wheel(folder)),
        ],
        check=True,
        timeout=120,
    )
    return site


@pytest.fixture
def plugin_installed(plugin_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(plugin_site))
    yield
    sys.modules.pop(MODULE, None)


AWAITING_EXECUTOR: frozenset[ExecutionType] = frozenset()
"""Types the descriptor layer knows whose executor is still being written (none now: the MCP
executor of issue 14 landed). Until one lands, dispatch answers NOT_IMPLEMENTED; remove the type
from here with it."""


def test_every_execution_type_has_a_built_in_executor_declared_as_an_entry_point() -> None:
    registry = default_registry(SETTINGS)
    for execution_type in set(ExecutionType) - AWAITING_EXECUTOR:
        executor = registry.registered(execution_type)
        assert executor is not None, execution_type
        assert type(executor).__module__.startswith("aai_gateway.executors."), execution_type

    # The gateway's own metadata declares them all: none is registered some other way.
    declared = [p for p in distribution(GATEWAY_DISTRIBUTION).entry_points if p.group == ENTRY_POINT_GROUP]
    from_metadata = registry_from(declared, SETTINGS)
    for execution_type in ExecutionType:
        assert type(from_metadata.registered(execution_type)) is type(registry.registered(execution_type))


def test_a_type_whose_executor_is_missing_is_not_implemented_not_a_crash() -> None:
    """As when an execution type lands in the model before its executor (MCP did, in issue 14):
    the gateway's entry points without the one of `mcp`."""
    declared = [
        p
        for p in distribution(GATEWAY_DISTRIBUTION).entry_points
        if p.group == ENTRY_POINT_GROUP and p.name != "mcp"
    ]
    registry = registry_from(declared, SETTINGS)
    assert registry.registered(ExecutionType.MCP) is None
    _, entry, tool_name, _ = one_call_per_type()[ExecutionType.MCP]
    tool = entry.descriptor.tool(tool_name)
    assert tool is not None

    with pytest.raises(AaiError) as refused:
        registry.executor_for(entry.descriptor, tool)
    assert refused.value.code is ErrorCode.NOT_IMPLEMENTED
    assert "this gateway has no executor for it yet" in refused.value.message
    assert registry.unavailable_reason(tool) == "no executor for 'mcp'"


@pytest.mark.usefixtures("plugin_installed")
def test_a_packages_failing_or_clashing_entry_points_are_logged_and_the_built_ins_stay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="aai_gateway.executors.defaults")
    assert distribution(PLUGIN).version == "1.0"

    registry = default_registry(SETTINGS)

    for execution_type in set(ExecutionType) - AWAITING_EXECUTOR:
        executor = registry.registered(execution_type)
        assert type(executor).__module__.startswith("aai_gateway.executors."), execution_type
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for name in ("broken", "not-an-executor", "unknown-type", "missing-module"):
        assert f"'{name}' of {PLUGIN}" in logged and "failed and is skipped" in logged
    assert "this factory is broken" in logged and "'teleport' is not an execution type" in logged
    assert f"'takes-http' of {PLUGIN} ({MODULE}:takes_http) also claims execution type 'http'" in logged
    assert f"'com-bridge' of {PLUGIN} ({MODULE}:com_bridge) also claims execution type 'com'" in logged


@pytest.mark.usefixtures("plugin_installed")
async def test_a_packages_executor_gets_the_settings_and_runs_tools_through_the_gateway() -> None:
    registry = registry_from(distribution(PLUGIN).entry_points, SETTINGS)
    _, entry, tool, arguments = one_call_per_type()[ExecutionType.COM]
    app = entry.descriptor
    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]), registry, consent=trusting_gate(app.id)
    )

    result = await gateway.execute(app.id, tool, arguments, caller=Caller("agent"))

    assert result["path"] == "/opt/example/bin"
    assert set(arguments) <= set(result["echo"])  # the validated arguments, defaults filled in
    assert type(registry.registered(ExecutionType.COM)).__module__ == MODULE
    assert registry.registered(ExecutionType.HTTP) is not None  # takes-http: no built-in in the way here
    assert registry.registered(ExecutionType.STDIO) is None  # not-an-executor was skipped
