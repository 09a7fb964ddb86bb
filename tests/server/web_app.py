"""A web app for end-to-end tests: HTTPS on 127.0.0.1 (test CA), its aai.json at the well-known
path, and an API that answers only with the right API key."""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.discovery.web_support import LocalCa

APP_ID = "dev.test.webnotes"
API_KEY = "key-9f8e7d6c5b4a"


def descriptor(origin: str, app_id: str = APP_ID) -> dict[str, Any]:
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {
            "id": app_id,
            "name": {"en": "Web Notes", "zh-CN": "网络笔记"},
            "defaultLang": "en",
            "description": "Notes kept on a web service",
            "aliases": ["webnotes"],
        },
        "execution": {"type": "http", "baseUrl": f"{origin}/api"},
        "auth": {
            "type": "apiKey",
            "apiKey": {
                "location": "header",
                "name": "X-Api-Key",
                "obtainUrl": f"{origin}/settings/keys",
                "instructions": {"short": "Create a key under Settings > Keys"},
            },
        },
        "tools": [
            {
                "name": "whoami",
                "description": "Who the key belongs to",
                "parameters": {"type": "object", "properties": {}},
                "execution": {"path": "/whoami", "method": "GET"},
            }
        ],
    }


class _Handler(BaseHTTPRequestHandler):
    server: WebAppServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        owner = self.server
        owner.requests.append((self.path, self.headers.get("X-Api-Key")))
        if self.path == "/.well-known/aai.json" and owner.serve_descriptor:
            self._json(200, descriptor(owner.origin, owner.app_id))
        elif self.path == "/api/whoami":
            if self.headers.get("X-Api-Key") == API_KEY:
                self._json(200, {"user": "alice"})
            else:
                self._json(401, {"message": "missing or wrong API key"})
        else:
            self._json(404, {"message": "not found"})

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class WebAppServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ca: LocalCa, app_id: str = APP_ID) -> None:
        self.app_id = app_id
        super().__init__(("127.0.0.1", 0), _Handler)
        self.socket = ca.server_context.wrap_socket(self.socket, server_side=True)
        self.requests: list[tuple[str, str | None]] = []
        self.serve_descriptor = True
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def origin(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"

    def start(self) -> WebAppServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def unused(_: ssl.SSLContext) -> None:
    """(keeps the ssl import meaningful for readers: the socket above is TLS)"""
