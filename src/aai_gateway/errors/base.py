"""The root of the error tree: the AAI codes, `AaiError`, and `Problem` (one thing wrong in a
descriptor file)."""

from __future__ import annotations

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
    text = str(token)
    return text.replace("~", "~0").replace("/", "~1") if "~" in text or "/" in text else text


def json_pointer(*tokens: str | int) -> str:
    """RFC 6901 pointer; the whole document is the empty string."""
    joined = ("/%s" * len(tokens)) % tokens  # the quickest join: a first start makes thousands
    if "~" not in joined and joined.count("/") == len(tokens):  # nothing to escape: most
        return joined
    return "".join(["/" + escape_pointer_token(t) for t in tokens])


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
    """Base of every error the gateway reports to a caller. Code that handles errors dispatches
    on `code`, never on the class: the same condition (say AUTH_REQUIRED) can come from several
    places. Raise one of the subclasses in this package, each of which fixes its code and the
    shape of its message and data; a new kind of error is a new subclass here."""

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
