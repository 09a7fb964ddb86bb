"""What an app answered over HTTP: its body as a result, or the error its status stands for.

- Status codes map to AAI codes as docs/errors.md says; `data` holds the status, the method, the
  URL without query string, and the start of the body (`BODY_PREVIEW_CHARS`); the message quotes
  the app's own words from a JSON error body. Both are scrubbed of the call's credentials before
  they are cut short (a secret cut in half would slip past the scrubber); a JSON body is
  scrubbed after parsing (its escapes gone, numbers included) and written again for the preview.
- Output: `output_parser` or, without one, JSON when the body parses as JSON, else text; an
  empty body is None.
"""

from __future__ import annotations

import codecs
import http
import json
import re
from typing import Any, Final

import httpx

from ..discovery.web_transport import public_url
from ..errors import ErrorCode, ExecutionFailedError, HttpStatusError
from .answer_json import MAX_ANSWER_DEPTH, loads_answer, nested_deeper_than, strict_loads
from .base import Invocation
from .redaction import Scrubber

BODY_PREVIEW_CHARS: Final = 1000
MESSAGE_CHARS: Final = 300
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_PHRASES: Final = {s.value: s.phrase for s in http.HTTPStatus}
_HINTS: Final = {
    ErrorCode.AUTH_REQUIRED: "The app needs credentials: its descriptor's auth section says which to store",
    ErrorCode.AUTH_EXPIRED: "The stored credentials were refused and could not be refreshed; sign in again",
    ErrorCode.AUTH_DENIED: "The credentials lack permission for this operation",
    ErrorCode.RATE_LIMITED: "Wait before retrying (see retry_after when the app sent it)",
}

STATUS_CODES: Final[dict[int, ErrorCode]] = {
    400: ErrorCode.INVALID_REQUEST,
    401: ErrorCode.AUTH_REQUIRED,
    403: ErrorCode.AUTH_DENIED,
    404: ErrorCode.NOT_FOUND,
    429: ErrorCode.RATE_LIMITED,
    500: ErrorCode.INTERNAL_ERROR,
    501: ErrorCode.NOT_IMPLEMENTED,
    503: ErrorCode.SERVICE_UNAVAILABLE,
}


def error_code_for_status(status: int, *, refreshable_auth: bool = False) -> ErrorCode:
    """docs/errors.md: 401 is AUTH_EXPIRED when the credentials could have been refreshed (the
    auth flow says so with a true `refreshable` attribute), else AUTH_REQUIRED; other 4xx are
    INVALID_REQUEST, other 5xx SERVICE_UNAVAILABLE."""
    if status == 401 and refreshable_auth:
        return ErrorCode.AUTH_EXPIRED
    if status in STATUS_CODES:
        return STATUS_CODES[status]
    if 400 <= status < 500:
        return ErrorCode.INVALID_REQUEST
    if 500 <= status < 600:
        return ErrorCode.SERVICE_UNAVAILABLE
    return ErrorCode.EXECUTION_FAILED


def parse_body(
    body: bytes,
    response: httpx.Response,
    parser: str | None,
    *,
    app_id: str,
    tool: str,
    scrubber: Scrubber | None = None,
) -> Any:
    """`json`: the parsed body (EXECUTION_FAILED if it is not JSON); `text`: the body as text;
    no parser: JSON when the content type says so or the body parses, else text. Empty: None.
    `scrubber` cleans the body quoted in an error before it is cut short."""
    if not body:
        return None
    content_type = response.headers.get("content-type")
    if parser == "text":
        return decode_text(body, response)
    try:
        return loads_answer(body, app_id=app_id, tool=tool)
    except ValueError as exc:
        if parser == "json":
            raise ExecutionFailedError(
                app_id,
                tool,
                f"the app's answer is not JSON ({exc}); the tool declares output_parser 'json'",
                content_type=content_type,
                body=_preview((scrubber or Scrubber(())).text(decode_text(body, response))),
            ) from exc
    return decode_text(body, response)  # no parser declared and not JSON (whatever the content type)


def decode_text(body: bytes, response: httpx.Response) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    return body.decode(encoding, errors="replace")


def status_error(
    invocation: Invocation,
    response: httpx.Response,
    body: bytes,
    scrubber: Scrubber,
    *,
    left_origin_at: httpx.URL | None = None,
) -> HttpStatusError:
    """The error for a status that is not success. A JSON body is parsed and scrubbed value by
    value (numbers too), then written again for the preview; other bodies are scrubbed as
    text. Either way before anything is cut short (a secret cut in half would slip through).
    `left_origin_at`: where a redirect first took the call off the app's origin; the app's
    credentials are not sent there nor after it, so a refusal then says nothing of them."""
    app_id, tool = invocation.app.id, invocation.tool.name
    status = response.status_code
    credentials_sent = left_origin_at is None
    refreshable = credentials_sent and bool(getattr(invocation.http_auth, "refreshable", False))
    code = error_code_for_status(status, refreshable_auth=refreshable)
    document = _json_document(body)
    if document is not None:
        document = scrubber.value(document)
        text = _without_surrogates(json.dumps(document, ensure_ascii=False))
    else:
        text = scrubber.text(decode_text(body, response)) if body else ""
    server_message = _server_message(document)
    reason = response.reason_phrase or _PHRASES.get(status, "")
    message = f"{app_id} {tool}: {response.url.host} answered HTTP {status} {reason}".rstrip()
    if server_message:
        message += f": {_one_line(server_message)[:MESSAGE_CHARS]}"
    if left_origin_at is not None and code in _HINTS and code != ErrorCode.RATE_LIMITED:
        if _origin(response.url) == _origin(left_origin_at):
            message += (
                f". The app redirected the call to {public_url(response.url)}, another origin, where "
                "the gateway does not send the app's credentials: this refusal is that host's, not a "
                "verdict on the stored credentials"
            )
        else:  # further on: back on the app's origin, or a third one
            message += (
                f". The app redirected the call to {public_url(left_origin_at)}, another origin, after "
                "which the gateway sends the app's credentials nowhere, not even back to the app's own "
                f"origin: this refusal by {response.url.host} is not a verdict on the stored credentials"
            )
    elif code in _HINTS:
        message += f". {_HINTS[code]}"
    data: dict[str, Any] = {
        "app": app_id,
        "tool": tool,
        "status": status,
        "method": response.request.method,
        "url": public_url(response.url),
    }
    if not credentials_sent:
        data["credentials_sent"] = False
    if text:
        data["body"] = _preview(text)
    retry_after = response.headers.get("retry-after")
    if retry_after and status in (429, 503):
        data["retry_after"] = retry_after[:100]
    return HttpStatusError(message, data, code, status)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port  # httpx leaves a scheme's default port out


def _json_document(body: bytes) -> Any:
    """The body parsed as JSON, or None when it is not JSON (or nested too deep to pass on)."""
    if not body:
        return None
    try:
        document = strict_loads(body)
    except (ValueError, RecursionError):
        return None
    return None if nested_deeper_than(document, MAX_ANSWER_DEPTH) else document


def _server_message(document: Any) -> str | None:
    """The app's own words from a JSON error body (already scrubbed): `message`, `error` or
    `detail`."""
    if not isinstance(document, dict):
        return None
    for key in ("message", "error", "detail"):
        value = document.get(key)
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            value = value["message"]
        if isinstance(value, str) and value.strip():
            description = document.get("error_description")
            if key == "error" and isinstance(description, str) and description.strip():
                return _without_surrogates(f"{value}: {description}")
            return _without_surrogates(value)
        if isinstance(value, list | dict) and value:
            return _without_surrogates(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return None


def _without_surrogates(text: str) -> str:
    """Lone surrogates (JSON may escape them, UTF-8 cannot carry them) as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _preview(text: str) -> str:
    return text[:BODY_PREVIEW_CHARS] + ("…" if len(text) > BODY_PREVIEW_CHARS else "")
