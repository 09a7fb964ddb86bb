"""Gateway outcomes as MCP tool results: the only place errors become `isError` results."""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types

from ..errors import AaiError, ErrorCode

logger = logging.getLogger(__name__)


def success(value: Any) -> types.CallToolResult:
    """The JSON result as text, and as structured content when it is an object."""
    text = json.dumps(value, ensure_ascii=False, indent=2) if not isinstance(value, str) else value
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=value if isinstance(value, dict) else None,
    )


def markdown(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def failure(error: AaiError) -> types.CallToolResult:
    """`{"error": {"code", "message", "data"}}` as text, so the agent sees the code and the fix."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(error.to_payload(), ensure_ascii=False))],
        is_error=True,
    )


def crash(exc: BaseException, where: str) -> types.CallToolResult:
    """A bug, not bad input: logged with its traceback, reported without internals."""
    logger.error("unexpected error in %s", where, exc_info=exc)
    return failure(
        AaiError(
            f"internal error in the gateway while handling {where} ({type(exc).__name__}); "
            "the gateway log has the details",
            {"where": where},
            ErrorCode.INTERNAL_ERROR,
        )
    )
