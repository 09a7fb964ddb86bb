"""The one error tree of the gateway.

Every error carries an AAI code (see docs/errors.md for the table and where each code is
produced). Lower layers raise these; only `server/` turns them into MCP results and only
`cli/` turns them into exit codes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal


class ErrorCode(StrEnum):
    # protocol
    INVALID_REQUEST = "INVALID_REQUEST"
    UNKNOWN_APP = "UNKNOWN_APP"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_PARAMS = "INVALID_PARAMS"
    # authorization
    AUTH_REQUIRED = "AUTH_REQUIRED"
    AUTH_DENIED = "AUTH_DENIED"
    AUTH_EXPIRED = "AUTH_EXPIRED"
    AUTH_INVALID = "AUTH_INVALID"
    CONSENT_REQUIRED = "CONSENT_REQUIRED"
    CONSENT_DENIED = "CONSENT_DENIED"
    # execution
    TIMEOUT = "TIMEOUT"
    NOT_FOUND = "NOT_FOUND"
    RATE_LIMITED = "RATE_LIMITED"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    EXECUTION_FAILED = "EXECUTION_FAILED"
    # internal
    INTERNAL_ERROR = "INTERNAL_ERROR"
    NOT_IMPLEMENTED = "NOT_IMPLEMENTED"


Severity = Literal["error", "warning"]


def escape_pointer_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def json_pointer(*tokens: str | int) -> str:
    """RFC 6901 pointer; the whole document is the empty string."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong (or worth fixing) in one descriptor file."""

    pointer: str
    message: str
    severity: Severity = "error"
    file: str = ""

    def located(self, file: str) -> Problem:
        return Problem(self.pointer, self.message, self.severity, file)

    def render(self) -> str:
        where = self.pointer or "/"
        prefix = f"{self.file}: " if self.file else ""
        tag = "" if self.severity == "error" else "warning: "
        return f"{prefix}{where}: {tag}{self.message}"

    def as_dict(self) -> dict[str, str]:
        return {
            "file": self.file,
            "pointer": self.pointer,
            "severity": self.severity,
            "message": self.message,
        }


class AaiError(Exception):
    """Base of every error the gateway reports to a caller."""

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(
        self, message: str, data: dict[str, Any] | None = None, code: ErrorCode | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = dict(data or {})
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message

    def to_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"code": self.code.value, "message": self.message}
        if self.data:
            payload["data"] = self.data
        return {"error": payload}


class DescriptorError(AaiError):
    """A descriptor file that cannot be used; carries every problem found in it."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = [p if p.file else p.located(file) for p in problems]
        errors = [p for p in self.problems if p.severity == "error"]
        first = errors[0].render() if errors else f"{file}: invalid descriptor"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            message=f"invalid aai.json: {first}{more}",
            data={"file": file, "problems": [p.as_dict() for p in self.problems]},
            code=ErrorCode.INVALID_REQUEST,
        )


class UsageError(AaiError):
    """The user asked for something that cannot be done as asked (bad CLI input, bad file)."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message=message, data=data, code=ErrorCode.INVALID_REQUEST)


class UnknownAppError(AaiError):
    def __init__(self, reference: str, known: list[str]) -> None:
        shown = ", ".join(known[:20]) + (" …" if len(known) > 20 else "")
        super().__init__(
            f"no app {reference!r}; known apps: {shown or 'none'}. Use an id from tools/list, "
            "or web_discover for a web app",
            {"app": reference, "known_apps": known},
            ErrorCode.UNKNOWN_APP,
        )


class AmbiguousAppError(AaiError):
    """A reference that names apps of several bindings (an id claimed by two sites, or by a web
    app and a local one): never settled by order. Each candidate is `{app, source, reference}`,
    `reference` being what names exactly that app."""

    def __init__(self, reference: str, candidates: list[dict[str, str]]) -> None:
        listed = "; ".join(f"{c['app']} from {c['source']} (name it {c['reference']!r})" for c in candidates)
        super().__init__(
            f"{reference!r} could mean {len(candidates)} apps described in different places: {listed}. "
            "Pass the reference of the one meant; a web app's credentials and consent belong to its origin",
            {"app": reference, "candidates": candidates},
            ErrorCode.UNKNOWN_APP,
        )


class UnknownToolError(AaiError):
    def __init__(self, app_id: str, tool: str, known: list[str]) -> None:
        super().__init__(
            f"app {app_id!r} has no tool {tool!r}; its tools: {', '.join(known) or 'none'}. "
            f"Read the app's guide for names and parameters",
            {"app": app_id, "tool": tool, "known_tools": known},
            ErrorCode.UNKNOWN_TOOL,
        )


class InvalidParamsError(AaiError):
    """`violations` lists what was found; `unlisted` counts the violations left out of it, None
    when nobody looked for them (`data.violations_complete` is then false)."""

    SHOWN_IN_MESSAGE = 10

    def __init__(
        self, app_id: str, tool: str, violations: list[dict[str, str]], *, unlisted: int | None = 0
    ) -> None:
        shown = violations[: self.SHOWN_IN_MESSAGE]
        message = f"invalid arguments for {app_id} {tool}: " + "; ".join(
            f"{v['path'] or '(arguments)'}: {v['message']}" for v in shown
        )
        data: dict[str, Any] = {"app": app_id, "tool": tool, "violations": violations}
        if unlisted is None:
            message += "; further violations were not looked for"
            data["violations_complete"] = False
        elif unlisted or len(violations) > len(shown):
            message += f" (and {unlisted + len(violations) - len(shown)} more)"
            if unlisted:
                data["violations_complete"] = False
                data["violations_unlisted"] = unlisted
        super().__init__(message, data, ErrorCode.INVALID_PARAMS)


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


class AuthRequiredError(AaiError):
    """No usable credential: says what the app needs, where to get it, and the command that stores it."""

    code = ErrorCode.AUTH_REQUIRED

    def __init__(
        self,
        app_id: str,
        app_name: str,
        auth_type: str,
        *,
        reason: str,
        command: str,
        obtain_url: str | None = None,
        instructions: dict[str, Any] | None = None,
        locale: str | None = None,
        expired: bool = False,
        **data: Any,
    ) -> None:
        where = f" Get it at {obtain_url}." if obtain_url else ""
        super().__init__(
            f"{app_name} ({app_id}) needs {auth_type} credentials: {reason}.{where} Ask the user to run "
            f"`{command}` in a terminal, then retry",
            {
                "app": app_id,
                "app_name": app_name,
                "auth_type": auth_type,
                "obtainUrl": obtain_url,
                "instructions": instructions,
                "locale": locale,
                "command": command,
                **data,
            },
            ErrorCode.AUTH_EXPIRED if expired else ErrorCode.AUTH_REQUIRED,
        )


class ConsentRequiredError(AaiError):
    """The user has not allowed this caller to use this tool, and could not be asked now.

    The agent reads this, so it carries no link or code that approves anything (approval never
    through the model: docs/architecture.md, "Security rules"), only every way out the user has
    on this machine: `command`, the grant command (None when a lasting grant cannot help or be
    kept: `no_lasting_grant` says why); `auto_allow_entry`, the `[consent.auto_allow]` tools entry
    that trusts this tool for every client, `auto_allow` the config.toml lines that hold it, and
    `config_file` the file to put them in."""

    def __init__(
        self,
        *,
        caller: str,
        app_id: str,
        app_name: str,
        source: str,
        tool: str,
        tool_description: str,
        tool_parameters: dict[str, Any],
        arguments: dict[str, Any],
        command: str | None,
        no_lasting_grant: str | None = None,
        config_file: str | None = None,
        auto_allow_entry: str | None = None,
    ) -> None:
        lines = (
            ["[consent.auto_allow]", f"tools = [{json.dumps(auto_allow_entry, ensure_ascii=False)}]"]
            if auto_allow_entry
            else []
        )
        ways = []
        if command is not None:
            ways.append(f"run `{command}` in a terminal (it lasts)")
        elif no_lasting_grant is not None:
            ways.append(f"there is no grant command: {no_lasting_grant}")
        if auto_allow_entry:
            where = config_file or "the gateway's config.toml"
            entry = json.dumps(auto_allow_entry, ensure_ascii=False)
            ways.append(
                f"trust it for every client in {where}: add {entry} to `tools` in its "
                f"[consent.auto_allow] table (a new file: {' / '.join(lines)})"
            )
        ways.append("use an MCP client that can ask them (elicitation)")
        super().__init__(
            f"the user has not allowed {caller!r} to use {tool} of {app_name} ({app_id}), and nobody can ask "
            f"them now: this client cannot (no elicitation) and there is no desktop dialog. Show the user "
            f"what this tool does and these arguments, and the ways to allow it: {'; or '.join(ways)}. "
            "Then retry",
            {
                "caller": caller,
                "app_id": app_id,
                "app_name": app_name,
                "source": source,
                "tool": tool,
                "tool_description": tool_description,
                "tool_parameters": tool_parameters,
                "arguments": arguments,
                "command": command,
                **({"no_lasting_grant": no_lasting_grant} if no_lasting_grant else {}),
                "config_file": config_file,
                "auto_allow_entry": auto_allow_entry,
                "auto_allow": lines,
            },
            ErrorCode.CONSENT_REQUIRED,
        )


class ConsentDeniedError(AaiError):
    """`command` undoes a remembered denial; a denial for this call only has nothing to undo."""

    def __init__(self, *, caller: str, app_id: str, tool: str, remembered: bool, command: str | None) -> None:
        until = (
            f"; the denial is remembered until the user runs `{command}`"
            if remembered and command
            else " for this call"
        )
        super().__init__(
            f"the user denied {caller!r} the use of {tool} of {app_id}{until}. Do not retry; tell the user",
            {
                "caller": caller,
                "app_id": app_id,
                "tool": tool,
                "remembered": remembered,
                "command": command if remembered else None,
            },
            ErrorCode.CONSENT_DENIED,
        )
