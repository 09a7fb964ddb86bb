"""Reading what a token endpoint answered, without trusting it.

A token endpoint is a server like any other: for a web app, one the descriptor's author chose.
Its answer may be JSON nested past what Python's parser reads, numbers no float can hold, text
with lone surrogates, or tokens holding control characters that no HTTP header can carry. None
of that may surface as a traceback or INTERNAL_ERROR, and none of it is stored or sent on:

- the answer is read with the gateway's strict JSON rules (executors/answer_json.py); an answer
  that is not a JSON object the gateway can read counts as an answer without tokens;
- a token must be sendable in a header (descriptor/http_headers.py), a refresh token must be
  valid Unicode, a lifetime (`expires_in`, `expire`) a finite number of seconds of at most
  `MAX_LIFETIME_SECONDS`: otherwise `UnusableAnswerError`, naming the field, never its value;
- the endpoint's own explanation (`endpoint_message`) comes from the parsed answer, scrubbed of
  the request's secrets before it is cut to `MESSAGE_CHARS` (a secret cut in half would slip
  past the scrubber).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, Final

import httpx
import httpx2

from ..descriptor.http_headers import header_value_problem
from ..discovery.web_transport import public_url
from ..executors.answer_json import strict_loads
from ..executors.redaction import Scrubber
from .credentials import OAuthTokens

MESSAGE_CHARS: Final = 300
MAX_LIFETIME_SECONDS: Final = 10 * 366 * 24 * 3600
_SURROGATE: Final = re.compile("[\ud800-\udfff]")

Answer = httpx.Response | httpx2.Response
"""An answer read through the gateway's httpx clients, or through authlib's httpx2 ones."""


class UnusableAnswerError(ValueError):
    """The token endpoint answered success, but with nothing the gateway can use or keep."""


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret value replaced (executors/redaction.py), on one line, cut to a
    readable length (after scrubbing)."""
    text = " ".join(_readable(Scrubber(secrets).text(text)).split())
    return text[:MESSAGE_CHARS] + ("…" if len(text) > MESSAGE_CHARS else "")


def endpoint_name(response: Answer) -> str:
    """The endpoint that answered, without its query string."""
    return public_url(str(response.request.url))


def answer_document(response: Answer) -> dict[str, Any] | None:
    """The JSON object the endpoint answered; None when the answer is not one the gateway can
    read (not JSON, NaN, nested past what the parser reads, not an object)."""
    try:
        document = strict_loads(response.content)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def endpoint_message(response: Answer, secrets: Iterable[str | None]) -> str:
    """The token endpoint's own explanation: OAuth `error` + `error_description`, or the
    `msg`/`message`/`code` of a JSON body, or the status line; scrubbed of `secrets`."""
    status = f"HTTP {response.status_code}"
    document = answer_document(response) or {}
    parts: list[str] = []
    for key in ("error", "error_description", "msg", "message", "code"):
        value = document.get(key)
        if isinstance(value, dict):
            value = value.get("message")
        if isinstance(value, bool) or value == 0:
            continue
        if isinstance(value, str | int) and str(value).strip():
            parts.append(str(value).strip())
    detail = ": ".join(dict.fromkeys(parts))
    return scrub(f"{status} {detail}" if detail else status, secrets)


def parse_token_response(response: Answer, started: float, secrets: Iterable[str | None] = ()) -> OAuthTokens:
    """RFC 6749 §5.1 success → tokens (expires_at from `expires_in`); else ValueError saying what
    the server answered (its `error` and `error_description`, scrubbed of `secrets`: what the
    request carried) or why its answer cannot be used; never a token."""
    where = endpoint_name(response)
    if not response.is_success:
        raise ValueError(f"the token endpoint {where} answered {endpoint_message(response, secrets)}")
    document = answer_document(response)
    if document is None:
        raise UnusableAnswerError(
            f"the token endpoint {where} answered HTTP {response.status_code} with something "
            "that is not a JSON object the gateway can read"
        )
    access_token = token_field(document, {}, where, "access_token")
    if access_token is None:
        raise UnusableAnswerError(
            f"the token endpoint {where} answered HTTP {response.status_code} without an access_token"
        )
    refresh_token = document.get("refresh_token")
    if isinstance(refresh_token, str) and _SURROGATE.search(refresh_token):
        raise UnusableAnswerError(
            f"the token endpoint {where} answered a refresh_token that is not valid Unicode "
            "(a lone surrogate); it could not be stored or sent back"
        )
    lifetime = lifetime_field(document, {}, where, "expires_in")
    return OAuthTokens(
        access_token=access_token,
        token_type=_text(document.get("token_type")) or "Bearer",
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        expires_at=started + lifetime if lifetime is not None else None,
        scope=_text(document.get("scope")),
    )


def token_field(document: dict[str, Any], data: dict[str, Any], where: str, *keys: str) -> str | None:
    """The first non-empty string among `keys` (in `document`, then in `data`); raises
    UnusableAnswerError when it cannot be sent in a header."""
    for key in keys:
        for source in (document, data):
            value = source.get(key)
            if isinstance(value, str) and value:
                problem = header_value_problem(value)
                if problem:
                    raise UnusableAnswerError(
                        f"the {key} the token endpoint {where} answered cannot be sent in a "
                        f"header: it {problem}"
                    )
                return value
    return None


def lifetime_field(document: dict[str, Any], data: dict[str, Any], where: str, *keys: str) -> float | None:
    """The first positive number of seconds among `keys` (a number or a string of digits);
    raises UnusableAnswerError for one that is not finite or beyond `MAX_LIFETIME_SECONDS`."""
    for key in keys:
        for source in (document, data):
            value = source.get(key)
            if isinstance(value, str) and value.strip().isdecimal():
                digits = value.strip()
                value = int(digits) if len(digits) <= 12 else math.inf
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if not value <= MAX_LIFETIME_SECONDS:  # also infinity (1e999) and 400-digit integers
                raise UnusableAnswerError(
                    f"the {key} the token endpoint {where} answered is not a usable number of "
                    f"seconds (at most {MAX_LIFETIME_SECONDS})"
                )
            if value > 0:
                return float(value)
    return None


def _text(value: Any) -> str | None:
    """A non-empty string that is valid Unicode, else None."""
    if isinstance(value, str) and value and not _SURROGATE.search(value):
        return value
    return None


def _readable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)
