"""What an MCP server's answer becomes: its tool result passed on as it is (`ToolResult`), or an
AAI error naming the app and the tool.

- A `CallToolResult` keeps every content block (text, image, audio, resource_link, embedded
  resource) as MCP writes it, its `structuredContent` and its `isError`: a tool that reports its
  own failure is a result, not a gateway error.
- An error response of the server is EXECUTION_FAILED with the server's code and message
  (`data.app_error_code`, `data.mcp_error`); an answer the gateway skipped for its size, one that
  is not a valid tool result, and structured content that does not match the tool's output schema
  are EXECUTION_FAILED saying so; a server that died during the call is EXECUTION_FAILED with its
  exit and the end of its stderr; a connection that failed is SERVICE_UNAVAILABLE.

Secrets the server was started with are scrubbed from all of it by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from ..errors import AaiError, AppReportedError, ExecutionFailedError, ServiceUnavailableError
from .base import ToolResult
from .mcp_launch import HttpLaunch
from .mcp_sessions import SessionEndedError, UpstreamSession, describe_exception
from .mcp_stdio import TOO_LONG_MARK, UNREADABLE_MARK
from .redaction import Scrubber

ERROR_SHOWN_CHARS = 2000
LIST_TOOLS = "tools/list"
SDK_SAMPLING_REFUSAL = "Sampling not supported"
"""What the SDK's client answers a sampling request with when it offers no sampling (the gateway
does not): in 2026-07-28 that refusal ends the call itself."""


def passed_on(result: types.CallToolResult, scrubber: Scrubber) -> ToolResult:
    content = [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in result.content]
    structured = result.structured_content
    return ToolResult(
        content=scrubber.value(content),
        structured_content=scrubber.value(structured) if structured is not None else None,
        is_error=bool(result.is_error),
    )


async def call_failure(exc: Exception, app_id: str, tool: str, session: UpstreamSession) -> AaiError | None:
    """The AAI error for what went wrong with tools/call; None for an error that is not the
    server's or the connection's (a gateway bug: the server reports it as INTERNAL_ERROR)."""
    where = _where(session)
    if isinstance(exc, AaiError):
        return exc
    if isinstance(exc, MCPError):
        return await _error_response(exc, app_id, tool, session)
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
        place = "/".join(str(part) for part in first.get("loc", ()))
        if tool == LIST_TOOLS:  # the SDK refuses a listing as a whole, for one bad tool
            return ExecutionFailedError(
                app_id,
                tool,
                "the MCP server answered tools/list with a listing the MCP client refuses "
                f"({place or 'the result'}: {first.get('msg')}); no tool of this server can be used "
                "through the gateway until the server lists valid tools",
                **where,
            )
        return ExecutionFailedError(
            app_id,
            tool,
            "the MCP server answered tools/call with something that is not a valid tool result "
            f"({place or 'the result'}: {first.get('msg')})",
            **where,
        )
    if isinstance(exc, RuntimeError):  # the SDK checks structured content against outputSchema
        return ExecutionFailedError(
            app_id, tool, f"the MCP server's result was refused: {_shown(session.scrub(str(exc)))}", **where
        )
    if isinstance(exc, SessionEndedError):
        return await died(app_id, tool, session, exc)
    if isinstance(exc, httpx2.HTTPError | OSError):
        session.stop()  # the next call connects again
        return ServiceUnavailableError(
            app_id, f"its MCP server could not be reached: {describe_exception(exc)}", tool=tool, **where
        )
    return None


async def _error_response(exc: MCPError, app_id: str, tool: str, session: UpstreamSession) -> AaiError:
    data = exc.data
    where = _where(session)
    message = _shown(session.scrub(exc.message))  # scrubbed first: a cut may fall inside a secret
    # The transport's own errors (mcp_stdio); a server can send these keys too, so only values
    # of the transport's kind are taken as such, and the message is cut as every other
    limit, reason = (
        (data.get(TOO_LONG_MARK), data.get(UNREADABLE_MARK)) if isinstance(data, dict) else (None, None)
    )
    if isinstance(limit, int):
        return ExecutionFailedError(app_id, tool, message, max_message_bytes=limit, **where)
    if isinstance(reason, str) and len(reason) <= ERROR_SHOWN_CHARS:
        return ExecutionFailedError(app_id, tool, message, reason=reason, **where)
    if exc.code == types.CONNECTION_CLOSED and _connection_ended(session):
        return await died(app_id, tool, session, exc)
    if exc.code == types.INVALID_REQUEST and exc.message == SDK_SAMPLING_REFUSAL:
        return ExecutionFailedError(
            app_id,
            tool,
            "the MCP server asked to use the client's language model (sampling/createMessage), which "
            "the gateway does not offer to the servers behind it; this tool cannot run through the gateway",
            **where,
        )
    details: dict[str, Any] = {"code": exc.code, "message": message}
    if data is not None:
        details["data"] = _shown_data(data, session.scrub)
    return AppReportedError(
        app_id,
        tool,
        f"the MCP server answered with error {exc.code}: {message}",
        str(exc.code),
        mcp_error=details,
        **where,
    )


async def died(
    app_id: str, tool: str, session: UpstreamSession, cause: BaseException
) -> ExecutionFailedError:
    """The server or the connection ended during the call; the session is stopped, so that the
    next call starts (or connects) again."""
    session.stop()
    if session.stdio is not None:
        with anyio.CancelScope(shield=True):
            await session.stdio.settle()
        what = (
            f"the MCP server ended during the call ({session.describe_end()}); the next call starts it again"
        )
    else:
        what = (
            f"the connection to the MCP server at {_host(session)} ended during the call "
            f"({describe_exception(cause)}); the next call connects again"
        )
    error = ExecutionFailedError(app_id, tool, what, **_where(session))
    _add_exit(error, session)
    return error


def start_failure(app_id: str, session: UpstreamSession, *, timed_out: bool) -> ServiceUnavailableError:
    """The server could not be started (or reached), or did not complete the handshake."""
    seconds = session.settings.start_seconds
    if timed_out:
        reason = f"its MCP server did not complete the MCP handshake within {seconds:g} s"
    elif session.stdio is not None:
        reason = "its MCP server could not be started"
    else:
        reason = f"its MCP server at {_host(session)} could not be reached"
    fix = (
        "check the app's execution settings in its aai.json (run the command in a terminal to see "
        "what it says), then retry"
        if session.stdio is not None
        else "check that the server runs and that execution.url in the app's aai.json is right, then retry"
    )
    error = ServiceUnavailableError(app_id, f"{reason} ({session.describe_end()}); {fix}", **_where(session))
    _add_exit(error, session)
    return error


def _add_exit(error: AaiError, session: UpstreamSession) -> None:
    if session.stdio is not None:
        if session.stdio.returncode is not None:
            error.data["exit_code"] = session.stdio.returncode
        tail = session.stdio.stderr_tail()
        if tail:
            error.data["stderr_tail"] = tail


def _connection_ended(session: UpstreamSession) -> bool:
    """Whether an error of code CONNECTION_CLOSED (-32000) is the SDK's word that the connection
    ended. That code is also JSON-RPC's generic "server error", which servers answer with: over
    stdio it is the SDK's only once the server's output ended or the session was stopped (a server
    that merely answered with it keeps running). Over HTTP the SDK makes it up for broken streams
    too, and the two cannot be told apart."""
    return session.stdio is None or not session.alive


def _where(session: UpstreamSession) -> dict[str, Any]:
    command = session.launch.command
    if command is not None:
        return {"transport": "stdio", "command": command}
    return {"transport": "streamable-http", "host": _host(session)}


def _host(session: UpstreamSession) -> str:
    """The server's host and port (never the rest of its URL, whose query may hold a token)."""
    transport = session.launch.transport
    return urlsplit(transport.url).netloc if isinstance(transport, HttpLaunch) else "?"


def _shown_data(data: Any, scrub: Callable[[str], str]) -> Any:
    """The `data` of a server's error as it is when its JSON is short, else that JSON scrubbed
    and cut (as text): an error is read by an agent, whose context a server must not fill."""
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return data if len(text) <= ERROR_SHOWN_CHARS else _shown(scrub(text))


def _shown(text: str) -> str:
    return text if len(text) <= ERROR_SHOWN_CHARS else text[:ERROR_SHOWN_CHARS] + "…"
