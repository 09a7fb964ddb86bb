"""A redirect to a host that cannot be reached is reported naming that host, not the app's; a
refusal by the host a redirect led to is not blamed on the app's credentials (never sent there)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.executors.conftest import c_http_app, c_tool, invocation
from tests.http_handlers import QuietHandler, serving

pytestmark = pytest.mark.anyio


async def call(server_url: str, path: str) -> Any:
    app = c_http_app(server_url, [c_tool("fetch", path, "GET", params=())])
    executor = HttpExecutor()
    try:
        return await executor.execute(invocation(app, "fetch", {}))
    finally:
        await executor.aclose()


class Redirecting(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", f"http://127.0.0.1:{self.server.closed_port}/elsewhere")  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


async def test_a_redirect_to_a_host_that_cannot_be_reached_is_reported_naming_that_host_not_the_app() -> None:
    closed = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    closed_port = closed.server_port
    closed.server_close()  # nothing listens there any more
    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    server.closed_port = closed_port  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(AaiError) as caught:
            await call(f"http://127.0.0.1:{server.server_port}", "/go")
    finally:
        server.shutdown()
        server.server_close()
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert f"127.0.0.1:{closed_port}" in caught.value.message
    assert "redirected" in caught.value.message
    assert caught.value.data["host"] == f"127.0.0.1:{closed_port}"


class Refusing(QuietHandler):
    def do_GET(self) -> None:
        self.send_json(403, b'{"message": "forbidden here"}')


class RedirectingTo(QuietHandler):
    def do_GET(self) -> None:
        target = self.server.target  # type: ignore[attr-defined]
        self.send_response(302 if self.path == "/go" else 403)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.mark.parametrize("where", ["another origin", "the app's origin"])
async def test_a_403_after_a_redirect_blames_the_app_credentials_only_where_they_were_sent(
    where: str,
) -> None:
    same = where == "the app's origin"
    with serving(Refusing, RedirectingTo) as (other, app):
        refusing = app if same else other
        app.target = f"http://127.0.0.1:{refusing.server_port}/{'refuse' if same else 'x'}"  # type: ignore[attr-defined]
        with pytest.raises(AaiError) as caught:
            await call(f"http://127.0.0.1:{app.server_port}", "/go")
    assert caught.value.code == ErrorCode.AUTH_DENIED
    if same:
        assert "The credentials lack permission" in caught.value.message
        assert "credentials_sent" not in caught.value.data
    else:
        assert "The credentials lack permission" not in caught.value.message
        assert f"redirected the call to http://127.0.0.1:{other.server_port}/x" in caught.value.message
        assert "does not send the app's credentials" in caught.value.message
        assert "forbidden here" in caught.value.message
        assert caught.value.data["credentials_sent"] is False


async def test_a_refusal_back_on_the_apps_origin_after_a_detour_is_not_called_another_origins() -> None:
    """The credentials stay behind once a redirect left the app's origin, even when a later one
    leads back there: the refusal is no verdict on them, and the app's own URL is not another
    origin."""
    with serving(RedirectingTo, RedirectingTo) as (app, other):
        app.target = f"http://127.0.0.1:{other.server_port}/go"  # type: ignore[attr-defined]
        other.target = f"http://127.0.0.1:{app.server_port}/refuse"  # type: ignore[attr-defined]
        with pytest.raises(AaiError) as caught:
            await call(f"http://127.0.0.1:{app.server_port}", "/go")
    assert caught.value.code == ErrorCode.AUTH_DENIED
    assert caught.value.data["credentials_sent"] is False
    assert "The credentials lack permission" not in caught.value.message
    assert f"127.0.0.1:{app.server_port}/refuse, another origin" not in caught.value.message
    assert (
        f"redirected the call to http://127.0.0.1:{other.server_port}/go, another origin"
        in caught.value.message
    )
    assert "not even back to the app's own origin" in caught.value.message
