"""An HTTP server that echoes each request back with the status its path asks for, the way a
careless API quotes what it refused: `/status/401` answers 401 with the request in a JSON body
(message, URL, headers, and the whole request head base64-encoded); `/text/500` the same as plain
text; `/straddle/401` puts the `X-Api-Key` value it received right across the first thousand
characters of a text body (where an error preview is cut)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREVIEW_EDGE = 1000


class _Handler(BaseHTTPRequestHandler):
    server: EchoServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._echo()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._echo()

    def _echo(self) -> None:
        self.server.received.append(self.path)
        kind, _, rest = self.path.lstrip("/").partition("/")
        status = int(rest.split("?", 1)[0].split("/", 1)[0] or 200)
        head = f"{self.requestline}\r\n{self.headers}".encode("latin-1")
        headers = dict(self.headers.items())
        if kind == "straddle":
            key = self.headers.get("X-Api-Key", "")
            self._send(status, "text/plain", ("x" * (PREVIEW_EDGE - 8) + key + "\n").encode())
        elif kind == "text":
            self._send(status, "text/plain", head)
        else:
            body = {
                "message": f"refused {self.command} {self.path} with {' '.join(headers.values())}",
                "url": f"http://{self.headers.get('Host')}{self.path}",
                "headers": headers,
                "raw_b64": base64.b64encode(head).decode("ascii"),
            }
            self._send(status, "application/json", json.dumps(body).encode())

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class EchoServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[str] = []
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> EchoServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
