"""JSON-RPC messages on lines: cutting a byte stream into lines of bounded length, reading one
line as a message (or as the error to answer it with), and writing one message as a line.

The rules (see docs/errors.md, "Errors below MCP tool results"):

- A line is at most `limit` bytes; a longer one comes out as `TooLong` holding its start and its
  end, and is answered with Invalid Request carrying the request's id when those bytes show it
  (Python clients write `id` first, TypeScript ones last).
- A line that is not JSON is Parse error (-32700, id null); JSON that is not a JSON-RPC
  message is Invalid Request (-32600) with the request's id when it has a readable one. A
  request whose id is not a string or an integer (1.5, null, true…) is Invalid Request with id
  null: the SDK would take it for a notification and answer nothing.
- JSON that pydantic's parser refuses is read again with Python's: a lone surrogate escape
  (`"\\ud800"`, which JavaScript's JSON.stringify writes for a broken surrogate pair) reaches
  the server, where the gateway refuses it with INVALID_PARAMS naming the argument; nesting
  deeper than MAX_REQUEST_DEPTH levels or an integer too long to read is Invalid Request
  carrying the request's id.
- A message that cannot be written as JSON goes out as an error for the same request: for
  tools/call an `isError` tool result (INTERNAL_ERROR), else a JSON-RPC error.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

import mcp_types as types
import pydantic_core
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..errors import InternalError
from ..executors.answer_json import nested_deeper_than, writable_text
from ..executors.json_lines import ID_SEARCH_BYTES, TooLong, leading_members, trailing_members
from . import results

logger = logging.getLogger(__name__)

MAX_REQUEST_DEPTH: Final = 200  # levels of objects and arrays; pydantic's parser reads no deeper

# ---------------------------------------------------------------------------- reading messages


def read_message(line: bytes) -> SessionMessage | types.JSONRPCError:
    """The JSON-RPC message on one line, or the error to answer it with. NaN and Infinity are
    not JSON."""
    try:
        document = pydantic_core.from_json(line, allow_inf_nan=False)
    except ValueError as exc:
        reread = _reread(line, exc)
        if isinstance(reread, types.JSONRPCError):
            return reread
        document = reread
    try:
        message = types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError:
        return _error(_request_id(document), types.INVALID_REQUEST, f"Invalid Request: {_fault(document)}")
    if isinstance(message, types.JSONRPCNotification) and "id" in document:
        shown = json.dumps(document["id"], ensure_ascii=True)
        return _error(
            None,
            types.INVALID_REQUEST,
            f"Invalid Request: a request id is a string or an integer, not {shown[:100]}",
        )
    return SessionMessage(message)


class _NotJsonError(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotJsonError(f"{name} is not JSON")


def _reread(line: bytes, refusal: ValueError) -> Any:
    """The document pydantic's parser refused, read by Python's: it accepts lone surrogate
    escapes (passed on) and nesting up to its recursion limit. Or the error to answer with:
    Parse error, carrying the request's id when the line is JSON that the gateway does not
    read (nested deeper than MAX_REQUEST_DEPTH, an integer of thousands of digits) and its id
    can be read."""
    try:
        document = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, _NotJsonError):
        return _unreadable(None, refusal)
    except RecursionError:
        return _unreadable(_request_id_at_start(line[:ID_SEARCH_BYTES]), refusal, too_deep=True)
    except ValueError:  # an integer too long for int()
        return _unreadable(_request_id_at_start(line[:ID_SEARCH_BYTES]), refusal)
    if nested_deeper_than(document, MAX_REQUEST_DEPTH):
        return _unreadable(_request_id(document), refusal, too_deep=True)
    return document


def _unreadable(
    request_id: types.RequestId | None, refusal: ValueError, *, too_deep: bool = False
) -> types.JSONRPCError:
    return _error(
        request_id,
        types.PARSE_ERROR,
        f"Parse error: the line is not JSON ({refusal})"
        + (
            f"; the gateway reads at most {MAX_REQUEST_DEPTH} levels of objects and arrays"
            if too_deep
            else ""
        ),
        {"max_depth": MAX_REQUEST_DEPTH} if too_deep else None,
    )


def too_long_error(line: TooLong, limit: int) -> types.JSONRPCError:
    request_id = _request_id_at_start(line.start)
    return _error(
        _request_id_at_ends(line) if request_id is None else request_id,
        types.INVALID_REQUEST,
        f"Invalid Request: the message is longer than {limit} bytes, the most this gateway reads "
        "(its --max-message-bytes option); it was skipped unread",
        {"max_message_bytes": limit},
    )


def _error(
    request_id: types.RequestId | None, code: int, message: str, data: Any = None
) -> types.JSONRPCError:
    fields: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        fields["data"] = data
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(**fields))


def _fault(document: Any) -> str:
    if isinstance(document, list):
        return "a JSON array (a batch); send one JSON-RPC message per line"
    if not isinstance(document, dict):
        return "a JSON-RPC message is a JSON object"
    if document.get("jsonrpc") != "2.0":
        return 'a JSON-RPC 2.0 message needs "jsonrpc": "2.0"'
    return 'not a JSON-RPC request (string "method", string or integer "id"), notification or response'


def _request_id(document: Any) -> types.RequestId | None:
    """The id of what looks like a request; None for anything else (answering a malformed
    response with its id would fail the client's own request of that id)."""
    if not isinstance(document, dict) or "method" not in document:
        return None
    found = document.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    return found


def _request_id_at_start(start: bytes) -> types.RequestId | None:
    """The id of a request from the first bytes of its line, when both its `id` and its
    `method` are members of the top-level object there (clients write them before `params`)."""
    found = leading_members(start, frozenset({"id", "method"}))
    return _request_id(found) if {"id", "method"} <= found.keys() else None


def _request_id_at_ends(line: TooLong) -> types.RequestId | None:
    """The id of a request whose line ends with its `id` and begins with its `method` (the
    TypeScript SDK writes `{"method": …, "params": …, "jsonrpc": "2.0", "id": 7}`)."""
    found = trailing_members(line.end, frozenset({"id", "method"})) | leading_members(
        line.start, frozenset({"method"})
    )
    return _request_id(found) if {"id", "method"} <= found.keys() else None


def encode_message(message: types.JSONRPCMessage, method: str | None = None) -> bytes | None:
    """The message as one line. One that cannot be written (a lone surrogate, pydantic giving up
    on a very deep value) becomes an error for the same request, so the client is not left
    waiting: an `isError` tool result for tools/call (`method`), else a JSON-RPC error."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except (ValueError, RecursionError) as exc:
        logger.error("a %s could not be written as JSON: %s", type(message).__name__, exc)
        replacement = _writable_replacement(message, method, exc)
        if replacement is None:
            return None
        text = replacement.model_dump_json(by_alias=True, exclude_unset=True)
    return text.encode("utf-8") + b"\n"


def _writable_replacement(
    message: types.JSONRPCMessage, method: str | None, exc: BaseException
) -> types.JSONRPCMessage | None:
    reason = writable_text(f"{type(exc).__name__}: {exc}")[:500]
    if isinstance(message, types.JSONRPCResponse) and method == "tools/call":
        failed = results.failure(
            InternalError(
                f"internal error in the gateway: the tool's result could not be written as JSON ({reason})",
                where="tools/call",
            )
        )
        result = failed.model_dump(by_alias=True, mode="json", exclude_none=True)
        return types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
    if isinstance(message, types.JSONRPCResponse):
        return _error(
            message.id, types.INTERNAL_ERROR, f"Internal error: the result is not writable as JSON ({reason})"
        )
    if isinstance(message, types.JSONRPCError):  # the SDK quoting what the client sent, say
        data = message.error.data
        shown = writable_text(data) if isinstance(data, str) else None
        return _error(message.id, message.error.code, writable_text(message.error.message), shown)
    return None  # a request or notification of the server's own: dropped, and logged
