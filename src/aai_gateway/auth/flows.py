"""httpx `Auth` flows with a static secret, and what keeps a secret in a URL out of the logs.

- `ApiKeyFlow`: a static key in a header (`Name: Prefix value`) or a query parameter. Dialect B's
  `api_key` and `bearer` (`Authorization: Bearer <token>` or `?access_token=`) are this flow.
- `CookieFlow`: browser session cookies in one `Cookie` header, only for hosts inside the
  descriptor's cookie domain.

The flows that obtain tokens (app credentials, OAuth 2) are in token_flows.py. Nothing here logs
a credential value. A key or cookie that a header cannot carry (descriptor/http_headers.py) is
refused before it is put on a request, naming the header, never the value.

Every flow says which secret values it puts on requests (`secret_values`): the HTTP executor
removes them from whatever the app answers (executors/redaction.py).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Generator
from typing import Literal

import httpx

from ..descriptor.http_headers import header_name_problem, header_value_problem
from ..descriptor.model_auth import ApiKeyAuth


def _check_header_value(value: str, what: str) -> None:
    problem = header_value_problem(value)
    if problem:
        raise ValueError(f"the {what} {problem}")


# --------------------------------------------------------------------------- log redaction


class RedactQueryFilter(logging.Filter):
    """Drops query strings from the URLs httpx logs (`HTTP Request: GET https://…?key=…`):
    a credential placed in the query must not reach a log file at INFO level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, httpx.URL) for a in record.args):
            record.args = tuple(_without_query(a) if isinstance(a, httpx.URL) else a for a in record.args)
        return True


def _without_query(url: httpx.URL) -> str:
    if not url.query:
        return str(url)
    return str(url.copy_with(query=None, fragment=None)) + "?[query redacted]"


def install_query_redaction() -> None:
    """Idempotent: one `RedactQueryFilter` on the `httpx` logger."""
    httpx_logger = logging.getLogger("httpx")
    if not any(isinstance(f, RedactQueryFilter) for f in httpx_logger.filters):
        httpx_logger.addFilter(RedactQueryFilter())


# --------------------------------------------------------------------------- static flows


class ApiKeyFlow(httpx.Auth):
    """A static key: header `name: prefix value` (prefix optional) or query parameter `name`."""

    refreshable = False

    def __init__(
        self, *, location: Literal["header", "query"], name: str, value: str, prefix: str | None = None
    ) -> None:
        if not value:
            raise ValueError("the API key is empty")
        where = f"header {name!r}" if location == "header" else f"query parameter {name!r}"
        _check_header_value(value, f"API key for {where}")  # in a query too: one rule for a key
        if prefix:
            _check_header_value(prefix, f"prefix of {where}")
        if location == "header":
            problem = header_name_problem(name)
            if problem:
                raise ValueError(f"the API key's header name {name!r} {problem}")
        self.location = location
        self.name = name
        self.prefix = prefix.strip() if prefix else None
        self._value = value
        if location == "query":
            install_query_redaction()

    @classmethod
    def for_settings(cls, settings: ApiKeyAuth, value: str) -> ApiKeyFlow:
        return cls(location=settings.location, name=settings.name, value=value, prefix=settings.prefix)

    def __repr__(self) -> str:  # never the value
        return f"ApiKeyFlow(location={self.location!r}, name={self.name!r})"

    def secret_values(self) -> list[str]:
        """The key; for a `Basic` key also the `user:password` it encodes, and the password."""
        found = [self._value]
        if self.prefix and self.prefix.lower() == "basic":
            try:
                decoded = base64.b64decode(self._value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return found
            found += [decoded, decoded.partition(":")[2]]
        return found

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.location == "query":
            request.url = request.url.copy_set_param(self.name, self._value)
        else:
            request.headers[self.name] = f"{self.prefix} {self._value}" if self.prefix else self._value
        yield request


class CookieFlow(httpx.Auth):
    """Session cookies in one `Cookie` header, merged after any cookie the request already has.
    With a `domain`, only hosts inside it receive them (`.example.com` covers `example.com` and
    its subdomains; `example.com` exactly that host)."""

    refreshable = False

    def __init__(self, cookies: dict[str, str], *, domain: str | None = None) -> None:
        for name, value in cookies.items():
            if not name or any(c in name for c in "=;, \t") or any(c in value for c in ";"):
                raise ValueError(f"cookie {name!r} has a name or value that a Cookie header cannot carry")
            _check_header_value(name + value, f"cookie {name!r}")
        self._cookies = dict(cookies)
        self.domain = domain.lower() if domain else None

    def __repr__(self) -> str:
        return f"CookieFlow(names={sorted(self._cookies)!r}, domain={self.domain!r})"

    def secret_values(self) -> list[str]:
        return list(self._cookies.values())

    def covers(self, host: str) -> bool:
        if self.domain is None:
            return True
        host = host.lower().rstrip(".")
        bare = self.domain.lstrip(".")
        if self.domain.startswith("."):
            return host == bare or host.endswith("." + bare)
        return host == bare

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._cookies and self.covers(request.url.host):
            ours = "; ".join(f"{name}={value}" for name, value in self._cookies.items())
            existing = request.headers.get("Cookie")
            request.headers["Cookie"] = f"{existing}; {ours}" if existing else ours
        yield request
