"""What the tests' small HTTP servers (http.server on 127.0.0.1) share."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A test server's handler: it logs nothing, and answers JSON with `send_json`."""

    def send_json(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(*handlers: type[BaseHTTPRequestHandler]) -> Iterator[list[ThreadingHTTPServer]]:
    """A server on 127.0.0.1 per handler, each in a thread of its own, shut down at the end."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for handler in handlers]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
