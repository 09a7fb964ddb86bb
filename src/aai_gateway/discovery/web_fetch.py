"""Fetching a web app's `/.well-known/aai.json`, safely (docs/architecture.md, "Security rules").

`fetch_well_known` GETs `<origin>/.well-known/aai.json` (the origin normalized by
`descriptor.origin.normalize_origin`: https only):

- every connection goes through `GuardedBackend` (web.py): non-public addresses are refused unless
  `WebFetchPolicy.allow_private`, before connecting and again on the connected socket, before the
  request is sent and once more on the response;
- the body is streamed and abandoned past `max_bytes`; the whole fetch (name resolution,
  connection, TLS, every redirect, the body however slowly it drips) runs under one deadline,
  `timeout_seconds`;
- at most `max_redirects` redirects, each to an https URL, each hop checked as above;
- 404/410: UNKNOWN_APP ("no aai.json at <url>"). A refused address or reference:
  INVALID_REQUEST. Everything else (DNS, connection, TLS, timeout, other statuses, too large):
  SERVICE_UNAVAILABLE naming the URL and the reason.

Network I/O is httpcore (httpx's own transport layer), used directly because its network
backend is the one place where the address actually connected to can be chosen and checked.
No environment is read here: no proxy, no `.netrc`, no `SSL_CERT_FILE`. Logs (debug): URL,
status, size, duration; never bodies.
"""

from __future__ import annotations

import http
import logging
import ssl
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import httpcore
import httpx

from .. import __version__
from ..descriptor.origin import checked_host, normalize_origin, origin_text
from ..errors import AaiError, FetchFailedError, UsageError, WebAppNotFoundError
from .web import (
    ALLOW_PRIVATE_HINT,
    GuardedBackend,
    RefusedAddressError,
    Resolver,
    WebFetchPolicy,
    check_peer,
    ssl_context,
    system_resolver,
)

logger = logging.getLogger(__name__)

WELL_KNOWN_PATH: Final = "/.well-known/aai.json"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_GONE: Final = frozenset({404, 410})


@dataclass(frozen=True)
class FetchedDescriptor:
    origin: str  # the origin asked for: what credentials and consent bind to
    source_url: str  # the URL the body finally came from (after redirects)
    body: bytes
    status: int


def _invalid(message: str, **data: Any) -> AaiError:
    return UsageError(message, **data)


async def fetch_well_known(
    origin: str,
    policy: WebFetchPolicy,
    *,
    resolver: Resolver | None = None,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
) -> FetchedDescriptor:
    """GET `<origin>/.well-known/aai.json` within the policy's limits (see the module docstring).
    `resolver` and `network_backend` replace name resolution and raw connections (tests)."""
    origin = normalize_origin(origin)
    url = origin + WELL_KNOWN_PATH
    backend = GuardedBackend(policy, resolver or system_resolver, network_backend or httpcore.AnyIOBackend())
    started = time.monotonic()
    try:
        with anyio.fail_after(policy.timeout_seconds):
            async with httpcore.AsyncConnectionPool(
                ssl_context=ssl_context(policy),
                network_backend=backend,
                http1=True,
                http2=False,
                retries=0,
                max_connections=1,
            ) as pool:
                return await _follow(pool, origin, url, policy, started)
    except RefusedAddressError as exc:
        logger.debug("web fetch %s refused: %s", url, exc)
        raise _invalid(
            f"refusing to fetch {url}: {exc}. web_discover fetches only from public addresses "
            f"unless private ones are allowed ({ALLOW_PRIVATE_HINT})",
            url=url,
            host=exc.host,
            address=exc.address,
            reason=exc.reason,
        ) from None
    except (TimeoutError, httpcore.TimeoutException) as exc:
        logger.debug("web fetch %s timed out after %.1f ms", url, _ms(started))
        raise _unavailable(
            url,
            f"no complete answer within {policy.timeout_seconds:g} s",
            timeout_seconds=policy.timeout_seconds,
        ) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, ssl.SSLError) as exc:
        logger.debug("web fetch %s failed after %.1f ms: %s", url, _ms(started), type(exc).__name__)
        raise _unavailable(url, _describe(exc)) from exc


async def _follow(
    pool: httpcore.AsyncConnectionPool, origin: str, url: str, policy: WebFetchPolicy, started: float
) -> FetchedDescriptor:
    limit = policy.timeout_seconds
    extensions = {"timeout": {"connect": limit, "read": limit, "write": limit, "pool": limit}}
    headers = [
        (b"Accept", b"application/json"),
        (b"Accept-Encoding", b"identity"),
        (b"User-Agent", f"aai-gateway/{__version__}".encode("ascii")),
    ]
    for hop in range(policy.max_redirects + 1):
        async with pool.stream("GET", url, headers=headers, extensions=extensions) as response:
            stream = response.extensions.get("network_stream")
            if stream is not None:
                check_peer(httpx.URL(url).host, stream, policy)
            elif not policy.allow_private:
                raise RefusedAddressError(
                    httpx.URL(url).host, "an unknown address", "unverifiable", connected=True
                )
            status = response.status
            if status in _REDIRECTS:
                location = _header(response.headers, b"location")
                logger.debug("web fetch GET %s -> %d in %.1f ms", url, status, _ms(started))
                if location is None:
                    raise _unavailable(url, f"the server answered {status} without a Location")
                if hop == policy.max_redirects:
                    raise _unavailable(
                        url,
                        f"more than {policy.max_redirects} redirects",
                        max_redirects=policy.max_redirects,
                    )
                url = _redirect_target(url, location)
                continue
            if status in _GONE:
                logger.debug("web fetch GET %s -> %d in %.1f ms", url, status, _ms(started))
                raise WebAppNotFoundError(
                    f"no aai.json at {url} (the server answered {status}): {origin} does not publish "
                    "an AAI descriptor. Check the domain (the API's own host, such as api.example.com, "
                    "may be the one that publishes it)",
                    url=url,
                    origin=origin,
                    status=status,
                )
            if not 200 <= status < 300:
                logger.debug("web fetch GET %s -> %d in %.1f ms", url, status, _ms(started))
                raise _unavailable(url, f"the server answered {status} {_phrase(status)}", status=status)
            body = await _read_body(response, url, policy.max_bytes)
            logger.debug("web fetch GET %s -> %d, %d bytes in %.1f ms", url, status, len(body), _ms(started))
            return FetchedDescriptor(origin=origin, source_url=url, body=body, status=status)
    raise AssertionError("unreachable")  # pragma: no cover


def _redirect_target(url: str, location: str) -> str:
    try:
        target = httpx.URL(url).join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise _unavailable(url, f"the server redirected to an invalid URL ({exc})") from exc
    if target.scheme != "https":
        raise _unavailable(
            url,
            f"the server redirected to a {target.scheme}:// URL ({_public(target)}), and web_discover "
            "fetches over https only",
            redirect=_public(target),
        )
    if target.userinfo:
        raise _unavailable(url, "the server redirected to a URL carrying credentials")
    host = checked_host(target.raw_host, str(target))
    return origin_text(host, target.port) + (target.raw_path.decode("ascii") or "/")


async def _read_body(response: httpcore.Response, url: str, limit: int) -> bytes:
    too_large = _unavailable(
        url, f"the descriptor is larger than the limit of {limit} bytes and was not read", max_bytes=limit
    )
    declared = _header(response.headers, b"content-length") or ""
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = (_header(response.headers, b"content-encoding") or "identity").strip().lower()
    if encoding == "identity":
        return body
    if encoding in ("gzip", "x-gzip", "deflate"):  # sent although identity was asked for
        return _inflate(body, encoding, limit, too_large, url)
    raise _unavailable(url, f"the server sent a {encoding!r}-encoded body, which the gateway does not decode")


def _inflate(body: bytes, encoding: str, limit: int, too_large: AaiError, url: str) -> bytes:
    """Decompress, never past `limit` bytes (a small compressed body can expand enormously)."""
    wbits = 16 + zlib.MAX_WBITS if encoding != "deflate" else zlib.MAX_WBITS
    try:
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise _unavailable(url, f"the {encoding} body is corrupt ({exc})") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise too_large
    return out


def _header(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _unavailable(url: str, reason: str, **data: Any) -> AaiError:
    return FetchFailedError(url, reason, **data)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, ssl.SSLError) or "CERTIFICATE" in text or "SSL" in text:
        return f"the TLS handshake failed ({text or type(exc).__name__})"
    if isinstance(exc, httpcore.ConnectError):
        return f"cannot connect ({text or type(exc).__name__})"
    return f"the connection failed ({type(exc).__name__}: {text})" if text else type(exc).__name__


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _public(url: httpx.URL) -> str:
    return str(url.copy_with(query=None, fragment=None, userinfo=b""))


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
