"""Which hosts are one site: the registrable domain under the Public Suffix List.

A web descriptor's base URLs must be on the site it was fetched from (`same_site`); an app
reference is taken for a domain only when it looks like one (`looks_like_domain`).
"""

from __future__ import annotations

from functools import cache

from publicsuffixlist import PublicSuffixList

from ..descriptor.origin import canonical_host, ip_literal


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
