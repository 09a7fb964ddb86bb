"""The connection pool under the HTTP executor's clients: httpx's own, made cheap to keep busy.

Each time a request enters or leaves httpcore's pool (twice per call), the pool asks every idle
connection whether the server has closed it (`get_extra_info("is_readable")`). httpcore's anyio
stream answers by building anyio's whole table of socket attributes (a `getpeername` system call
among them) before it polls the socket. With 32 calls in flight there are up to 32 idle
connections to ask each time: measured, ~0.4 ms of CPU per call, nearly a third of what httpx
cost at that load. `CheapChecksBackend` wraps the streams of another backend and answers the
question with one `poll()` on the socket, which it looks up once per connection; everything
else goes to the wrapped stream as it is (reads, writes, TLS, the peer address the web network
rules check).

httpx offers no way to choose the network backend of the pool it builds, so `pooled_transport`
builds the pool the way httpx does and puts it where httpx keeps it (`_pool`, as
discovery/web_transport.py does for the web network rules; tests/test_private_apis.py and
tests/executors/test_http_pool.py check that httpx still sends through it).
"""

from __future__ import annotations

import select
import socket
import ssl
import sys
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from ..discovery.web_transport import connection_pool


class CheapChecksStream(httpcore.AsyncNetworkStream):
    """A connection of the wrapped backend whose `is_readable` is one poll of its socket."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109 (httpcore's interface)
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        return CheapChecksStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return readable(self._socket)
        return self._inner.get_extra_info(info)  # a stream without a socket (tests) answers itself


class CheapChecksBackend(httpcore.AsyncNetworkBackend):
    """Connects through `inner` (httpcore's anyio backend by default) and wraps each connection
    in a `CheapChecksStream`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return CheapChecksStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return CheapChecksStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def readable(sock: socket.socket) -> bool:
    """Whether reading `sock` would not block: data, or the end the server sent when it closed
    an idle connection. A closed socket counts as readable (its next read ends), as in httpcore."""
    descriptor = sock.fileno()
    if descriptor < 0:
        return True
    if sys.platform == "win32":  # pragma: no cover - Windows has no poll()
        ready, _, _ = select.select([descriptor], [], [], 0)
        return bool(ready)
    poller = select.poll()
    poller.register(descriptor, select.POLLIN)
    return bool(poller.poll(0))


def pooled_transport(
    verify: ssl.SSLContext, limits: httpx.Limits, network_backend: httpcore.AsyncNetworkBackend
) -> httpx.AsyncHTTPTransport:
    """httpx's transport (HTTP/1.1, no proxy, nothing read from the environment) over a pool
    whose connections come from `network_backend`."""
    transport = httpx.AsyncHTTPTransport(verify=verify, trust_env=False, limits=limits)
    transport._pool = connection_pool(verify, limits, network_backend)  # httpx keeps its pool here
    return transport
