"""The web network rules under every connection the gateway makes for the web (docs/architecture.md,
"Security rules"): which addresses may be reached, and how a connection is made so that the
address checked is the address connected to.

- `WebFetchPolicy`: the limits and allowances, filled in by `cli/` (which reads the environment).
- Unless `WebFetchPolicy.allow_private`, loopback, private, link-local, multicast, reserved and
  unspecified addresses are refused (`address_refusal`; IPv4 and IPv6, including IPv4 embedded in
  IPv6). `GuardedBackend`, an httpcore network backend, resolves the host once, checks every
  address *before* any connection and connects to a checked address (the name is not resolved a
  second time, so DNS rebinding has no second answer to give); the peer address of the socket
  actually connected is checked again (`check_peer`).
- `ssl_context`: the usual CAs plus the policy's CA file; never `SSL_CERT_FILE` or other
  environment settings.

The well-known fetch (web_fetch.py) and the httpx transport of web apps (web_transport.py) are
built on these. No environment is read here.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import httpcore
import httpx

from ..descriptor.origin import IpAddress, ip_literal

DEFAULT_MAX_BYTES: Final = 1024 * 1024
DEFAULT_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_MAX_REDIRECTS: Final = 3
ALLOW_PRIVATE_HINT: Final = "AAI_GATEWAY_ALLOW_PRIVATE_WEB=1"
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""`(host, port) -> addresses`: how a host name becomes IP addresses (tests inject their own)."""


@dataclass(frozen=True)
class WebFetchPolicy:
    """The web network rules' settings, for the well-known fetch (its limits) and every request of
    a web app. `cli/` builds it (allow_private from the environment)."""

    allow_private: bool = False  # loopback/private/link-local origins, for tests and local apps
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    ca_file: str | None = None  # a PEM bundle trusted in addition to the usual CAs


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


def ssl_context(policy: WebFetchPolicy) -> ssl.SSLContext:
    context = httpx.create_ssl_context(trust_env=False)
    if policy.ca_file is not None:
        context.load_verify_locations(cafile=policy.ca_file)
    return context
