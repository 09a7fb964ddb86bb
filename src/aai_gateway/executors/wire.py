"""The JSON request/response of stdio adapters, DBus and COM `Execute`, and Apple Events.

See docs/architecture.md, "Wire formats".

request:  {"version": "1.0", "request_id": "…", "tool": "…", "params": {…}}
response: {"version": "1.0", "request_id": "…", "status": "success", "result": …}
      or  {"version": "1.0", "request_id": "…", "status": "error", "error": {"code": "…", "message": "…"}}
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..errors import AppReportedError, ExecutionFailedError
from .answer_json import loads_answer

WIRE_VERSION = "1.0"

# What `str.splitlines()` (and so many a line reader) splits on besides \n and \r, and that
# `json.dumps` leaves raw when it keeps non-ASCII text: written as \uXXXX escapes instead.
# (\v \f \x1c \x1d \x1e are below U+0020, which JSON always escapes.)
_LINE_BREAKING_ESCAPES: Final = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def encode_request(request_id: str, tool: str, params: dict[str, Any]) -> str:
    """The request as one line of JSON (see `json_line`)."""
    return json_line({"version": WIRE_VERSION, "request_id": request_id, "tool": tool, "params": params})


def json_line(message: Any) -> str:
    """One line of JSON that every line splitter sees as one line: control characters are
    escaped by JSON, and so are U+0085, U+2028 and U+2029, which only occur inside strings,
    where an escape means the same character. Used for every newline-delimited JSON the
    gateway writes to an app (stdio adapters, ACP agents)."""
    line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _LINE_BREAKING_ESCAPES:
        line = line.replace(raw, escaped)
    return line


def decode_response(text: str | bytes, *, app_id: str, tool: str, request_id: str) -> Any:
    """The result of a success response; raises AaiError for an error response or garbage."""
    try:
        response = loads_answer(text, app_id=app_id, tool=tool)
    except ValueError as exc:
        raise ExecutionFailedError(
            app_id,
            tool,
            f'the app\'s answer is not JSON ({exc}); expected {{"status": "success", "result": ...}}',
            output_start=_preview(text),
        ) from exc
    if not isinstance(response, dict) or response.get("status") not in ("success", "error"):
        raise ExecutionFailedError(
            app_id,
            tool,
            'the app\'s answer lacks "status": "success" or "error"',
            output_start=_preview(text),
        )
    answered_id = response.get("request_id")
    if answered_id is not None and answered_id != request_id:
        raise ExecutionFailedError(
            app_id,
            tool,
            f"the app answered request {answered_id!r}, not {request_id!r}",
        )
    if response["status"] == "success":
        return response.get("result")
    error = response.get("error")
    if not isinstance(error, dict):
        error = {"message": str(error)}
    message = str(error.get("message") or "the app reported an error without a message")
    code = error.get("code")
    raise AppReportedError(app_id, tool, message, str(code) if code is not None else None)


def _preview(text: str | bytes, limit: int = 200) -> str:
    shown = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return shown[:limit] + ("…" if len(shown) > limit else "")
