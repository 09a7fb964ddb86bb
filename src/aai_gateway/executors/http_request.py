"""Build one HTTP request from a tool's binding and its arguments. Pure: no I/O.

- URL: the channel's `base_url` (trailing slash dropped) + the tool's path (default
  `/<tool name>`). `{name}` / `${name}` in the path become the argument percent-encoded
  completely (`/`, `?`, `#`, `%`, spaces, unicode, and `.`/`..` as a whole segment are all
  encoded), so no value can change the path, the query or the fragment.
- Arguments the path, headers or templates did not use go to the query string for GET, DELETE,
  HEAD and OPTIONS, and into a JSON object body for POST, PUT and PATCH. A dialect-B `body` or
  `query_params` template, when present, defines that part instead.
- Headers: the channel's `default_headers`, then the tool's `headers` (the tool wins, names
  compared case-insensitively), `${name}` substituted. A header value that would carry a control
  character (CR, LF, NUL, ...) or a lone surrogate is refused with INVALID_PARAMS before
  anything is sent; a header the HTTP client must write itself (`Content-Length`, `Host`, ...,
  descriptor/http_headers.py) with INVALID_REQUEST (descriptor validation refuses it first).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlsplit

from ..descriptor.http_headers import header_name_problem, header_value_problem
from ..descriptor.model import HttpCall, HttpChannel
from ..errors import InvalidParamsError, UnsendableRequestError
from .templates import MISSING, OMIT, lookup, placeholder_names, substitute, substitute_path, text_of

DEFAULT_METHOD: Final = "POST"
QUERY_METHODS: Final = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
JSON_CONTENT_TYPE: Final = "application/json"
FORM_CONTENT_TYPE: Final = "application/x-www-form-urlencoded"
# The longest URL the HTTP client accepts (httpx's MAX_URL_LENGTH); a longer one is refused
# here, naming the arguments that made it long, instead of failing inside the client.
MAX_URL_CHARS: Final = 65_536

_OWS: Final = " \t"


@dataclass(frozen=True)
class HttpRequestSpec:
    """Everything needed to send the request. `url` has no query; `query` is already encoded."""

    method: str
    url: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    path_template: str

    @property
    def full_url(self) -> str:
        return f"{self.url}?{self.query}" if self.query else self.url

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


def encode_path_value(value: Any) -> str:
    """A value as text that stays inside one path segment: every reserved or non-ASCII character
    percent-encoded, and `.` / `..` written `%2E` / `%2E%2E` so nothing treats them as dot
    segments."""
    encoded = quote(text_of(value), safe="")
    if encoded in (".", ".."):
        return encoded.replace(".", "%2E")
    return encoded


def encode_query_component(text: str) -> str:
    return quote(text, safe="")


def query_pairs(key: str, value: Any) -> list[tuple[str, str]]:
    """One argument as query pairs: null left out, an array as the key repeated per item; values
    as text (strings as they are, booleans `true`/`false`, objects and numbers compact JSON)."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [(key, text_of(item)) for item in value if item is not None]
    return [(key, text_of(value))]


def encode_query(pairs: Iterable[tuple[str, str]]) -> str:
    return "&".join(f"{encode_query_component(k)}={encode_query_component(v)}" for k, v in pairs)


def build_request(
    channel: HttpChannel,
    call: HttpCall | None,
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    app_id: str = "",
) -> HttpRequestSpec:
    """The request for one call. Raises `InvalidParamsError` for arguments that cannot be sent
    exactly (a path parameter that is missing or empty, a header value with control characters)."""
    call = call or HttpCall()
    method = call.method or DEFAULT_METHOD
    template = call.path if call.path is not None else "/" + quote(tool_name, safe="")
    base = urlsplit(channel.base_url)
    path, path_query, consumed = _path(template, arguments, app_id=app_id, tool_name=tool_name)
    path_names = set(consumed)
    query_names: set[str] = set()
    url = f"{base.scheme}://{base.netloc}{base.path.rstrip('/')}{path}"
    headers, header_names = _headers(
        channel.default_headers, call.headers, arguments, app_id=app_id, tool_name=tool_name
    )
    consumed |= header_names

    query_template: list[tuple[str, str]] | None = None
    if call.query_params:
        substituted = substitute(call.query_params, arguments)
        consumed |= substituted.consumed
        query_names = set(substituted.consumed)
        query_template = _pairs(substituted.value)
    body_value: Any = OMIT
    if call.body is not None:
        substituted = substitute(call.body, arguments)
        consumed |= substituted.consumed
        body_value = substituted.value

    leftover = {k: v for k, v in arguments.items() if k not in consumed}
    if method in QUERY_METHODS:
        pairs = query_template if query_template is not None else _pairs(leftover)
    else:
        pairs = query_template or []
        if call.body is None:
            body_value = leftover
    query = "&".join(q for q in (base.query, path_query, encode_query(pairs)) if q)
    if len(url) + 1 + len(query) > MAX_URL_CHARS:
        in_url = path_names | {key for key, _ in pairs if key in arguments}
        if query_template is not None:
            in_url |= query_names
        _refuse_long_url(len(url) + 1 + len(query), in_url, arguments, app_id=app_id, tool_name=tool_name)

    body: bytes | None = None
    if body_value is not OMIT:
        declared = _header(headers, "content-type")
        body, content_type = _encode_body(body_value, declared)
        if declared is None:
            headers.append(("Content-Type", content_type))
    return HttpRequestSpec(method, url, query, tuple(headers), body, template)


def _path(
    template: str, arguments: Mapping[str, Any], *, app_id: str, tool_name: str
) -> tuple[str, str, set[str]]:
    """The encoded path, the encoded query written in the path template (`/search?type=page`),
    and the arguments they used. A fragment in the template is dropped (never sent)."""
    path_part, _, query_part = template.partition("#")[0].partition("?")
    if path_part and not path_part.startswith("/"):
        path_part = "/" + path_part
    path = substitute_path(path_part, arguments, encode_path_value)
    query = substitute_path(query_part, arguments, lambda v: encode_query_component(text_of(v)))
    violations = [
        {"path": _pointer(name), "message": f"needed by the URL path {template!r}"}
        for name in (*path.missing, *query.missing)
    ] + [
        {"path": _pointer(name), "message": f"must not be empty: it is part of the URL path {template!r}"}
        for name in path.empty
    ]
    if violations:
        raise InvalidParamsError(app_id, tool_name, violations)
    return path.text, query.text, set(path.consumed | query.consumed)


def _refuse_long_url(
    length: int, names: set[str], arguments: Mapping[str, Any], *, app_id: str, tool_name: str
) -> None:
    """INVALID_PARAMS naming the arguments in the URL, longest first; INVALID_REQUEST when the
    descriptor's own URL is the long part. Nothing is sent either way."""
    sizes = {name: len(text_of(value)) for name in names if (value := lookup(arguments, name)) is not MISSING}
    culprits = sorted(sizes, key=lambda name: -sizes[name])
    what = f"the request URL would be {length} characters, more than the {MAX_URL_CHARS} it may have"
    if not culprits:
        raise UnsendableRequestError(app_id, tool_name, f"{what}; nothing was sent", url_chars=length)
    raise InvalidParamsError(
        app_id,
        tool_name,
        [
            {
                "path": _pointer(name),
                "message": f"{what} ({sizes[name]} characters of it from this value); nothing was sent",
            }
            for name in culprits[:3]
        ],
    )


def _pairs(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [p for k, v in arguments.items() for p in query_pairs(k, v)]


def _headers(
    defaults: Mapping[str, str],
    tool_headers: Mapping[str, str],
    arguments: Mapping[str, Any],
    *,
    app_id: str,
    tool_name: str,
) -> tuple[list[tuple[str, str]], set[str]]:
    merged: dict[str, tuple[str, str]] = {}
    for name, value in (*defaults.items(), *tool_headers.items()):
        merged[name.lower()] = (name, value)
    for name, _ in merged.values():  # refused when the descriptor is loaded; this is the backstop
        name_problem = header_name_problem(name)
        if name_problem:
            raise UnsendableRequestError(
                app_id,
                tool_name,
                f"the descriptor's header name {name!r} {name_problem}; nothing was sent",
                header=name,
            )
    headers: list[tuple[str, str]] = []
    consumed: set[str] = set()
    violations: list[dict[str, str]] = []
    for name, template in merged.values():
        substituted = substitute(template, arguments)
        consumed |= substituted.consumed
        if substituted.value is OMIT or substituted.value is None:
            continue
        # Leading and trailing blanks are not part of a header value (RFC 9110 5.5).
        value = text_of(substituted.value).strip(_OWS)
        problem = header_value_problem(value)
        if problem is None:
            headers.append((name, value))
            continue
        culprits = [n for n in dict.fromkeys(placeholder_names(template)) if _unsafe(arguments, n)]
        source = ", ".join(f"parameter {c!r}" for c in culprits) or "its template"
        violations.append(
            {
                "path": _pointer(culprits[0]) if culprits else "",
                "message": f"header {name!r} would get a value from {source} that {problem}; "
                "nothing was sent",
            }
        )
    if violations:
        raise InvalidParamsError(app_id, tool_name, violations)
    return headers, consumed


def _encode_body(value: Any, content_type: str | None) -> tuple[bytes, str]:
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type == FORM_CONTENT_TYPE and isinstance(value, Mapping):
        return encode_query(_pairs(value)).encode("ascii"), FORM_CONTENT_TYPE
    if media_type and not _is_json_media_type(media_type) and isinstance(value, str):
        return value.encode("utf-8"), content_type or "text/plain; charset=utf-8"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8"), JSON_CONTENT_TYPE


def _is_json_media_type(media_type: str) -> bool:
    return media_type in ("application/json", "text/json") or media_type.endswith("+json")


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _pointer(name: str) -> str:
    return "/" + name.replace("~", "~0").replace("/", "~1")


def _unsafe(arguments: Mapping[str, Any], name: str) -> bool:
    value = lookup(arguments, name)
    return value is not MISSING and header_value_problem(text_of(value)) is not None
