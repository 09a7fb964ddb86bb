"""Gateway outcomes as MCP tool results: the only place errors become `isError` results.

Every result built here can be written as JSON: a success that cannot (text with a lone
surrogate, a number beyond float range; `Gateway.execute` refuses such answers before they get
here) raises ValueError, which the server reports as INTERNAL_ERROR; an error's own words
(often the app's) have each lone surrogate written out as its escape, in letters.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types

from ..descriptor.shown_text import escaped_hidden
from ..errors import AaiError, InternalError
from ..executors import ToolResult
from ..executors.answer_json import writable_text

logger = logging.getLogger(__name__)


def success(value: Any) -> types.CallToolResult:
    """The JSON result as compact text (no indentation: whitespace costs the agent's context and
    every byte is written, read and parsed again on the way), and as structured content when it
    is an object (the same value: when the text can be written, so can it). A string is the text
    itself. A `ToolResult` (an MCP server's own) is passed on as it is."""
    if isinstance(value, ToolResult):
        return passed_on(value)
    text = value if isinstance(value, str) else _compact_json(value)
    _check_writable(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=value if isinstance(value, dict) else None,
    )


def passed_on(result: ToolResult) -> types.CallToolResult:
    """An MCP server's tool result as it gave it: every content block (text, image, audio,
    resource_link, embedded resource), its structured content and `isError`."""
    return types.CallToolResult.model_validate(result.wire(), by_name=False)


def markdown(text: str) -> types.CallToolResult:
    """A text the gateway wrote (a guide, a search answer): what it quotes of a descriptor as it
    is (a property name, an enum value, a pattern) shows each character a reader cannot see as
    its escape (`shown_text.escaped_hidden`); its own texts were cleaned when they loaded."""
    text = escaped_hidden(text)
    _check_writable(text)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def failure(error: AaiError) -> types.CallToolResult:
    """`{"error": {"code", "message", "data"}}` as text, so the agent sees the code and the fix."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_error_text(error))],
        is_error=True,
    )


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _error_text(error: AaiError) -> str:
    try:
        text = json.dumps(error.to_payload(), ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # data circular or absurdly deep: the message alone
        text = json.dumps({"error": {"code": error.code.value, "message": error.message}}, ensure_ascii=False)
    return writable_text(escaped_hidden(text), json_text=True)  # escapes: the same JSON value


def _check_writable(text: str) -> None:
    """Raises UnicodeEncodeError (a ValueError) for text UTF-8 cannot encode: a lone surrogate."""
    if not text.isascii():
        text.encode("utf-8")


def crash(exc: BaseException, where: str) -> types.CallToolResult:
    """A bug, not bad input: logged with its traceback, reported without internals."""
    logger.error("unexpected error in %s", where, exc_info=exc)
    return failure(
        InternalError(
            f"internal error in the gateway while handling {where} ({type(exc).__name__}); "
            "the gateway log has the details",
            where=where,
        )
    )
