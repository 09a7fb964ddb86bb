"""Web apps run under the network rules of `web_discover` (DESIGN.md, second round): https on every
hop, every redirect target checked, the address checked when connecting (not only at discovery),
private addresses only with the permission. Real HTTPS servers on 127.0.0.1 (a test CA); a test
resolver and a disguising network backend stand in for public host names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.discovery.web import WebFetchPolicy
from aai_gateway.discovery.web_discovery import accept_descriptor
from aai_gateway.discovery.web_fetch import WELL_KNOWN_PATH, FetchedDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.discovery.web_support import (
    DisguisingBackend,
    HttpsServer,
    LocalCa,
    fixed_resolver,
    web_descriptor,
)
from tests.executors.conftest import invocation
from tests.executors.echo_server import EchoServer

pytestmark = pytest.mark.anyio

PUBLIC_ADDRESS = "93.184.216.34"  # what the test resolver answers for the app's public name
APP_HOST = "app.example"
TOOLS = [
    {
        "name": "data",
        "description": "Read data",
        "parameters": {"type": "object", "properties": {}},
        "execution": {"path": "/data", "method": "GET"},
    }
]


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"), APP_HOST)


@pytest.fixture
def server(ca: LocalCa) -> Iterator[HttpsServer]:
    running = HttpsServer(ca).start()
    yield running
    running.stop()


@pytest.fixture
def internal() -> Iterator[EchoServer]:
    """A plain-http service on loopback, the kind a redirect must never reach."""
    running = EchoServer().start()
    yield running
    running.stop()


def web_app(origin: str) -> AppDescriptor:
    """A descriptor accepted from `origin` as `web_discover` accepts it (API under /api)."""
    body = json.dumps(web_descriptor(f"{origin}/api", tools=TOOLS)).encode()
    app, _ = accept_descriptor(FetchedDescriptor(origin, origin + WELL_KNOWN_PATH, body, 200))
    return app


async def run(executor: HttpExecutor, app: AppDescriptor) -> Any:
    try:
        return await executor.execute(invocation(app, "data"))
    finally:
        await executor.aclose()


async def test_a_web_apps_redirect_to_plain_http_on_loopback_is_refused_and_never_followed(
    server: HttpsServer, ca: LocalCa, internal: EchoServer
) -> None:
    server.redirect("/api/data", f"http://127.0.0.1:{internal.server_address[1]}/internal")
    executor = HttpExecutor(
        ca_file=ca.ca_file, web_policy=ca.policy()
    )  # private addresses allowed: the app is on 127.0.0.1

    with pytest.raises(AaiError) as caught:
        await run(executor, web_app(server.origin))

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert "is not https" in caught.value.message
    assert caught.value.data["redirect"] == f"http://127.0.0.1:{internal.server_address[1]}/internal"
    assert server.requests == ["/api/data"]
    assert internal.received == []


async def test_a_redirect_to_a_loopback_address_is_refused_without_the_permission(
    server: HttpsServer, ca: LocalCa
) -> None:
    other = HttpsServer(ca).start()
    try:
        server.redirect("/api/data", f"https://127.0.0.1:{other.port}/internal")
        origin = f"https://{APP_HOST}:{server.port}"
        executor = HttpExecutor(
            web_policy=ca.policy(allow_private=False),
            resolver=fixed_resolver(PUBLIC_ADDRESS),
            network_backend=DisguisingBackend(server.port, PUBLIC_ADDRESS),
        )

        with pytest.raises(AaiError) as caught:
            await run(executor, web_app(origin))
    finally:
        other.stop()

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["address"] == "127.0.0.1"
    assert caught.value.data["reason"] == "loopback"
    assert "AAI_GATEWAY_ALLOW_PRIVATE_WEB=1" in caught.value.message
    assert server.requests == ["/api/data"]  # the app itself was reached over its public address
    assert other.connections == 0


async def test_a_cached_web_app_whose_name_now_resolves_to_loopback_is_refused_at_call_time(
    server: HttpsServer, ca: LocalCa
) -> None:
    server.serve("/api/data", {"rows": 3})
    app = web_app(f"https://{APP_HOST}:{server.port}")  # accepted while its name was public
    refusing = HttpExecutor(web_policy=ca.policy(allow_private=False), resolver=fixed_resolver("127.0.0.1"))

    with pytest.raises(AaiError) as caught:
        await run(refusing, app)

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert f"{APP_HOST} resolves to 127.0.0.1, a loopback address" in caught.value.message
    assert server.connections == 0

    allowing = HttpExecutor(web_policy=ca.policy(allow_private=True), resolver=fixed_resolver("127.0.0.1"))
    assert await run(allowing, app) == {"rows": 3}  # the same call with the user's permission


async def test_a_web_app_with_a_plain_http_base_url_is_refused_before_connecting(
    internal: EchoServer, tmp_path: Path
) -> None:
    """A descriptor that never passed today's acceptance (an old cache entry, say) still cannot
    make the gateway speak plain http for a web app."""
    origin = f"http://127.0.0.1:{internal.server_address[1]}"
    document = web_descriptor(f"{origin}/api", tools=TOOLS)
    source = Source(kind="web", location=origin + WELL_KNOWN_PATH, origin=origin)
    app = load_text(json.dumps(document), source, "web").descriptor
    assert app is not None
    executor = HttpExecutor(web_policy=WebFetchPolicy(allow_private=True))

    with pytest.raises(AaiError) as caught:
        await run(executor, app)

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert "is not an https URL" in caught.value.message
    assert internal.received == []


async def test_an_app_from_this_machine_still_follows_a_redirect_to_plain_http_on_loopback(
    server: HttpsServer, ca: LocalCa, internal: EchoServer
) -> None:
    """Local apps keep their freedom: a descriptor on disk may describe http://127.0.0.1."""
    server.redirect("/api/data", f"http://127.0.0.1:{internal.server_address[1]}/status/200")
    document = web_descriptor(f"{server.origin}/api", tools=TOOLS)
    app = load_text(json.dumps(document), Source(kind="file", location="/tmp/aai.json"), "web").descriptor
    assert app is not None

    answer = await run(HttpExecutor(ca_file=ca.ca_file), app)

    assert answer["url"].endswith("/status/200")
    assert internal.received == ["/status/200"]
