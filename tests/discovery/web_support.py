"""Support for the web discovery tests: a real HTTPS server on 127.0.0.1, a test CA, a clock,
descriptor builders and network backends that record or redirect connections."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpcore
import trustme

from aai_gateway.discovery.web import WebFetchPolicy

# --------------------------------------------------------------------------- TLS


@dataclass(frozen=True)
class LocalCa:
    """A private CA (trusted through `WebFetchPolicy.ca_file`) and a server certificate for
    127.0.0.1, localhost, ::1 and any `extra_names` (host names a test resolver points at the
    server)."""

    server_context: ssl.SSLContext
    ca_file: str

    @classmethod
    def create(cls, directory: Path, *extra_names: str) -> LocalCa:
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1", "localhost", "::1", *extra_names)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        ca_file = directory / "test-ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        return cls(context, str(ca_file))

    def policy(self, **overrides: Any) -> WebFetchPolicy:
        """The loopback test server needs `allow_private`; everything else is the default."""
        settings: dict[str, Any] = {"allow_private": True, "ca_file": self.ca_file, **overrides}
        return WebFetchPolicy(**settings)


# --------------------------------------------------------------------------- the server


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_length: bool = True  # False: the body ends when the connection closes
    drip_seconds: float | None = None  # send the body one byte at a time, this far apart
    delay_seconds: float = 0.0  # wait before sending anything


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Route]
    requests: list[str]
    connections: int
    stopping: threading.Event

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections += 1
        return True


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: pytest shows stderr of failing tests

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        route = self.server.routes.get(self.path, Route(status=404, body=b"not found"))
        try:
            self._answer(route)
        except (OSError, ssl.SSLError):
            return  # the client gave up (timeouts, size limits): expected in these tests

    def _answer(self, route: Route) -> None:
        if self.server.stopping.wait(route.delay_seconds):
            return
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        if route.content_length:
            self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        if route.drip_seconds is None:
            self.wfile.write(route.body)
            return
        for index in range(len(route.body)):
            self.wfile.write(route.body[index : index + 1])
            self.wfile.flush()
            if self.server.stopping.wait(route.drip_seconds):
                return


class HttpsServer:
    """A threaded HTTPS server on 127.0.0.1 with a route table the test fills in."""

    def __init__(self, ca: LocalCa) -> None:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.socket = ca.server_context.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
        server.routes, server.requests, server.connections = {}, [], 0
        server.stopping = threading.Event()
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._running = False

    @property
    def port(self) -> int:
        port: int = self._server.server_address[1]
        return port

    @property
    def origin(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def routes(self) -> dict[str, Route]:
        return self._server.routes

    @property
    def requests(self) -> list[str]:
        return self._server.requests

    @property
    def connections(self) -> int:
        return self._server.connections

    def serve(self, path: str, document: Any, **route: Any) -> None:
        """Answer `path` with `document` as JSON (bytes are sent as they are)."""
        body = document if isinstance(document, bytes) else json.dumps(document).encode("utf-8")
        self.routes[path] = Route(body=body, headers={"Content-Type": "application/json"}, **route)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = Route(status=status, headers={"Location": location})

    def start(self) -> HttpsServer:
        self._thread.start()
        self._running = True
        return self

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --------------------------------------------------------------------------- time


class Clock:
    """Epoch seconds that tests move by hand."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# --------------------------------------------------------------------------- network backends


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Records every connection attempt and makes none."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        raise httpcore.ConnectError("the recording backend never connects")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class RebindingBackend(RecordingBackend):
    """Whatever address it is asked for, connects to 127.0.0.1:`port`: what a DNS answer that
    changes between the check and the connection would do."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self._port = port

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        return await httpcore.AnyIOBackend().connect_tcp("127.0.0.1", self._port, timeout=timeout)


class DisguisedStream(httpcore.AsyncNetworkStream):
    """A real connection that reports another peer address (as a routed connection would)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, peer: tuple[str, int]) -> None:
        self._inner = inner
        self._peer = peer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
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
        return DisguisedStream(await self._inner.start_tls(ssl_context, server_hostname, timeout), self._peer)

    def get_extra_info(self, info: str) -> Any:
        return self._peer if info == "server_addr" else self._inner.get_extra_info(info)


class DisguisingBackend(RecordingBackend):
    """Connects `public_address` to the test server on 127.0.0.1 and reports the public address
    as the peer; refuses to connect anywhere else. Stands in for a public host."""

    def __init__(self, port: int, public_address: str) -> None:
        super().__init__()
        self._port = port
        self._public = public_address

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        if host != self._public:
            raise httpcore.ConnectError(f"the disguising backend only connects {self._public}")
        stream = await httpcore.AnyIOBackend().connect_tcp("127.0.0.1", self._port, timeout=timeout)
        return DisguisedStream(stream, (self._public, port))


def fixed_resolver(*addresses: str) -> Any:
    """A resolver answering every name with `addresses`, and the names it was asked for."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(addresses)

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


# --------------------------------------------------------------------------- descriptors


def web_descriptor(
    base_url: str,
    *,
    app_id: str = "com.example.webtest",
    name: str = "Web Test",
    aliases: tuple[str, ...] = ("webtest",),
    version: str = "1.0.0",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A valid dialect-C descriptor for platform `web` with an `http` binding."""
    return {
        "schemaVersion": "1.0",
        "version": version,
        "platform": "web",
        "app": {
            "id": app_id,
            "name": {"en": name},
            "defaultLang": "en",
            "description": f"{name} for tests",
            "aliases": list(aliases),
        },
        "execution": {"type": "http", "baseUrl": base_url},
        "tools": tools
        if tools is not None
        else [
            {
                "name": "list_pages",
                "description": "List pages",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
                "execution": {"path": "/pages", "method": "GET"},
            }
        ],
    }


def wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)
