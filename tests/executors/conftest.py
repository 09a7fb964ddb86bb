"""Fixtures for executor tests: the anyio backend and a real httpbin served by gunicorn."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.executors import Invocation

STARTUP_SECONDS = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------- descriptors


def parameters(names: Iterable[str]) -> dict[str, Any]:
    """A parameters schema declaring these names with any type (placeholders must name them)."""
    return {"type": "object", "properties": {name: {} for name in names}}


def c_tool(
    name: str,
    path: str | None = None,
    method: str | None = None,
    *,
    params: Iterable[str] = ("x",),
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    execution: dict[str, Any] = {}
    if path is not None:
        execution["path"] = path
    if method is not None:
        execution["method"] = method
    if headers is not None:
        execution["headers"] = headers
    tool: dict[str, Any] = {
        "name": name,
        "description": f"{name} for tests",
        "parameters": parameters(params),
    }
    if execution:
        tool["execution"] = execution
    return tool


def c_http_app(
    base_url: str,
    tools: list[dict[str, Any]],
    *,
    timeout_ms: int | None = None,
    default_headers: dict[str, str] | None = None,
    app_id: str = "dev.test.http",
) -> AppDescriptor:
    """A dialect-C (camelCase) descriptor of an HTTP app, loaded as the gateway loads files."""
    execution: dict[str, Any] = {"type": "http", "baseUrl": base_url}
    if timeout_ms is not None:
        execution["timeout"] = timeout_ms
    if default_headers is not None:
        execution["defaultHeaders"] = default_headers
    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "linux",
        "app": {"id": app_id, "name": {"en": "HTTP test"}, "defaultLang": "en", "description": "tests"},
        "execution": execution,
        "tools": tools,
    }
    return load(document)


def b_web_app(
    base_url: str,
    tools: list[dict[str, Any]],
    *,
    default_headers: dict[str, str] | None = None,
    app_id: str = "dev.test.web",
) -> AppDescriptor:
    """A dialect-B (multi-platform) descriptor with only a `web` section."""
    web: dict[str, Any] = {"automation": "restapi", "base_url": base_url, "tools": tools}
    if default_headers is not None:
        web["default_headers"] = default_headers
    document = {
        "schema_version": "1.0",
        "appId": app_id,
        "name": "Web test",
        "description": "tests",
        "version": "1.0",
        "platforms": {"web": web},
    }
    return load(document)


def load(document: dict[str, Any]) -> AppDescriptor:
    result = load_text(json.dumps(document), Source(kind="inline", location="<test>"), "linux")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def invocation(
    app: AppDescriptor,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    http_auth: httpx.Auth | None = None,
) -> Invocation:
    found = app.tool(tool)
    assert found is not None, f"{app.id} has no tool {tool!r}"
    return Invocation(app, found, dict(arguments or {}), request_id="test-1", http_auth=http_auth)


class HeaderAuth(httpx.Auth):
    """Credentials in two headers, as an API-key flow might set them."""

    def __init__(self, *, refreshable: bool = False) -> None:
        self.refreshable = refreshable

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = "Bearer secret-token"
        request.headers["X-Api-Key"] = "secret-key"
        yield request


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_answers(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} before answering")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not answer {url} within {STARTUP_SECONDS} s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes], quick: signal.Signals = signal.SIGTERM) -> None:
    process.send_signal(quick)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


HTTPBIN_PYTHON = (
    Path(__file__).resolve().parents[2] / ".cache" / "test-peers" / "httpbin" / "venv" / "bin" / "python"
)


def _httpbin_python() -> str:
    """httpbin runs from its own venv (scripts/install-test-peers): its greenlet pin clashes with
    Playwright's in the project's venv."""
    if not HTTPBIN_PYTHON.exists():
        pytest.fail("httpbin test peer missing: run scripts/install-test-peers", pytrace=False)
    return str(HTTPBIN_PYTHON)


def _no_control_socket(python: str) -> list[str]:
    """Recent gunicorn opens a control socket under ~/.gunicorn; test servers need none."""
    probe = (
        "from gunicorn.config import KNOWN_SETTINGS as K; "
        "print(any('--no-control-socket' in (s.cli or []) for s in K))"
    )
    known = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    return ["--no-control-socket"] if known == "True" else []


@pytest.fixture(scope="session")
def httpbin_url() -> Iterator[str]:
    """A real httpbin on 127.0.0.1, served by gunicorn for the whole session.

    `--threads` makes gunicorn use its gthread worker, which keeps connections alive (the sync
    worker closes each one), so connection reuse can be observed; slow endpoints such as
    `/delay/3` then do not hold up the other tests either. A long keep-alive keeps a loaded
    machine from turning the connection-reuse test flaky."""
    port = free_port()
    python = _httpbin_python()
    command = [
        python,
        "-m",
        "gunicorn",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        "2",
        "--threads",
        "8",
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
        *_no_control_socket(python),
        "httpbin:app",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_answers(f"{url}/get", process, "gunicorn httpbin")
        yield url
    finally:
        stop(process, signal.SIGINT)  # gunicorn: SIGINT is the quick shutdown, SIGTERM the graceful one
