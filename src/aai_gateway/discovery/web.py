"""Fetching a web app's `/.well-known/aai.json`, safely (docs/architecture.md, "Security rules").

- Origins are normalized by `descriptor.origin.normalize_origin` (re-exported here): https only.
- `fetch_well_known` GETs `<origin>/.well-known/aai.json`:
  - Unless `WebFetchPolicy.allow_private`, loopback, private, link-local, multicast, reserved and
    unspecified addresses are refused (IPv4 and IPv6, including IPv4 embedded in IPv6). The host
    is resolved once, every address is checked *before* any connection, and the connection goes
    to a checked address (the name is not resolved a second time, so DNS rebinding has no second
    answer to give). The peer address of the socket actually connected is checked again, before
    the request is sent and once more on the response.
  - The body is streamed and abandoned past `max_bytes`; the whole fetch (name resolution,
    connection, TLS, every redirect, the body however slowly it drips) runs under one deadline,
    `timeout_seconds`.
  - At most `max_redirects` redirects, each to an https URL, each hop checked as above.
  - 404/410: UNKNOWN_APP ("no aai.json at <url>"). A refused address or reference:
    INVALID_REQUEST. Everything else (DNS, connection, TLS, timeout, other statuses, too large):
    SERVICE_UNAVAILABLE naming the URL and the reason.
- `same_site` decides whether a descriptor's base URL may be served from an origin.
- `guarded_transport` (web_transport.py) puts the same address checks under every request the
  gateway makes for a web app (its API, redirects, token endpoints).

Network I/O is httpcore (httpx's own transport layer), used directly because its network
backend is the one place where the address actually connected to can be chosen and checked.
No environment is read here: no proxy, no `.netrc`, no `SSL_CERT_FILE` (only `cli/` reads the
environment and fills in `WebFetchPolicy`). Logs (debug): URL, status, size, duration; never bodies.
"""

from __future__ import annotations

import http
import ipaddress
import logging
import socket
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import anyio
import httpcore
import httpx
from publicsuffixlist import PublicSuffixList

from .. import __version__
from ..descriptor.origin import (
    IpAddress,
    canonical_host,
    checked_host,
    ip_literal,
    normalize_origin,
    origin_text,
)
from ..errors import AaiError, ErrorCode

logger = logging.getLogger(__name__)

WELL_KNOWN_PATH: Final = "/.well-known/aai.json"
DEFAULT_MAX_BYTES: Final = 1024 * 1024
DEFAULT_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_MAX_REDIRECTS: Final = 3
ALLOW_PRIVATE_HINT: Final = "AAI_GATEWAY_ALLOW_PRIVATE_WEB=1"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_GONE: Final = frozenset({404, 410})
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""`(host, port) -> addresses`: how a host name becomes IP addresses (tests inject their own)."""


@dataclass(frozen=True)
class WebFetchPolicy:
    """Limits of one well-known fetch. `cli/` builds it (allow_private from the environment)."""

    allow_private: bool = False  # loopback/private/link-local origins, for tests and local apps
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    ca_file: str | None = None  # a PEM bundle trusted in addition to the usual CAs


@dataclass(frozen=True)
class FetchedDescriptor:
    origin: str  # the origin asked for: what credentials and consent bind to
    source_url: str  # the URL the body finally came from (after redirects)
    body: bytes
    status: int


# --------------------------------------------------------------------------- origins


def _invalid(message: str, **data: Any) -> AaiError:
    return AaiError(message, data, ErrorCode.INVALID_REQUEST)


# --------------------------------------------------------------------------- addresses


def address_refusal(address: str | IpAddress) -> str | None:
    """Why this address is not a public one (`"loopback"`, `"private"`…), or None if it is.
    IPv4 embedded in IPv6 (mapped, NAT64, 6to4) is judged by the IPv4 address it carries."""
    ip = ip_literal(address) if isinstance(address, str) else address
    if ip is None:
        return "unparsable"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return address_refusal(ip.ipv4_mapped)
        if ip in _NAT64:
            return address_refusal(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip.sixtofour is not None and (embedded := address_refusal(ip.sixtofour)):
            return embedded
        if ip.is_site_local:
            return "site-local"
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
        ("non-public", not ip.is_global),
    )
    return next((label for label, hit in checks if hit), None)


class NetworkRuleError(Exception):
    """A request the web network rules refuse (a non-public address, a URL that is not https).
    Callers turn it into an AaiError naming what they were doing."""


class RefusedAddressError(NetworkRuleError):
    """An address the policy refuses."""

    def __init__(self, host: str, address: str, reason: str, *, connected: bool = False) -> None:
        how = "connected to" if connected else "resolves to"
        super().__init__(f"{host} {how} {address}, a {reason} address")
        self.host, self.address, self.reason = host, address, reason


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves each host once, refuses non-public addresses (unless allowed), connects to a
    checked address, and checks the connected socket's peer address before anything is sent."""

    def __init__(
        self, policy: WebFetchPolicy, resolver: Resolver, inner: httpcore.AsyncNetworkBackend
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        host = host.strip("[]")
        addresses = await self._addresses(host, port)
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            try:
                check_peer(host, stream, self._policy)
            except BaseException:
                await stream.aclose()
                raise
            return stream
        raise failure or httpcore.ConnectError(f"{host} has no address")

    async def _addresses(self, host: str, port: int) -> list[str]:
        if ip_literal(host) is not None:
            addresses = [host]
        else:
            try:
                addresses = list(await self._resolver(host, port))
            except OSError as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
            if not addresses:
                raise httpcore.ConnectError(f"cannot resolve {host}: no addresses")
        if not self._policy.allow_private:
            for address in addresses:  # one bad answer spoils the lot: no mixing public and private
                reason = address_refusal(address)
                if reason is not None:
                    raise RefusedAddressError(host, address, reason)
        return addresses

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used for web discovery")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def check_peer(host: str, stream: httpcore.AsyncNetworkStream, policy: WebFetchPolicy) -> None:
    """The address the socket is really connected to must be public (unless allowed)."""
    if policy.allow_private:
        return
    peer = stream.get_extra_info("server_addr")
    address = str(peer[0]) if isinstance(peer, tuple) and peer else None
    if address is None:
        raise RefusedAddressError(host, "an unknown address", "unverifiable", connected=True)
    reason = address_refusal(address)
    if reason is not None:
        raise RefusedAddressError(host, address, reason, connected=True)


# --------------------------------------------------------------------------- fetching


def ssl_context(policy: WebFetchPolicy) -> ssl.SSLContext:
    context = httpx.create_ssl_context(trust_env=False)
    if policy.ca_file is not None:
        context.load_verify_locations(cafile=policy.ca_file)
    return context


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
                raise AaiError(
                    f"no aai.json at {url} (the server answered {status}): {origin} does not publish "
                    "an AAI descriptor. Check the domain (the API's own host, such as api.example.com, "
                    "may be the one that publishes it)",
                    {"url": url, "origin": origin, "status": status},
                    ErrorCode.UNKNOWN_APP,
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
    return AaiError(f"cannot fetch {url}: {reason}", {"url": url, **data}, ErrorCode.SERVICE_UNAVAILABLE)


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


# --------------------------------------------------------------------------- sites


@cache
def _suffix_list() -> PublicSuffixList:
    return PublicSuffixList()


def registrable_domain(host: str) -> str | None:
    """`api.notion.com` → `notion.com`; None for IP addresses, public suffixes and single labels."""
    host = host.strip("[]").lower().removesuffix(".")
    if ip_literal(host) is not None or "." not in host:
        return None
    found = _suffix_list().privatesuffix(host)
    return found if isinstance(found, str) else None


def looks_like_domain(host: str) -> bool:
    """An IP address, `localhost`, or a name under a suffix the Public Suffix List knows
    (`notion.com` yes; `com.notion.api`, a reverse-DNS app id, no)."""
    host = host.strip("[]").lower().removesuffix(".")
    if ip_literal(host) is not None or host == "localhost" or host.endswith(".localhost"):
        return True
    return "." in host and _suffix_list().privatesuffix(host, accept_unknown=False) is not None


def same_site(host: str, other: str, *, port: int | None = None, other_port: int | None = None) -> bool:
    """Same registrable domain (ports do not matter); hosts without one (IP addresses,
    `localhost`, a bare public suffix) must be equal, and so must their ports: on such a host
    each port may be a different program, and nothing ties one to another. A port of None or 443
    is the https default."""
    a, b = (canonical_host(h.strip("[]").lower().removesuffix(".")) for h in (host, other))
    site = registrable_domain(a)
    if site is None:
        return a == b and _https_port(port) == _https_port(other_port)
    return a == b or site == registrable_domain(b)


def _https_port(port: int | None) -> int:
    return 443 if port is None else port
