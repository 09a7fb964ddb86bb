"""Compressed answers: content codings are undone a bounded piece at a time, so a tiny body that
expands enormously (a gzip bomb, codings stacked) is refused without ever being held in memory,
and honest gzip and deflate bodies still arrive exactly."""

from __future__ import annotations

import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.executors.conftest import c_http_app, c_tool, invocation

pytestmark = pytest.mark.anyio

EXPANDED_BYTES = 64 * 1024 * 1024
LIMIT = 1024 * 1024
PEAK_ALLOWED = 16 * 1024 * 1024


def gzip_of(pieces: Iterator[bytes] | list[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join([*(compressor.compress(p) for p in pieces), compressor.flush()])


def deflate_of(data: bytes, *, raw: bool = False) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def bomb() -> bytes:
    """Well under a kilobyte on the wire, EXPANDED_BYTES of zeros once both codings are undone."""
    return gzip_of([gzip_of(b"\0" * (1024 * 1024) for _ in range(EXPANDED_BYTES // (1024 * 1024)))])


ANSWERS: dict[str, tuple[int, str, bytes]] = {}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/accepted":  # what the client asked for
            ANSWERS["/accepted"] = (200, "identity", f'"{self.headers.get("Accept-Encoding")}"'.encode())
        status, coding, body = ANSWERS[self.path]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    ANSWERS["/bomb"] = (200, "gzip, gzip", bomb())
    ANSWERS["/bomb-error"] = (500, "gzip, gzip", ANSWERS["/bomb"][2])
    document = b'{"items": ["' + b"x" * 300_000 + b'"], "ok": true}'
    ANSWERS["/gzip"] = (200, "gzip", gzip_of([document]))
    ANSWERS["/deflate"] = (200, "deflate", deflate_of(document))
    ANSWERS["/raw-deflate"] = (200, "deflate", deflate_of(document, raw=True))
    ANSWERS["/stacked"] = (200, "deflate, gzip", gzip_of([deflate_of(document)]))
    ANSWERS["/broken"] = (200, "gzip", b"\x1f\x8b\x08\x00not gzip at all")
    ANSWERS["/unasked"] = (200, "x-unknown-coding", document)  # httpx passes it as it is
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


async def call(server_url: str, path: str) -> Any:
    app = c_http_app(server_url, [c_tool("fetch", path, "GET", params=())])
    executor = HttpExecutor(max_response_bytes=LIMIT)
    try:
        return await executor.execute(invocation(app, "fetch", {}))
    finally:
        await executor.aclose()


@pytest.mark.parametrize("path", ["/bomb", "/bomb-error"])
async def test_a_tiny_body_that_expands_enormously_is_refused_without_being_expanded_in_memory(
    server_url: str, path: str
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(AaiError) as caught:
            await call(server_url, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = ErrorCode.EXECUTION_FAILED if path == "/bomb" else ErrorCode.INTERNAL_ERROR
    assert caught.value.code == expected
    assert peak < PEAK_ALLOWED, f"{peak} bytes held for a {len(ANSWERS[path][2])}-byte answer"


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/raw-deflate", "/stacked"])
async def test_gzip_and_deflate_bodies_arrive_decoded_exactly(server_url: str, path: str) -> None:
    assert await call(server_url, path) == {"items": ["x" * 300_000], "ok": True}


async def test_a_body_that_does_not_decode_as_its_coding_is_an_execution_failure_naming_the_app(
    server_url: str,
) -> None:
    with pytest.raises(AaiError) as caught:
        await call(server_url, "/broken")
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert "dev.test.http" in str(caught.value) and "fetch" in str(caught.value)


async def test_the_gateway_asks_only_for_the_codings_it_undoes_and_leaves_others_to_httpx(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # httpx asks for brotli and zstd too where their libraries are installed
    monkeypatch.setattr(httpx._client, "ACCEPT_ENCODING", "gzip, deflate, br, zstd")

    assert await call(server_url, "/accepted") == "gzip, deflate"
    assert await call(server_url, "/unasked") == {"items": ["x" * 300_000], "ok": True}
