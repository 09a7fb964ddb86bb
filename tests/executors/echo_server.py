"""An HTTP server that echoes each request back with the status its path asks for, the way a
careless API quotes what it refused: `/status/401` answers 401 with the request in a JSON body
(message, URL, headers, and the whole request head base64-encoded); `/text/500` the same as plain
text; `/straddle/401` puts the `X-Api-Key` value it received right across the first thousand
characters of a text body (where an error preview is cut); `/form/401/<form>` quotes it in one
of the escaped forms of `FORMS` (.NET or Go JSON, HTML, a URL inside a URL, ...); `/number/200`
echoes it as a JSON number."""

from __future__ import annotations

import base64
import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

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
        elif kind == "form":
            form = rest.split("?", 1)[0].split("/")[1]
            self._send(status, *_in_form(form, self._key()))
        elif kind == "number":
            answer = {"error": "bad key", "key": int(self._key())}
            self._send(status, "application/json", json.dumps(answer).encode())
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

    def _key(self) -> str:
        """The `X-Api-Key` header as the client wrote it (http.server reads headers as Latin-1)."""
        return self.headers.get("X-Api-Key", "").encode("latin-1").decode("utf-8")

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


# --------------------------------------------------------------------------- escaped echoes


def _dotnet_json(value: Any) -> str:
    """JSON as .NET's System.Text.Json writes it by default: `+ & < > ' and the backtick`, and
    everything beyond ASCII, as upper-case `\\uXXXX` (surrogate pairs beyond 16 bits)."""
    out = []
    for c in json.dumps(value, ensure_ascii=False):
        if c in "+&<>'`" or ord(c) > 0x7E:
            data = c.encode("utf-16-be")
            out += [f"\\u{int.from_bytes(data[i : i + 2], 'big'):04X}" for i in range(0, len(data), 2)]
        else:
            out.append(c)
    return "".join(out)


def _go_json(value: Any) -> str:
    """JSON as Go's encoding/json writes it: `& < >` as `\\u0026 \\u003c \\u003e`."""
    return json.dumps(value).replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _in_form(form: str, key: str) -> tuple[str, bytes]:
    """(content type, body) of an error page that quotes `key` the way `form` says. Every body
    but `dotnet-json-body` is text that is not JSON, so the gateway must find the key in text."""
    request = {"error": "refused", "key": key}
    texts = {
        "dotnet-json": "request rejected: " + _dotnet_json(request),
        "go-json": "request rejected: " + _go_json(request),
        "html": f"<p>Key {html.escape(key)} refused</p>",
        "html-twice": f"<p>Key {html.escape(html.escape(key))} refused</p>",
        "html-numeric": "<p>Key " + "".join(f"&#x{ord(c):X};" for c in key) + " refused</p>",
        "next-url": "Login required: https://login.example/?next="
        + quote("https://app.example/x?key=" + quote(key, safe=""), safe=""),
        "json-in-json": "error " + json.dumps({"detail": json.dumps(request)}),
        "json-in-html": f"<pre>{html.escape(json.dumps(request))}</pre>",
        "bytes-repr": f"Illegal header value {('Key ' + key).encode()!r}",
        "ascii-repr": f"bad key {key!a}",
    }
    if form == "dotnet-json-body":
        return "application/json", _dotnet_json(request).encode()
    if form == "latin1-misread":  # UTF-8 bytes declared as Latin-1
        return "text/plain; charset=iso-8859-1", f"bad key {key}".encode()
    return "text/html; charset=utf-8", texts[form].encode()


FORMS = [
    "dotnet-json",
    "dotnet-json-body",
    "go-json",
    "html",
    "html-twice",
    "html-numeric",
    "next-url",
    "json-in-json",
    "json-in-html",
    "bytes-repr",
    "ascii-repr",
    "latin1-misread",
]
"""The forms `/form/<status>/<form>` quotes the `X-Api-Key` header in."""
