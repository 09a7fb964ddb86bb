#!/usr/bin/env python3
"""A tiny httpbin-style echo server for the `dev.aai.example.httpbin` descriptor (stdlib only).

    python3 examples/dev.aai.example.httpbin/server.py [--host 127.0.0.1] [--port 8765] [--quiet]

Endpoints (what the descriptor's three tools call, plus a little more):

- `/anything[/...]` (any method): echoes the request as JSON: method, url, args, headers,
  json (the parsed body, or null), data (the raw body as text), origin.
- `/status/{code}`: answers with that status (100-199 are refused with 400). Redirect codes
  point to `/anything`; error codes carry a small JSON body with a message.
- `/delay/{seconds}` (0-10): waits, then echoes like `/anything`.

`--port 0` picks a free port. The first line on stderr is `listening on http://HOST:PORT`.
SIGINT or SIGTERM stops the server cleanly (exit status 0).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_BODY_BYTES = 1024 * 1024
MAX_DELAY_SECONDS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
NO_BODY = frozenset({204, 304})


class EchoHandler(BaseHTTPRequestHandler):
    server_version = "aai-echo/1.0"
    protocol_version = "HTTP/1.1"
    quiet = False

    def do_GET(self) -> None:
        self.route()

    def do_POST(self) -> None:
        self.route()

    def do_PUT(self) -> None:
        self.route()

    def do_PATCH(self) -> None:
        self.route()

    def do_DELETE(self) -> None:
        self.route()

    def do_OPTIONS(self) -> None:
        self.route()

    def do_HEAD(self) -> None:
        self.route()

    def route(self) -> None:
        path = urlsplit(self.path).path
        parts = path.strip("/").split("/")
        try:
            body = self.read_body()
            if parts[0] == "anything":
                self.echo(body)
            elif parts[0] == "status" and len(parts) == 2:
                self.status(parts[1])
            elif parts[0] == "delay" and len(parts) == 2:
                self.delay(parts[1], body)
            else:
                self.send_json(404, {"error": "not found", "message": f"no endpoint {path}"})
        except ValueError as exc:
            self.send_json(400, {"error": "bad request", "message": str(exc)})

    def read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding"):
                self.close_connection = True  # chunked bodies are not read here
                raise ValueError("chunked request bodies are not supported; send Content-Length")
            return b""
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            raise ValueError(f"Content-Length must be a number up to {MAX_BODY_BYTES}")
        return self.rfile.read(int(length))

    def echo(self, body: bytes) -> None:
        self.send_json(200, self.echo_document(body))

    def echo_document(self, body: bytes) -> dict[str, Any]:
        query = urlsplit(self.path).query
        args = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(query, keep_blank_values=True).items()}
        text = body.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        host = self.headers.get("Host") or "localhost"
        return {
            "method": self.command,
            "url": f"http://{host}{self.path}",
            "args": args,
            "headers": dict(self.headers.items()),
            "json": parsed,
            "data": text,
            "origin": self.client_address[0],
        }

    def status(self, text: str) -> None:
        if not text.isdigit() or not 100 <= int(text) <= 599:
            raise ValueError(f"status must be a number from 100 to 599, not {text!r}")
        code = int(text)
        if code < 200:
            raise ValueError("1xx codes are interim responses and cannot be the final answer")
        if code in REDIRECTS:
            self.send_bytes(code, b"", "text/plain", {"Location": "/anything"})
        elif code in NO_BODY or code < 400:
            self.send_bytes(code, b"", "text/plain")
        else:
            self.send_json(code, {"error": _phrase(code), "message": f"you asked for status {code}"})

    def delay(self, text: str, body: bytes) -> None:
        try:
            seconds = float(text)
        except ValueError:
            raise ValueError(f"delay must be a number of seconds, not {text!r}") from None
        time.sleep(min(max(seconds, 0.0), MAX_DELAY_SECONDS))
        self.echo(body)

    def send_json(self, code: int, document: Any) -> None:
        payload = json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
        self.send_bytes(code, payload, "application/json")

    def send_bytes(
        self, code: int, payload: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        if code not in NO_BODY:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD" and code not in NO_BODY:
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        if not self.quiet:
            super().log_message(format, *args)


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "error"


class EchoServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def say(line: str) -> None:
    """Status lines go to stderr (stdout stays free)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="httpbin-style echo server for the AAI httpbin example")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--quiet", action="store_true", help="do not log each request to stderr")
    options = parser.parse_args(argv)

    handler = type("Handler", (EchoHandler,), {"quiet": options.quiet})
    try:
        server = EchoServer((options.host, options.port), handler)
    except OSError as exc:
        say(f"cannot listen on {options.host}:{options.port}: {exc}")
        return 1
    host, port = server.socket.getsockname()[:2]
    shown = f"[{host}]" if ":" in str(host) else host

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever() to return, so it must run on another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    say(f"listening on http://{shown}:{port}")
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
