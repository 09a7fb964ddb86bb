"""Web origins (scheme, host, port) as the gateway writes them. Pure: parsing only, no network.

- `normalize_origin` turns what a user or agent names (a full https URL, a domain, or
  `domain:port/path`) into `https://host[:port]`: lower-case host (IDNA-encoded), the default
  port left out. Only https: an `http://` reference is refused, never upgraded, so what was named
  is what gets fetched.
- `url_origin` gives the origin of any http(s) URL as a comparable tuple: two URLs are on the
  same origin exactly when scheme, host and port (with the scheme's default filled in) are equal.

httpx, whose URL parse this uses, is imported by the first URL that needs it (~20 ms): a worker
that reads descriptors at a first start (discovery/load_workers) mostly meets plain base URLs,
read off by `url_origin` without it, and starts that much sooner.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import Any, Final, NamedTuple

from ..errors import AaiError, UsageError

_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOSTNAME: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NUMBER = r"(?:0x[0-9a-f]*|[0-9]+)"
_NUMERIC_IPV4: Final = re.compile(rf"{_NUMBER}(?:\.{_NUMBER}){{0,3}}")
_NOT_IN_AN_ADDRESS: Final = re.compile(r"[^0-9A-Fa-f:.]")  # what no IPv4 or IPv6 address holds
DEFAULT_PORTS: Final = {"http": 80, "https": 443}

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Origin(NamedTuple):
    """An origin to compare: `("https", "api.example.com", 443)`."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = DEFAULT_PORTS.get(self.scheme)
        return f"{self.scheme}://{shown}" + ("" if self.port == default else f":{self.port}")


def _invalid(message: str, **data: Any) -> AaiError:
    return UsageError(message, **data)


def normalize_origin(reference: str) -> str:
    """`https://api.example.com/x`, `api.example.com`, `Api.Example.com:8443/path` →
    `https://api.example.com[:8443]`. INVALID_REQUEST for anything else (http, other schemes,
    credentials in the URL, malformed hosts)."""
    text = reference.strip()
    if not text:
        raise _invalid("a web origin needs a URL or domain, such as notion.com", reference=reference)
    if any(c.isspace() or ord(c) < 0x20 for c in text):
        raise _invalid(f"{reference!r} is not a URL or domain (it contains whitespace)", reference=reference)
    scheme, sep, _ = text.partition("://")
    if sep:
        if scheme.lower() != "https":
            raise _invalid(
                f"web apps are fetched over https only; {reference!r} uses {scheme.lower() or 'no'} scheme. "
                f"Pass https://… or just the domain",
                reference=reference,
            )
        candidate = text
    else:
        candidate = "https://" + text
    import httpx  # noqa: PLC0415 (see the module's text)

    try:
        url = httpx.URL(candidate)
    except (httpx.InvalidURL, ValueError) as exc:
        raise _invalid(f"{reference!r} is not a valid URL or domain: {exc}", reference=reference) from exc
    if url.userinfo:
        raise _invalid(
            f"{reference!r} carries a user name or password; pass the site's URL or domain alone",
            reference=reference,
        )
    host = checked_host(url.raw_host, reference)
    return str(Origin("https", host, url.port or 443))


def checked_host(raw_host: bytes, reference: str) -> str:
    """The host of a parsed URL in lower case, without a trailing dot; INVALID_REQUEST when it is
    empty or neither an IP address nor a valid host name."""
    try:
        host = raw_host.decode("ascii").lower()
    except UnicodeDecodeError as exc:  # httpx IDNA-encodes hosts; this is a defence only
        raise _invalid(f"{reference!r} has a host that is not valid", reference=reference) from exc
    host = canonical_host(host.removesuffix("."))
    if not host:
        raise _invalid(f"{reference!r} has no host name", reference=reference)
    if ip_literal(host) is None and not _HOSTNAME.fullmatch(host):
        raise _invalid(f"{reference!r} does not name a valid host ({host!r})", reference=reference)
    return host


def canonical_host(host: str) -> str:
    """One spelling per address: an IP address in its canonical form (`::1` for `0:0::1`;
    `127.0.0.1` for the shorthands `127.1`, `0x7f.0.0.1`, `2130706433`, which the system's
    resolver also accepts), anything else as given. Two spellings of one address must never be
    two origins: the same-site rule and every binding compare these."""
    ip = ip_literal(host)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return f"::ffff:{ip.ipv4_mapped}"  # the form people write (and Python 3.13 prints)
    if ip is not None:
        return ip.compressed
    if _NUMERIC_IPV4.fullmatch(host):
        try:
            return str(ipaddress.IPv4Address(socket.inet_aton(host)))
        except OSError:
            return host
    return host


def origin_text(host: str, port: int | None) -> str:
    """`https://host[:port]` for a checked host (the port left out when it is 443 or None)."""
    return str(Origin("https", host, port or 443))


def split_origin(origin: str) -> tuple[str, int | None]:
    """`https://[::1]:8443` → (`::1`, 8443); the port is None when it is 443."""
    import httpx  # noqa: PLC0415 (see the module's text)

    url = httpx.URL(origin)
    host = url.raw_host.decode("ascii")
    return host, (url.port if url.port not in (None, 443) else None)


# The common base URL, `https://api.example.com/v1`: a lower-case scheme and host name, no port,
# user or IP address, and a plain path. Its origin is read off it; httpx's parse (~25 µs, most of
# an HTTP app's card) is for every other URL.
_PLAIN_URL: Final = re.compile(rf"(https?)://({_HOSTNAME.pattern})(?:/[A-Za-z0-9._~/-]*)?")


def url_origin(url: str) -> Origin | None:
    """The origin of an http(s) URL, None when it is not one (or has no valid host)."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain is not None and not _NUMERIC_IPV4.fullmatch(plain[2]) and ip_literal(plain[2]) is None:
        scheme = plain[1]
        return Origin(scheme, plain[2], DEFAULT_PORTS[scheme])
    import httpx  # noqa: PLC0415 (see the module's text)

    try:
        parsed = httpx.URL(url.strip())
        scheme = parsed.scheme.lower()
        if scheme not in DEFAULT_PORTS or parsed.userinfo:
            return None
        host = checked_host(parsed.raw_host, url)
    except (httpx.InvalidURL, ValueError, AaiError):
        return None
    return Origin(scheme, host, parsed.port or DEFAULT_PORTS[scheme])


def ip_literal(host: str) -> IpAddress | None:
    address = host.strip("[]").split("%", 1)[0]
    if _NOT_IN_AN_ADDRESS.search(address):  # a host name: spares ip_address raising, ~5 µs
        return None
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None
