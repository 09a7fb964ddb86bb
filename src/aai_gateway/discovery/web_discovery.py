"""`web_discover`: from what the agent typed to a usable, origin-bound web app descriptor.

1. Resolve the reference (spec "Name Resolution"): a full URL or a domain is used as is
   (`normalize_origin`); anything else is looked up by id, name or alias among the web apps
   already discovered (the caller's `known_apps` and the cache) and stands for that app's origin.
   A reference that looks like a real domain (`notion.com`) is always that domain, even if some
   descriptor names itself after it: a descriptor cannot capture another site's name.
2. A fresh cache entry (24 h TTL) answers without the network; otherwise fetch
   `/.well-known/aai.json` (`web_fetch.fetch_well_known`, which enforces https, public addresses, size,
   time and redirect limits). When the fetch fails for want of a network or a working server
   (SERVICE_UNAVAILABLE) and a cached copy exists, that copy is returned with `stale=True` and a
   note saying why. 404/410 (UNKNOWN_APP) also drops the cached copy: the site says it has none.
3. Accept the descriptor only if it is usable as a web app fetched from that origin:
   - it is loaded for platform `web`, never for the gateway's own OS: a descriptor from the web
     never binds desktop automation (AppleScript, DBus, COM, stdio…), whatever sections it has;
   - it must have a `web` platform, and every base URL must be https and on the same site
     (registrable domain) as the origin; IP and single-label origins must match exactly, port
     included;
   - its OAuth authorization and token endpoints and its app-credential token endpoint must be
     https (they receive App Secrets, codes and refresh tokens). They may be on another site
     (identity providers often are), but one named by an IP address or a single-label host
     (`localhost`) must be the origin itself, port included: nothing else ties such a host to the
     site. Their addresses are checked again on every request (web_transport.py);
   - `app.source` is `Source(kind="web", location=<final URL>, origin=<origin asked for>)`: the
     origin is what credentials and consent bind to, not the self-declared `app.id`.
   Failures raise `DescriptorError` (INVALID_REQUEST with every problem and its JSON pointer).
4. Store the body in the cache (a write failure is logged; discovery still succeeds).

Cached entries for loopback or private IP origins (and `localhost`) are ignored unless the policy
allows private addresses, so turning that permission off also stops their cached copies.
Logs never hold descriptor bodies or secrets.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpx

from ..descriptor import AppDescriptor, Platform, Source
from ..descriptor.model import HttpChannel
from ..descriptor.model_auth import AppCredentialAuth, Auth, OAuth2Auth
from ..descriptor.origin import ip_literal, normalize_origin, split_origin
from ..descriptor.quoting import quoted
from ..errors import AaiError, DescriptorError, ErrorCode, Problem, UsageError, WebAppNotFoundError
from .web import WebFetchPolicy, address_refusal
from .web_cache import CachedEntry, WebCache
from .web_fetch import FetchedDescriptor, fetch_well_known
from .web_sites import looks_like_domain, registrable_domain, same_site

logger = logging.getLogger(__name__)

WEB: Platform = "web"
Fetcher = Callable[[str, WebFetchPolicy], Awaitable[FetchedDescriptor]]

_HOST_PORT = re.compile(r"[^:\s]+:\d{1,5}")
_BASE_URL_POINTER = {"A": "/execution/base_url", "B": "/platforms/web/base_url", "C": "/execution/baseUrl"}
_PLATFORM_POINTER = {"A": "/platform", "B": "/platforms", "C": "/platform"}
_ENDPOINT_POINTERS = {
    ("A", "oauth2", "authorization endpoint"): "/auth/oauth2/authorization_endpoint",
    ("A", "oauth2", "token endpoint"): "/auth/oauth2/token_endpoint",
    ("B", "oauth2", "authorization endpoint"): "/platforms/web/auth/auth_url",
    ("B", "oauth2", "token endpoint"): "/platforms/web/auth/token_url",
    ("C", "oauth2", "authorization endpoint"): "/auth/oauth2/authorizationEndpoint",
    ("C", "oauth2", "token endpoint"): "/auth/oauth2/tokenEndpoint",
    ("C", "appCredential", "token endpoint"): "/auth/appCredential/tokenEndpoint",
}


@dataclass(frozen=True)
class WebDiscoveryResult:
    app: AppDescriptor
    from_cache: bool
    stale: bool
    note: str | None = None
    warnings: tuple[Problem, ...] = ()  # validation warnings of a freshly fetched descriptor


class WebDiscovery:
    """Discovers web apps on demand, through `cache`, within `policy`.

    `host_platform` is accepted for symmetry with local discovery but does not choose bindings:
    web descriptors are always loaded for platform `web` (see the module docstring).
    `fetch` replaces `fetch_well_known` (tests)."""

    def __init__(
        self,
        cache: WebCache,
        policy: WebFetchPolicy,
        host_platform: Platform | None = None,
        *,
        fetch: Fetcher | None = None,
    ) -> None:
        self.cache = cache
        self.policy = policy
        self.host_platform = host_platform
        self._fetch: Fetcher = fetch or fetch_well_known
        self._locks: dict[str, anyio.Lock] = {}

    # ----------------------------------------------------------------- discovery

    async def discover(self, reference: str, known_apps: Sequence[AppDescriptor] = ()) -> WebDiscoveryResult:
        origin = self.resolve(reference, known_apps)
        lock = self._locks.setdefault(origin, anyio.Lock())
        async with lock:  # concurrent calls for one origin: one fetch, the others read the cache
            return await self._discover(origin)

    async def _discover(self, origin: str) -> WebDiscoveryResult:
        cached = self.cache.get(origin) if self._usable_offline(origin) else None
        cached_app = self._load_cached(cached) if cached is not None else None
        if cached is not None and cached.fresh and cached_app is not None:
            logger.debug("web discover %s: fresh cached copy", origin)
            return WebDiscoveryResult(cached_app, from_cache=True, stale=False)
        try:
            fetched = await self._fetch(origin, self.policy)
        except AaiError as exc:
            if exc.code == ErrorCode.SERVICE_UNAVAILABLE and cached is not None and cached_app is not None:
                logger.info("web discover %s: using the stale cached copy (%s)", origin, exc.message)
                return WebDiscoveryResult(
                    cached_app, from_cache=True, stale=True, note=self._stale_note(cached, exc)
                )
            if exc.code == ErrorCode.UNKNOWN_APP and cached is not None:
                self.cache.clear(origin)
            raise
        app, warnings = accept_descriptor(fetched)
        try:
            self.cache.put(origin, fetched.source_url, fetched.body)
        except OSError as exc:
            logger.warning("cannot write the web cache for %s: %s", origin, exc)
        return WebDiscoveryResult(app, from_cache=False, stale=False, warnings=warnings)

    def _stale_note(self, cached: CachedEntry, failure: AaiError) -> str:
        now = self.cache.clock()
        return (
            f"Stale copy: refreshing {cached.origin} failed ({failure.message}), so this is the cached "
            f"descriptor fetched {_age(now - cached.fetched_at)} ago from {cached.source_url}, which "
            f"expired {_age(now - cached.expires)} ago. It may be out of date."
        )

    # ----------------------------------------------------------------- names

    def resolve(self, reference: str, known_apps: Sequence[AppDescriptor] = ()) -> str:
        """The origin `reference` stands for (see the module docstring, step 1)."""
        text = reference.strip()
        if "://" in text or "/" in text:
            return normalize_origin(text)
        if _HOST_PORT.fullmatch(text) or looks_like_domain(text):
            return normalize_origin(text)
        wanted = text.casefold()
        web_apps = [*(a for a in known_apps if _is_web(a)), *self.cached_apps()]
        origins = list(dict.fromkeys(a.source.origin for a in web_apps if _answers_to(a, wanted)))
        if len(origins) == 1 and origins[0] is not None:
            return origins[0]
        if len(origins) > 1:
            raise UsageError(
                f"{reference!r} names web apps from several sites ({', '.join(map(str, origins))}); "
                "pass the URL or domain of the one meant",
                reference=reference,
                origins=origins,
            )
        if "." in text:  # a host under a suffix the list does not know: let DNS decide
            return normalize_origin(text)
        known = sorted({a.id for a in web_apps})
        raise WebAppNotFoundError(
            f"{reference!r} is not a URL or domain, and no discovered web app has that id, name or alias. "
            "Pass the web app's domain (for example notion.com, or api.example.com)",
            reference=reference,
            known_web_apps=known,
        )

    # ----------------------------------------------------------------- the cache

    def cached_apps(self) -> list[AppDescriptor]:
        """Every cached descriptor that still loads, fresh or not (for loading at startup)."""
        apps: list[AppDescriptor] = []
        for info in self.cache.entries():
            if not self._usable_offline(info.origin):
                logger.debug("web cache %s skipped: private addresses are not allowed", info.host)
                continue
            entry = self.cache.get(info.origin)
            app = self._load_cached(entry) if entry is not None else None
            if app is not None:
                apps.append(app)
        return apps

    def _load_cached(self, entry: CachedEntry) -> AppDescriptor | None:
        fetched = FetchedDescriptor(entry.origin, entry.source_url, entry.body, 200)
        try:
            app, _ = accept_descriptor(fetched)
        except AaiError as exc:
            count = len(exc.data.get("problems", ())) or 1
            logger.warning(
                "ignoring the web cache entry for %s: it is not a usable web descriptor (%d problems); "
                "it will be fetched again",
                entry.origin,
                count,
            )
            return None
        return app

    def _usable_offline(self, origin: str) -> bool:
        """Without the private-address permission, a cached loopback/private origin is ignored."""
        if self.policy.allow_private:
            return True
        host, _ = split_origin(origin)
        if host == "localhost" or host.endswith(".localhost"):
            return False
        return ip_literal(host) is None or address_refusal(host) is None


# --------------------------------------------------------------------------- acceptance


def accept_descriptor(fetched: FetchedDescriptor) -> tuple[AppDescriptor, tuple[Problem, ...]]:
    """Load a fetched body as a web app bound to its origin; DescriptorError if it cannot be one."""
    source = Source(kind="web", location=fetched.source_url, origin=fetched.origin)
    from ..descriptor.loader import load_text  # noqa: PLC0415 (the loader: when a file is read)

    result = load_text(fetched.body, source, WEB)
    if result.descriptor is None:
        raise DescriptorError(fetched.source_url, result.problems)
    problems = web_problems(result.descriptor, fetched.origin)
    if problems:
        raise DescriptorError(fetched.source_url, problems)
    return result.descriptor, tuple(result.warnings)


def web_problems(app: AppDescriptor, origin: str) -> list[Problem]:
    """Why `app`, fetched from `origin`, cannot be used as a web app (empty when it can)."""
    if app.platform != WEB:
        return [
            Problem(
                _PLATFORM_POINTER[app.dialect],
                f"web_discover accepts only descriptors for platform 'web'; this one is for "
                f"{', '.join(app.declared_platforms) or 'no platform'}",
            )
        ]
    problems: list[Problem] = []
    pointer = _BASE_URL_POINTER[app.dialect]
    seen: set[str] = set()
    auths: list[Auth] = []
    for tool in app.tools:
        channel = tool.channel
        if not isinstance(channel, HttpChannel):
            problems.append(
                Problem(pointer, f"tool {tool.name!r} uses {channel.type.value!r}; web apps use http only")
            )
            continue
        if channel.auth is not None and channel.auth not in auths:
            auths.append(channel.auth)
        if channel.base_url in seen:
            continue
        seen.add(channel.base_url)
        problem = _base_url_problem(channel.base_url, origin)
        if problem is not None:
            problems.append(Problem(pointer, problem))
    for auth in auths:
        for what, url in _endpoints(auth):
            problem = _endpoint_problem(what, url, origin)
            if problem is not None:
                problems.append(Problem(_ENDPOINT_POINTERS.get((app.dialect, auth.type, what), ""), problem))
    return problems


def _base_url_problem(base_url: str, origin: str) -> str | None:
    parsed = _https_host(base_url, "base URL", "a web app's requests carry its credentials")
    if isinstance(parsed, str):
        return parsed
    host, port = parsed
    origin_host, origin_port = split_origin(origin)
    if not same_site(origin_host, host, port=origin_port, other_port=port):
        return (
            f"base URL {quoted(base_url)} is not on the same site as {origin}, where this descriptor was "
            f"fetched from: a site may only describe its own APIs. Discover {host}'s own descriptor instead"
        )
    return None


def _endpoints(auth: Auth) -> list[tuple[str, str]]:
    if isinstance(auth, OAuth2Auth):
        return [
            ("authorization endpoint", auth.authorization_endpoint),
            ("token endpoint", auth.token_endpoint),
        ]
    if isinstance(auth, AppCredentialAuth):
        return [("token endpoint", auth.token_endpoint)]
    return []


def _endpoint_problem(what: str, url: str, origin: str) -> str | None:
    """An auth endpoint of a web app: https; on any site, but an IP address or single-label
    host must be the origin itself (see the module docstring)."""
    parsed = _https_host(url, what, "it receives App Secrets, authorization codes or refresh tokens")
    if isinstance(parsed, str):
        return parsed
    host, port = parsed
    origin_host, origin_port = split_origin(origin)
    if registrable_domain(host) is None and not same_site(
        origin_host, host, port=origin_port, other_port=port
    ):
        return (
            f"{what} {quoted(url)} is named by an IP address or a single-label host that is not {origin}, "
            "where this descriptor was fetched from; such an endpoint must be the origin itself"
        )
    return None


def _https_host(url: str, what: str, why: str) -> tuple[str, int | None] | str:
    """(host, port) of an https URL with one unambiguous host, or the problem with it."""
    try:
        parts = urlsplit(url)
        parsed = httpx.URL(url)
        host = (parts.hostname or "").lower().removesuffix(".")
        httpx_host = parsed.raw_host.decode("ascii").lower().removesuffix(".")
    except (ValueError, httpx.InvalidURL, UnicodeDecodeError):
        return f"{what} {quoted(url)} is not a valid URL"
    if parts.scheme.lower() != "https" or parsed.scheme != "https":
        return f"{what} {quoted(url)} must be https: {why} (the descriptor was fetched over https)"
    if not host or host != httpx_host:
        return f"{what} {quoted(url)} has no unambiguous host"
    return host, parsed.port


def _is_web(app: AppDescriptor) -> bool:
    return app.source.kind == "web" and app.source.origin is not None


def _answers_to(app: AppDescriptor, wanted: str) -> bool:
    names = [app.id, *app.names.names.values(), *app.aliases]
    return any(name.casefold() == wanted for name in names)


def _age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"
