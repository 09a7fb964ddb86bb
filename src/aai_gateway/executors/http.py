"""The HTTP executor: one shared `httpx.AsyncClient`, requests built by `http_request`.

- One client for every call (connection pooling), created on first use, closed by `aclose`.
  It keeps no cookies between calls and reads no proxy settings or `.netrc` from the
  environment (only `cli/` reads the environment; inject a configured client to use a proxy).
  Its pool checks idle connections cheaply (http_pool.py), which is what keeps many calls in
  flight affordable.
- The tool's timeout covers the whole exchange (connect, redirects, reading the body):
  `TIMEOUT` when it runs out. No connection: `SERVICE_UNAVAILABLE` naming the host.
- Up to `max_redirects` redirects are followed here, not by httpx: httpx only strips
  `Authorization` when a redirect leaves the origin, but credentials may travel in other headers
  (`X-Auth-Token`) or in the query. So `invocation.http_auth` is applied only while the chain
  stays on the original origin, and a hop to another origin carries none of the descriptor's
  headers (only Accept, Accept-Language, User-Agent and Content-Type).
- The body is streamed and abandoned past `max_response_bytes` (EXECUTION_FAILED), counted
  after its content codings are undone a bounded piece at a time (http_decoding.py): a small
  compressed body cannot expand in memory past the limit.
- Status codes map to AAI codes, and bodies to results, in http_response.py.
- Web apps (descriptors fetched by `web_discover`) get a second client whose transport enforces
  the web network rules (discovery/web_transport.py): https only on every hop, addresses checked
  when connecting, private ones only when the policy allows them. Apps from this machine use the
  plain client (a local app may listen on http://127.0.0.1).
- Whatever goes back (the result, an error's message and data) has the call's credentials
  removed (redaction.py): an app that echoes the request must not hand the agent its key. A
  body larger than `IN_LOOP_BODY_BYTES` is parsed and scrubbed in a worker thread. An exception
  whose text may quote a header (h11's LocalProtocolError) is reported by its type only.
- Logs (debug): method, host, path template, status, duration; never values or credentials.
"""

from __future__ import annotations

import functools
import logging
import ssl
import time
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Final

import anyio
import httpcore
import httpx

from .. import __version__
from ..descriptor import ExecutionType
from ..descriptor.model import HttpCall, HttpChannel
from ..discovery.web import NetworkRuleError, RefusedAddressError, Resolver, WebFetchPolicy
from ..discovery.web_transport import WEB_RULES, GuardedTransport, public_url
from ..errors import (
    AaiError,
    ExecutionFailedError,
    ResponseTooLargeError,
    ServiceUnavailableError,
    UnsendableRequestError,
)
from .base import ExecutorBase, ExecutorSettings, Invocation, timeout_error
from .http_decoding import ACCEPTED_CODINGS, decoded_chunks
from .http_pool import CheapChecksBackend, pooled_transport
from .http_request import HttpRequestSpec, build_request
from .http_response import parse_body, status_error
from .redaction import Scrubber

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESPONSE_BYTES: Final = 10 * 1024 * 1024
DEFAULT_MAX_REDIRECTS: Final = 5
ERROR_BODY_READ_BYTES: Final = 64 * 1024
IN_LOOP_BODY_BYTES: Final = 256 * 1024
_CROSS_ORIGIN_HEADERS: Final = frozenset({b"accept", b"accept-language", b"user-agent", b"content-type"})
_LIMITS: Final = httpx.Limits(max_connections=100, max_keepalive_connections=20)


class HttpExecutor(ExecutorBase[HttpChannel]):
    """Runs `http` tools. Safe to call concurrently; one instance serves every HTTP app."""

    channel_class = HttpChannel
    label = "HTTP"
    availability_from = ()

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        ca_file: str | None = None,
        web_policy: WebFetchPolicy | None = None,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        """`client`: use this client for apps from this machine (its owner closes it).
        `transport`: for the client this executor creates itself (tests count connections with
        it). `ca_file`: extra trusted CAs (a company CA, a test CA), on top of the usual ones.
        `web_policy`: the network rules of web apps (only `allow_private` and `ca_file` matter
        here; default: no private addresses, `ca_file`). `resolver` and `network_backend`
        replace name resolution and raw connections of web apps (tests)."""
        self.ca_file = ca_file
        self.web_policy = web_policy or WebFetchPolicy(ca_file=ca_file)
        self._client = client
        self._owns_client = client is None
        self._transport = transport
        self._web_client: httpx.AsyncClient | None = None
        self._resolver = resolver
        self._network_backend = network_backend
        self.max_response_bytes = max_response_bytes
        self.max_redirects = max_redirects

    async def aclose(self) -> None:
        """Close the clients this executor created (an injected one belongs to its owner)."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
        if self._web_client is not None:
            web_client, self._web_client = self._web_client, None
            await web_client.aclose()

    def client(self) -> httpx.AsyncClient:
        """The shared client of apps from this machine, created on first use."""
        if self._client is None:
            verify = httpx.create_ssl_context(trust_env=False)
            if self.ca_file:
                verify.load_verify_locations(cafile=self.ca_file)
            transport = self._transport or pooled_transport(verify, _LIMITS, CheapChecksBackend())
            self._client = _new_client(transport, verify)
        return self._client

    def web_client(self) -> httpx.AsyncClient:
        """The shared client of web apps (the web network rules in its transport)."""
        if self._web_client is None:
            transport = GuardedTransport(
                self.web_policy,
                resolver=self._resolver,
                network_backend=CheapChecksBackend(self._network_backend),
                limits=_LIMITS,
            )
            self._web_client = _new_client(transport, True)
        return self._web_client

    async def execute(self, invocation: Invocation) -> Any:
        """Run the call; the result and any error come back without the call's credentials."""
        try:
            return await self._execute(invocation)
        except AaiError as exc:
            Scrubber.of(invocation.http_auth).error(exc)
            raise

    async def _execute(self, invocation: Invocation) -> Any:
        tool, app_id = invocation.tool, invocation.app.id
        channel = self.channel(invocation)
        call = tool.call if isinstance(tool.call, HttpCall) else None
        spec = build_request(channel, call, tool.name, invocation.arguments, app_id=app_id)
        started = time.monotonic()
        status: int | str = "error"
        try:
            with anyio.fail_after(invocation.timeout_seconds):
                response, body, left_at = await self._exchange(spec, invocation)
            status = response.status_code
        except (TimeoutError, httpx.TimeoutException) as exc:
            status = "timeout"
            raise timeout_error(invocation) from exc
        except httpx.ConnectError as exc:
            raise _unreachable(
                invocation,
                spec,
                f"cannot connect to {_host(spec.url)} ({exc or type(exc).__name__}); is the app running?",
            ) from exc
        except httpx.LocalProtocolError:
            # h11's message quotes the offending header, credentials included: never passed on.
            # build_request and the auth flows refuse such values first; this is the backstop.
            raise UnsendableRequestError(
                app_id,
                tool.name,
                f"the request to {_host(spec.url)} could not be written as "
                "HTTP: a header or the URL holds a character HTTP cannot carry. Nothing was sent",
                url=public_url(spec.url),
            ) from None
        except httpx.InvalidURL as exc:  # build_request refuses what it can foresee; the backstop
            raise UnsendableRequestError(
                app_id,
                tool.name,
                f"the request URL cannot be sent ({exc}). Nothing was sent",
                url=public_url(spec.url),
            ) from None
        except httpx.RemoteProtocolError as exc:  # its message may quote what the app sent: left out
            raise _unreachable(
                invocation, spec, f"{_host(spec.url)} did not answer in valid HTTP ({type(exc).__name__})"
            ) from None
        except httpx.TransportError as exc:
            raise _unreachable(
                invocation, spec, f"the connection to {_host(spec.url)} failed ({type(exc).__name__}: {exc})"
            ) from exc
        except httpx.HTTPError as exc:  # e.g. a body whose declared encoding does not decode
            raise ExecutionFailedError(
                app_id,
                tool.name,
                f"the exchange with {_host(spec.url)} failed ({type(exc).__name__}: {exc})",
                url=public_url(spec.url),
            ) from exc
        except NetworkRuleError as exc:
            raise _refused(invocation, exc) from None
        finally:
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug(
                    "http %s %s %s -> %s in %.1f ms",
                    spec.method,
                    _host(spec.url),
                    spec.path_template,
                    status,
                    (time.monotonic() - started) * 1000,
                )
        scrubber = Scrubber.of(invocation.http_auth)  # after the exchange: a refresh may have renewed tokens
        if not response.is_success:
            raise status_error(invocation, response, body, scrubber, left_origin_at=left_at)
        parser = call.output_parser if call is not None else None

        def result() -> Any:
            parsed = parse_body(body, response, parser, app_id=app_id, tool=tool.name, scrubber=scrubber)
            return scrubber.value(parsed)

        if len(body) > IN_LOOP_BODY_BYTES:  # parsing and scrubbing megabytes: not in the event loop
            return await anyio.to_thread.run_sync(result)
        return result()

    async def _exchange(
        self, spec: HttpRequestSpec, invocation: Invocation
    ) -> tuple[httpx.Response, bytes, httpx.URL | None]:
        """Send the request, following redirects; the final response, its (capped) body, and where
        a redirect first left the app's origin (None: never), after which no credentials go along."""
        web = invocation.app.source.kind == "web"
        client = self.web_client() if web else self.client()
        timeout = _timeout(invocation.timeout_seconds)
        method, url, body = spec.method, httpx.URL(spec.full_url), spec.body
        origin = _origin(url)
        headers = [(k.encode("ascii"), v.encode("utf-8")) for k, v in spec.headers]
        left_at: httpx.URL | None = None
        for hop in range(self.max_redirects + 1):
            request = client.build_request(method, url, headers=headers, content=body, timeout=timeout)
            auth = invocation.http_auth if left_at is None else None
            try:
                response = await client.send(request, auth=auth, follow_redirects=False, stream=True)
            except httpx.ConnectError as exc:
                if hop == 0:
                    raise
                # Not the app's host: the host a redirect sent the call to.
                raise ServiceUnavailableError(
                    invocation.app.id,
                    f"the app redirected to {_host(str(url))}, which cannot be connected to "
                    f"({exc or type(exc).__name__})",
                    tool=invocation.tool.name,
                    host=_host(str(url)),
                    url=public_url(url),
                    redirected_from=public_url(spec.url),
                ) from exc
            following = response.next_request
            if following is None:
                try:
                    return response, await self._read(response, invocation), left_at
                finally:
                    await response.aclose()
            await response.aclose()
            if hop == self.max_redirects:
                raise _too_many_redirects(invocation, self.max_redirects, response)
            if following.url.scheme not in ("http", "https"):
                raise ExecutionFailedError(
                    invocation.app.id,
                    invocation.tool.name,
                    "the app redirected to a "
                    f"{following.url.scheme!r} URL, which the gateway does not follow",
                    url=public_url(url),
                )
            if web and following.url.scheme != "https":
                raise _web_rule_error(
                    invocation,
                    f"the app redirected to {public_url(following.url)}, which is not https",
                    url=public_url(url),
                    redirect=public_url(following.url),
                )
            if following.method != method:
                body = None
                headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
            method, url = following.method, following.url
            if left_at is None and _origin(url) != origin:
                left_at = url
                headers = [(k, v) for k, v in headers if k.lower() in _CROSS_ORIGIN_HEADERS]
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, response: httpx.Response, invocation: Invocation) -> bytes:
        """The body: all of it for a success (EXECUTION_FAILED past the limit), the start of it
        for an error (enough for a message)."""
        limit = self.max_response_bytes
        if not response.is_success:
            return await _read_start(response, min(limit, ERROR_BODY_READ_BYTES))
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(invocation, limit, response)
        chunks: list[bytes] = []
        size = 0
        async for chunk in decoded_chunks(response):
            size += len(chunk)
            if size > limit:
                raise _too_large(invocation, limit, response)
            chunks.append(chunk)
        return b"".join(chunks)


async def _read_start(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in decoded_chunks(response):
        chunks.append(chunk[: limit - size])
        size += len(chunks[-1])
        if size >= limit:
            break
    return b"".join(chunks)


def _new_client(
    transport: httpx.AsyncBaseTransport | None, verify: ssl.SSLContext | bool
) -> httpx.AsyncClient:
    """No cookies kept between calls, no redirects followed by httpx, no environment read."""
    return httpx.AsyncClient(
        transport=transport,
        verify=verify,
        follow_redirects=False,
        trust_env=False,
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        headers={"User-Agent": f"aai-gateway/{__version__}", "Accept-Encoding": ACCEPTED_CODINGS},
        limits=_LIMITS,
    )


def _too_large(invocation: Invocation, limit: int, response: httpx.Response) -> ResponseTooLargeError:
    return ResponseTooLargeError(invocation.app.id, invocation.tool.name, limit, public_url(response.url))


@functools.lru_cache(maxsize=64)
def _timeout(seconds: float) -> httpx.Timeout:
    """httpx's timeouts for a tool's timeout (one object per value, not one per call)."""
    return httpx.Timeout(seconds)


def _unreachable(invocation: Invocation, spec: HttpRequestSpec, what: str) -> ServiceUnavailableError:
    """SERVICE_UNAVAILABLE: `what` went wrong reaching the app's host."""
    return ServiceUnavailableError(
        invocation.app.id,
        what,
        tool=invocation.tool.name,
        host=_host(spec.url),
        url=public_url(spec.url),
    )


def _host(url: str) -> str:
    """host[:port] of a URL, never its user info."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def _too_many_redirects(invocation: Invocation, limit: int, response: httpx.Response) -> AaiError:
    return ExecutionFailedError(
        invocation.app.id,
        invocation.tool.name,
        f"the app redirected more than {limit} times; the gateway stopped following",
        max_redirects=limit,
        url=public_url(response.url),
    )


def _refused(invocation: Invocation, exc: NetworkRuleError) -> AaiError:
    if isinstance(exc, RefusedAddressError):
        return _web_rule_error(
            invocation,
            f"refusing to connect: {exc}",
            host=exc.host,
            address=exc.address,
            reason=exc.reason,
        )
    return _web_rule_error(invocation, f"refusing the request: {exc}")


def _web_rule_error(invocation: Invocation, what: str, **data: Any) -> AaiError:
    """INVALID_REQUEST, as `web_discover` answers for the same rules; nothing was sent."""
    app_id, tool = invocation.app.id, invocation.tool.name
    return UnsendableRequestError(
        app_id,
        tool,
        f"{what}; {WEB_RULES}. Nothing was sent there",
        **data,
        rule=WEB_RULES,
    )


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], HttpExecutor]:
    """The entry point of `http` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.HTTP,), HttpExecutor(ca_file=settings.ca_file, web_policy=settings.web_policy)
