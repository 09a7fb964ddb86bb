"""Errors of running an operation: the app did not answer in time, could not be reached, cannot
run here, answered with an error, or answered something the gateway cannot pass on."""

from __future__ import annotations

from typing import Any

from .base import AaiError, ErrorCode, json_pointer


class ToolCallError(AaiError):
    """Something went wrong with one call of one tool: the message starts with "{app} {tool}: "
    and `data` names both. Each subclass fixes the code."""

    def __init__(self, app_id: str, tool: str, problem: str, **data: Any) -> None:
        super().__init__(f"{app_id} {tool}: {problem}", {"app": app_id, "tool": tool, **data})


class ExecutionFailedError(ToolCallError):
    """The call ran and failed, or its answer cannot be used (EXECUTION_FAILED)."""

    code = ErrorCode.EXECUTION_FAILED


class UnsendableRequestError(ToolCallError):
    """The request the descriptor describes cannot be sent as it is, or not now (a header name
    HTTP cannot carry, a URL the web rules refuse, a session that is busy): INVALID_REQUEST,
    and nothing was sent."""

    code = ErrorCode.INVALID_REQUEST


class NoAnswerError(ToolCallError):
    """The app, or what stands between it and the gateway, gave up waiting (TIMEOUT) on its own
    terms, not the tool's timeout (that is `ExecutionTimeoutError`)."""

    code = ErrorCode.TIMEOUT


class UnsupportedOperationError(ToolCallError):
    """The tool names an operation its channel does not have (NOT_IMPLEMENTED)."""

    code = ErrorCode.NOT_IMPLEMENTED


class ExecutionTimeoutError(AaiError):
    def __init__(self, app_id: str, tool: str, timeout_ms: int) -> None:
        super().__init__(
            f"{app_id} {tool} did not finish within {timeout_ms} ms and was stopped",
            {"app": app_id, "tool": tool, "timeout_ms": timeout_ms},
            ErrorCode.TIMEOUT,
        )


class ServiceUnavailableError(AaiError):
    def __init__(self, app_id: str, reason: str, **data: Any) -> None:
        super().__init__(
            f"{app_id} is not reachable: {reason}", {"app": app_id, **data}, ErrorCode.SERVICE_UNAVAILABLE
        )


class NotImplementedExecutionError(AaiError):
    def __init__(self, execution_type: str, platform: str, reason: str) -> None:
        super().__init__(
            f"execution type {execution_type!r} cannot run here ({platform}): {reason}",
            {"execution_type": execution_type, "platform": platform, "reason": reason},
            ErrorCode.NOT_IMPLEMENTED,
        )


class AppReportedError(AaiError):
    """The app ran and answered with an error of its own; its code and message are kept."""

    def __init__(
        self, app_id: str, tool: str, message: str, app_code: str | None = None, **data: Any
    ) -> None:
        code = ErrorCode(app_code) if app_code is not None and app_code in ErrorCode.__members__ else None
        code = code or ErrorCode.EXECUTION_FAILED
        super().__init__(
            f"{app_id} {tool} failed: {message}",
            {"app": app_id, "tool": tool, "app_error_code": app_code, **data},
            code,
        )


class AgentInactiveError(ExecutionTimeoutError):
    """An ACP agent that stayed silent longer than the tool's inactivity timeout."""

    def __init__(self, app_id: str, tool: str, timeout_ms: int) -> None:
        super().__init__(app_id, tool, timeout_ms)
        self.message = (
            f"{app_id} {tool}: the agent sent nothing for {timeout_ms / 1000:g} s (the tool's "
            "inactivity timeout, execution.timeout) and its turn was cancelled"
        )
        self.data["inactivity"] = True


class FetchFailedError(AaiError):
    """A URL that could not be fetched (SERVICE_UNAVAILABLE)."""

    def __init__(self, url: str, reason: str, **data: Any) -> None:
        super().__init__(f"cannot fetch {url}: {reason}", {"url": url, **data}, ErrorCode.SERVICE_UNAVAILABLE)


class HttpStatusError(AaiError):
    """The app answered with an HTTP status that is not success; `code` is what the status stands
    for (docs/errors.md: 401 is AUTH_REQUIRED, or AUTH_EXPIRED after a refresh could not help)."""

    def __init__(self, message: str, data: dict[str, Any], code: ErrorCode, status: int) -> None:
        super().__init__(message, data, code)
        self.status = status


class ResponseTooLargeError(ExecutionFailedError):
    def __init__(self, app_id: str, tool: str, limit: int, url: str) -> None:
        super().__init__(
            app_id,
            tool,
            f"the response is larger than the limit of {limit} bytes and was not read",
            max_response_bytes=limit,
            url=url,
        )


class AnswerTooDeepError(ExecutionFailedError):
    def __init__(self, app_id: str, tool: str, limit: int) -> None:
        super().__init__(
            app_id,
            tool,
            f"the app's answer is nested deeper than {limit} levels, more than the gateway passes "
            "on; the app must answer with flatter JSON",
            max_depth=limit,
        )


class UnwritableAnswerError(ExecutionFailedError):
    """`pointer` (RFC 6901, possibly shortened) is where the answer holds `reason`."""

    def __init__(self, app_id: str, tool: str, pointer: str, reason: str) -> None:
        super().__init__(
            app_id,
            tool,
            f"the app's answer holds {reason} at {pointer or '(the whole answer)'}, which cannot be "
            "written as JSON, so the gateway cannot pass the answer on; the app must answer with "
            "valid Unicode text and numbers within the range of a 64-bit float",
            pointer=pointer,
            reason=reason,
        )


class ComScriptError(ExecutionFailedError):
    """A COM action sequence that cannot run as written, or an action that failed; `index` is the
    action's place in the sequence."""

    def __init__(self, app_id: str, tool: str, index: int | None, problem: str, **data: Any) -> None:
        pointer = json_pointer("actions", index) if index is not None else ""
        super().__init__(
            app_id, tool, f"{pointer} {problem}" if pointer else problem, pointer=pointer, **data
        )
