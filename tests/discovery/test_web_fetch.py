"""Fetching `/.well-known/aai.json`: https only, public addresses only, and bounded in size, time
and redirects, against a real HTTPS server on 127.0.0.1 (trusted through a test CA)."""

from __future__ import annotations

import gzip
import itertools
import time
from collections.abc import Iterator

import pytest

from aai_gateway.descriptor.origin import normalize_origin
from aai_gateway.discovery.web import WebFetchPolicy, address_refusal
from aai_gateway.discovery.web_fetch import WELL_KNOWN_PATH, fetch_well_known
from aai_gateway.discovery.web_sites import looks_like_domain, registrable_domain, same_site
from aai_gateway.errors import AaiError, ErrorCode
from tests.discovery.web_support import (
    DisguisingBackend,
    HttpsServer,
    LocalCa,
    RebindingBackend,
    RecordingBackend,
    Route,
    closed_port,
    fixed_resolver,
    web_descriptor,
)

MIB = 1024 * 1024
UNSPECIFIED = "0.0.0.0"  # noqa: S104 (an address to refuse, not one to bind)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def server(ca: LocalCa) -> Iterator[HttpsServer]:
    running = HttpsServer(ca).start()
    try:
        yield running
    finally:
        running.stop()


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize(
    ("reference", "origin"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("https://api.example.com/v1/pages?x=1#top", "https://api.example.com"),
        ("HTTPS://API.Example.COM:443/", "https://api.example.com"),
        ("api.example.com", "https://api.example.com"),
        ("  notion.com/some/page  ", "https://notion.com"),
        ("notion.com.", "https://notion.com"),
        ("example.com:8443/x", "https://example.com:8443"),
        ("https://127.0.0.1:8443", "https://127.0.0.1:8443"),
        ("https://[::1]:8443/", "https://[::1]:8443"),
        ("bücher.example", "https://xn--bcher-kva.example"),
        ("localhost", "https://localhost"),
    ],
)
def test_a_url_a_domain_or_a_domain_with_a_path_becomes_an_https_origin(reference: str, origin: str) -> None:
    assert normalize_origin(reference) == origin


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("http://api.example.com", "https only"),
        ("HTTP://api.example.com", "https only"),
        ("ftp://api.example.com", "https only"),
        ("://api.example.com", "https only"),
        ("https://user:secret@api.example.com", "user name or password"),
        ("api.example.com@evil.example", "user name or password"),
        ("", "needs a URL or domain"),
        ("   ", "needs a URL or domain"),
        ("notion com", "whitespace"),
        ("https://under_score.example", "valid host"),
        ("https://-bad-.example", "valid host"),
        ("https://", "no host"),
    ],
)
def test_http_other_schemes_credentials_and_malformed_hosts_are_refused(reference: str, says: str) -> None:
    with pytest.raises(AaiError) as caught:
        normalize_origin(reference)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert says in caught.value.message


@pytest.mark.parametrize(
    ("host", "other", "same"),
    [
        ("notion.com", "api.notion.com", True),
        ("www.notion.com", "api.notion.com", True),
        ("NOTION.com.", "api.notion.com", True),
        ("evil.example", "api.notion.com", False),
        ("notion.com.evil.example", "api.notion.com", False),
        ("a.github.io", "b.github.io", False),
        ("example.co.uk", "api.example.co.uk", True),
        ("co.uk", "example.co.uk", False),
        ("127.0.0.1", "127.0.0.1", True),
        ("127.0.0.1", "127.0.0.2", False),
        ("::1", "[::1]", True),
        ("localhost", "localhost", True),
        ("localhost", "127.0.0.1", False),
    ],
)
def test_same_site_means_the_same_registrable_domain_or_the_very_same_host(
    host: str, other: str, same: bool
) -> None:
    assert same_site(host, other) is same
    assert same_site(other, host) is same


def test_ip_addresses_and_public_suffixes_have_no_registrable_domain() -> None:
    assert registrable_domain("api.notion.com") == "notion.com"
    assert registrable_domain("127.0.0.1") is None
    assert registrable_domain("github.io") is None
    assert registrable_domain("localhost") is None


@pytest.mark.parametrize(
    ("text", "domain"),
    [
        ("notion.com", True),
        ("api.example.co.uk", True),
        ("127.0.0.1", True),
        ("localhost", True),
        ("com.notion.api", False),
        ("com.example.webtest", False),
        ("Notion", False),
    ],
)
def test_only_names_under_a_known_public_suffix_look_like_domains(text: str, domain: bool) -> None:
    assert looks_like_domain(text) is domain


# --------------------------------------------------------------------------- addresses


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        (UNSPECIFIED, "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "private"),
        ("100.64.0.1", "non-public"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fc00::1", "private"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::a00:1", "private"),
        ("2002:7f00:1::", "loopback"),
    ],
)
def test_non_public_addresses_are_named_for_what_they_are(address: str, reason: str) -> None:
    assert address_refusal(address) == reason


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_public_addresses_including_ipv4_carried_in_ipv6_are_allowed(address: str) -> None:
    assert address_refusal(address) is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("origin", "address"),
    [
        ("https://127.0.0.1", "127.0.0.1"),
        ("https://10.0.0.8", "10.0.0.8"),
        ("https://192.168.1.20", "192.168.1.20"),
        ("https://169.254.169.254", "169.254.169.254"),
        ("https://[::1]", "::1"),
        ("https://[fe80::1]", "fe80::1"),
        ("https://[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        (f"https://{UNSPECIFIED}", UNSPECIFIED),
    ],
)
async def test_private_addresses_are_refused_before_any_connection(origin: str, address: str) -> None:
    backend = RecordingBackend()
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(origin, WebFetchPolicy(), network_backend=backend)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["address"] == address
    assert "AAI_GATEWAY_ALLOW_PRIVATE_WEB=1" in caught.value.message
    assert backend.attempts == []


@pytest.mark.anyio
async def test_a_host_name_resolving_to_loopback_is_refused_before_any_connection() -> None:
    backend = RecordingBackend()
    with pytest.raises(AaiError) as caught:
        await fetch_well_known("localhost", WebFetchPolicy(), network_backend=backend)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["host"] == "localhost"
    assert caught.value.data["reason"] == "loopback"
    assert backend.attempts == []


@pytest.mark.anyio
async def test_one_private_answer_among_public_ones_refuses_the_host() -> None:
    backend = RecordingBackend()
    resolver = fixed_resolver("93.184.216.34", "10.0.0.5")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(
            "mixed.example.com", WebFetchPolicy(), resolver=resolver, network_backend=backend
        )
    assert caught.value.data["address"] == "10.0.0.5"
    assert backend.attempts == []


@pytest.mark.anyio
async def test_the_real_loopback_server_sees_no_connection_without_the_permission(
    server: HttpsServer, ca: LocalCa
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy(allow_private=False))
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert server.connections == 0


@pytest.mark.anyio
async def test_the_connection_goes_to_the_checked_address_without_resolving_again(
    server: HttpsServer, ca: LocalCa
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor("https://localhost/api"))
    resolver = fixed_resolver("127.0.0.1")
    fetched = await fetch_well_known(f"localhost:{server.port}", ca.policy(), resolver=resolver)
    assert fetched.origin == f"https://localhost:{server.port}"
    assert resolver.asked == ["localhost"]


@pytest.mark.anyio
async def test_a_connection_that_lands_on_a_private_address_is_refused_before_the_request(
    server: HttpsServer, ca: LocalCa
) -> None:
    """DNS said public, the socket says loopback (rebinding, or a hijacked route): refused on the
    peer address of the socket itself, before anything is sent."""
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    backend = RebindingBackend(server.port)
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(
            "rebind.example.com",
            ca.policy(allow_private=False),
            resolver=fixed_resolver("93.184.216.34"),
            network_backend=backend,
        )
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["address"] == "127.0.0.1"
    assert "connected to 127.0.0.1" in caught.value.message
    assert backend.attempts == [("93.184.216.34", 443)]
    assert server.requests == []


# --------------------------------------------------------------------------- fetching


@pytest.mark.anyio
async def test_the_descriptor_is_fetched_from_the_well_known_path(server: HttpsServer, ca: LocalCa) -> None:
    server.serve(WELL_KNOWN_PATH, b'{"hello": "world"}')
    fetched = await fetch_well_known(server.origin + "/some/page", ca.policy())
    assert fetched.origin == server.origin
    assert fetched.source_url == server.origin + WELL_KNOWN_PATH
    assert fetched.body == b'{"hello": "world"}'
    assert fetched.status == 200
    assert server.requests == [WELL_KNOWN_PATH]


@pytest.mark.anyio
async def test_a_server_certificate_from_an_unknown_ca_is_refused(server: HttpsServer) -> None:
    server.serve(WELL_KNOWN_PATH, b"{}")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, WebFetchPolicy(allow_private=True))
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "TLS" in caught.value.message
    assert server.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410])
async def test_a_missing_descriptor_is_an_unknown_app_naming_the_url(
    server: HttpsServer, ca: LocalCa, status: int
) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(status=status, body=b"nothing here")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert caught.value.code == ErrorCode.UNKNOWN_APP
    assert f"no aai.json at {server.origin}{WELL_KNOWN_PATH}" in caught.value.message
    assert caught.value.data["status"] == status


@pytest.mark.anyio
async def test_a_server_error_is_service_unavailable_naming_the_url_and_status(
    server: HttpsServer, ca: LocalCa
) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(status=503, body=b"down for maintenance")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert server.origin + WELL_KNOWN_PATH in caught.value.message
    assert "503 Service Unavailable" in caught.value.message


@pytest.mark.anyio
async def test_nothing_listening_is_service_unavailable(ca: LocalCa) -> None:
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(f"https://127.0.0.1:{closed_port()}", ca.policy())
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "cannot connect" in caught.value.message


@pytest.mark.anyio
async def test_an_unresolvable_name_is_service_unavailable(ca: LocalCa) -> None:
    async def no_such_host(host: str, port: int) -> list[str]:
        raise OSError(-2, "Name or service not known")

    with pytest.raises(AaiError) as caught:
        await fetch_well_known("nowhere.example.com", ca.policy(), resolver=no_such_host)
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "cannot resolve nowhere.example.com" in caught.value.message


# --------------------------------------------------------------------------- limits


@pytest.mark.anyio
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
async def test_a_body_one_byte_over_a_mebibyte_is_cut_off(
    server: HttpsServer, ca: LocalCa, declared: bool
) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(body=b" " * (MIB + 1), content_length=declared)
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert f"limit of {MIB} bytes" in caught.value.message
    assert caught.value.data["max_bytes"] == MIB


@pytest.mark.anyio
async def test_a_body_of_exactly_the_limit_is_read(server: HttpsServer, ca: LocalCa) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(body=b" " * 4096, content_length=False)
    fetched = await fetch_well_known(server.origin, ca.policy(max_bytes=4096))
    assert len(fetched.body) == 4096


@pytest.mark.anyio
async def test_a_compressed_body_is_not_inflated_past_the_limit(server: HttpsServer, ca: LocalCa) -> None:
    bomb = gzip.compress(b" " * (4 * MIB))
    assert len(bomb) < MIB
    server.routes[WELL_KNOWN_PATH] = Route(body=bomb, headers={"Content-Encoding": "gzip"})
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert f"limit of {MIB} bytes" in caught.value.message


@pytest.mark.anyio
async def test_a_compressed_body_within_the_limit_is_inflated(server: HttpsServer, ca: LocalCa) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(
        body=gzip.compress(b'{"a": 1}'), headers={"Content-Encoding": "gzip"}
    )
    fetched = await fetch_well_known(server.origin, ca.policy())
    assert fetched.body == b'{"a": 1}'


@pytest.mark.anyio
@pytest.mark.parametrize(
    "route",
    [
        Route(body=b" " * 100, drip_seconds=0.1),
        Route(body=b"{}", delay_seconds=20),
    ],
    ids=["dripping-body", "silent-server"],
)
async def test_a_slow_server_is_cut_off_at_the_time_limit(
    server: HttpsServer, ca: LocalCa, route: Route
) -> None:
    """100 bytes at 0.1 s each would take 10 s; every single read is quick, only the whole is slow."""
    server.routes[WELL_KNOWN_PATH] = route
    started = time.monotonic()
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy(timeout_seconds=1))
    elapsed = time.monotonic() - started
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "within 1 s" in caught.value.message
    assert 0.9 < elapsed < 3


# --------------------------------------------------------------------------- redirects


def chain(server: HttpsServer, hops: int) -> None:
    """`/.well-known/aai.json` → `/hop/1` → … → `/hop/<hops>`, which answers."""
    paths = [WELL_KNOWN_PATH, *(f"/hop/{n}" for n in range(1, hops + 1))]
    for here, there in itertools.pairwise(paths):
        server.redirect(here, there)
    server.serve(paths[-1], b'{"end": true}')


@pytest.mark.anyio
async def test_up_to_three_redirects_are_followed(server: HttpsServer, ca: LocalCa) -> None:
    chain(server, 3)
    fetched = await fetch_well_known(server.origin, ca.policy())
    assert fetched.body == b'{"end": true}'
    assert fetched.source_url == server.origin + "/hop/3"
    assert fetched.origin == server.origin


@pytest.mark.anyio
async def test_a_fourth_redirect_is_not_followed(server: HttpsServer, ca: LocalCa) -> None:
    chain(server, 4)
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "more than 3 redirects" in caught.value.message
    assert "/hop/4" not in server.requests


@pytest.mark.anyio
async def test_the_redirect_limit_is_a_policy_setting(server: HttpsServer, ca: LocalCa) -> None:
    chain(server, 1)
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy(max_redirects=0))
    assert "more than 0 redirects" in caught.value.message


@pytest.mark.anyio
async def test_a_redirect_to_plain_http_is_refused(server: HttpsServer, ca: LocalCa) -> None:
    server.redirect(WELL_KNOWN_PATH, f"http://127.0.0.1:{server.port}/plain")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(server.origin, ca.policy())
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "https only" in caught.value.message
    assert server.requests == [WELL_KNOWN_PATH]


@pytest.mark.anyio
async def test_each_redirect_hop_is_checked_against_private_addresses(
    server: HttpsServer, ca: LocalCa
) -> None:
    """The first hop passes for public (its socket reports a public peer); its redirect to a
    private address is refused before a second connection is attempted."""
    server.redirect(WELL_KNOWN_PATH, "https://10.0.0.7/.well-known/aai.json")
    backend = DisguisingBackend(server.port, "93.184.216.34")
    with pytest.raises(AaiError) as caught:
        await fetch_well_known(
            f"localhost:{server.port}",
            ca.policy(allow_private=False),
            resolver=fixed_resolver("93.184.216.34"),
            network_backend=backend,
        )
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["address"] == "10.0.0.7"
    assert server.requests == [WELL_KNOWN_PATH]
    assert backend.attempts == [("93.184.216.34", server.port)]


@pytest.mark.anyio
async def test_the_disguised_public_peer_alone_is_enough_to_fetch(server: HttpsServer, ca: LocalCa) -> None:
    """The control for the test above: the same set-up without the redirect succeeds."""
    server.serve(WELL_KNOWN_PATH, b"{}")
    fetched = await fetch_well_known(
        f"localhost:{server.port}",
        ca.policy(allow_private=False),
        resolver=fixed_resolver("93.184.216.34"),
        network_backend=DisguisingBackend(server.port, "93.184.216.34"),
    )
    assert fetched.body == b"{}"
