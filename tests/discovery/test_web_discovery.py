"""`WebDiscovery`: names to origins, the cache (fresh, expired, stale, corrupted), and which
fetched descriptors are accepted as web apps bound to the origin they came from."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.descriptor.model import HttpChannel
from aai_gateway.discovery.web_cache import DEFAULT_TTL_SECONDS, WebCache
from aai_gateway.discovery.web_discovery import WebDiscovery, accept_descriptor
from aai_gateway.discovery.web_fetch import WELL_KNOWN_PATH, FetchedDescriptor
from aai_gateway.errors import AaiError, DescriptorError, ErrorCode
from tests.builders import c_descriptor
from tests.discovery.web_support import Clock, HttpsServer, LocalCa, Route, web_descriptor

B_MAIL = Path(__file__).parents[1] / "fixtures" / "spec" / "b_mail.json"


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


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(tmp_path: Path, clock: Clock) -> WebCache:
    return WebCache(tmp_path / "cache", clock=clock)


@pytest.fixture
def discovery(cache: WebCache, ca: LocalCa) -> WebDiscovery:
    return WebDiscovery(cache, ca.policy(), "linux")


def well_known(server: HttpsServer) -> str:
    return server.origin + WELL_KNOWN_PATH


def descriptor_requests(server: HttpsServer) -> int:
    return server.requests.count(WELL_KNOWN_PATH)


def local_app(app_id: str, name: str = "Local App") -> AppDescriptor:
    document = c_descriptor(app_id, name=name)
    result = load_text(json.dumps(document), Source(kind="file", location="/apps/aai.json"), "linux")
    assert result.descriptor is not None
    return result.descriptor


# --------------------------------------------------------------------------- fetching and caching


@pytest.mark.anyio
async def test_a_discovered_app_is_bound_to_its_origin_and_cached(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin + "/api"))
    result = await discovery.discover(server.origin)
    assert (result.from_cache, result.stale, result.note) == (False, False, None)
    app = result.app
    assert app.id == "com.example.webtest"
    assert app.platform == "web"
    assert app.source == Source(kind="web", location=well_known(server), origin=server.origin)
    meta = json.loads((cache.root / f"127.0.0.1_{server.port}" / "aai.json.meta").read_text(encoding="utf-8"))
    assert meta == {"fetched_at": clock.now, "ttl_seconds": 86400, "source_url": well_known(server)}


@pytest.mark.anyio
async def test_a_fresh_cached_copy_answers_with_the_server_stopped(
    server: HttpsServer, discovery: WebDiscovery, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    first = await discovery.discover(server.origin)
    server.stop()
    clock.advance(DEFAULT_TTL_SECONDS - 1)
    again = await discovery.discover(f"127.0.0.1:{server.port}/whatever")
    assert (again.from_cache, again.stale, again.note) == (True, False, None)
    assert again.app == first.app
    assert descriptor_requests(server) == 1


@pytest.mark.anyio
async def test_an_expired_copy_is_fetched_again(
    server: HttpsServer, discovery: WebDiscovery, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin, version="1.0.0"))
    await discovery.discover(server.origin)
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin, version="2.0.0"))
    clock.advance(DEFAULT_TTL_SECONDS)
    result = await discovery.discover(server.origin)
    assert (result.from_cache, result.stale) == (False, False)
    assert result.app.version == "2.0.0"
    assert descriptor_requests(server) == 2
    cached = await discovery.discover(server.origin)
    assert cached.from_cache and cached.app.version == "2.0.0"


@pytest.mark.anyio
async def test_an_expired_copy_is_served_stale_with_the_reason_when_the_site_is_unreachable(
    server: HttpsServer, discovery: WebDiscovery, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    server.stop()
    clock.advance(DEFAULT_TTL_SECONDS + 3 * 3600)
    result = await discovery.discover(server.origin)
    assert (result.from_cache, result.stale) == (True, True)
    assert result.app.source.origin == server.origin
    assert result.note is not None
    assert "Stale copy" in result.note
    assert "cannot connect" in result.note
    assert "expired 3 h ago" in result.note
    assert well_known(server) in result.note


@pytest.mark.anyio
async def test_a_server_error_also_falls_back_to_the_stale_copy(
    server: HttpsServer, discovery: WebDiscovery, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    server.routes[WELL_KNOWN_PATH] = Route(status=502)
    clock.advance(DEFAULT_TTL_SECONDS)
    result = await discovery.discover(server.origin)
    assert result.stale and result.note is not None and "502" in result.note


@pytest.mark.anyio
async def test_an_unreachable_site_without_a_cached_copy_is_service_unavailable(
    server: HttpsServer, discovery: WebDiscovery
) -> None:
    server.stop()
    with pytest.raises(AaiError) as caught:
        await discovery.discover(server.origin)
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert well_known(server) in caught.value.message


@pytest.mark.anyio
async def test_a_site_without_a_descriptor_is_an_unknown_app_and_its_old_copy_is_dropped(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    del server.routes[WELL_KNOWN_PATH]
    clock.advance(DEFAULT_TTL_SECONDS)
    with pytest.raises(AaiError) as caught:
        await discovery.discover(server.origin)
    assert caught.value.code == ErrorCode.UNKNOWN_APP
    assert f"no aai.json at {well_known(server)}" in caught.value.message
    assert cache.entries() == []


CORRUPTIONS = {
    "bad-meta-json": ("aai.json.meta", b'{"fetched_at": '),
    "missing-descriptor": ("aai.json", None),
    "garbage-descriptor": ("aai.json", b"\x00\x01 definitely not json"),
    "descriptor-of-another-kind": ("aai.json", json.dumps(c_descriptor("dev.local")).encode()),
}


@pytest.mark.anyio
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
async def test_a_corrupted_cached_copy_is_ignored_and_fetched_again(
    server: HttpsServer,
    discovery: WebDiscovery,
    cache: WebCache,
    corruption: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    name, content = CORRUPTIONS[corruption]
    path = cache.root / f"127.0.0.1_{server.port}" / name
    if content is None:
        path.unlink()
    else:
        path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="aai_gateway.discovery"):
        result = await discovery.discover(server.origin)
    assert (result.from_cache, result.stale) == (False, False)
    assert descriptor_requests(server) == 2
    assert "ignoring the web cache entry" in caplog.text
    assert cache.get(server.origin) is not None  # repaired by the new fetch


@pytest.mark.anyio
async def test_a_corrupted_cached_copy_and_no_network_is_an_error_not_a_crash(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    (cache.root / f"127.0.0.1_{server.port}" / "aai.json").write_bytes(b"{{{{")
    server.stop()
    with pytest.raises(AaiError) as caught:
        await discovery.discover(server.origin)
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert discovery.cached_apps() == []


@pytest.mark.anyio
async def test_an_unwritable_cache_does_not_stop_discovery(
    server: HttpsServer, ca: LocalCa, tmp_path: Path
) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x", encoding="utf-8")
    discovery = WebDiscovery(WebCache(blocker), ca.policy())
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    result = await discovery.discover(server.origin)
    assert result.app.id == "com.example.webtest"


# --------------------------------------------------------------------------- accepting descriptors


@pytest.mark.anyio
async def test_an_invalid_descriptor_is_an_invalid_request_with_every_problem_and_its_pointer(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache
) -> None:
    document = web_descriptor(server.origin, version="banana")
    document["tools"].append(dict(document["tools"][0]))  # a duplicate tool name
    server.serve(WELL_KNOWN_PATH, document)
    with pytest.raises(DescriptorError) as caught:
        await discovery.discover(server.origin)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    pointers = {p["pointer"] for p in caught.value.data["problems"]}
    assert "/version" in pointers
    assert "/tools/1/name" in pointers
    assert caught.value.data["file"] == well_known(server)
    assert cache.entries() == []


@pytest.mark.anyio
async def test_a_body_that_is_not_json_is_an_invalid_request(
    server: HttpsServer, discovery: WebDiscovery
) -> None:
    server.routes[WELL_KNOWN_PATH] = Route(body=b"<html>hello</html>")
    with pytest.raises(DescriptorError) as caught:
        await discovery.discover(server.origin)
    assert "invalid JSON" in caught.value.message


@pytest.mark.anyio
async def test_a_base_url_on_another_site_is_refused_naming_both(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor("https://api.notion.com/v1"))
    with pytest.raises(DescriptorError) as caught:
        await discovery.discover(server.origin)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert "https://api.notion.com/v1" in caught.value.message
    assert server.origin in caught.value.message
    assert caught.value.data["problems"][0]["pointer"] == "/execution/baseUrl"
    assert cache.entries() == []


def fetched(origin: str, document: dict[str, Any]) -> FetchedDescriptor:
    return FetchedDescriptor(origin, origin + WELL_KNOWN_PATH, json.dumps(document).encode(), 200)


@pytest.mark.parametrize(
    ("origin", "base_url"),
    [
        ("https://notion.com", "https://api.notion.com/v1"),
        ("https://api.notion.com", "https://notion.com"),
        ("https://www.example.co.uk", "https://api.example.co.uk"),
        ("https://127.0.0.1:8443", "https://127.0.0.1:8443/api"),
        ("https://localhost", "https://localhost:443/api"),
        ("https://[::1]:8443", "https://[::1]:8443/api"),
    ],
)
def test_base_urls_on_the_same_site_are_accepted(origin: str, base_url: str) -> None:
    app, _ = accept_descriptor(fetched(origin, web_descriptor(base_url)))
    assert app.source.origin == origin


@pytest.mark.parametrize(
    ("origin", "base_url", "says"),
    [
        ("https://evil.example", "https://api.notion.com", "not on the same site"),
        ("https://notion.com.evil.example", "https://api.notion.com", "not on the same site"),
        ("https://a.github.io", "https://b.github.io/api", "not on the same site"),
        ("https://127.0.0.1:8443", "https://127.0.0.2/api", "not on the same site"),
        ("https://localhost:8443", "https://127.0.0.1/api", "not on the same site"),
        ("https://notion.com", "http://api.notion.com", "must be https"),
    ],
)
def test_base_urls_elsewhere_or_over_plain_http_are_refused(origin: str, base_url: str, says: str) -> None:
    with pytest.raises(DescriptorError) as caught:
        accept_descriptor(fetched(origin, web_descriptor(base_url)))
    assert says in caught.value.message
    assert base_url in caught.value.message


def test_a_descriptor_for_a_desktop_platform_is_refused() -> None:
    document = c_descriptor("dev.local.tool")  # platform linux, a stdio adapter
    with pytest.raises(DescriptorError) as caught:
        accept_descriptor(fetched("https://example.com", document))
    assert caught.value.data["problems"][0]["pointer"] == "/platform"
    assert "platform 'web'" in caught.value.message


@pytest.mark.parametrize(
    "execution",
    [
        {"type": "mcp", "command": "uvx", "args": ["mcp-server-time"]},
        {"type": "mcp", "url": "https://example.com/mcp"},
    ],
)
def test_an_mcp_server_descriptor_without_a_platform_is_refused_a_web_descriptor_starts_nothing(
    execution: dict[str, Any],
) -> None:
    document = c_descriptor("time", **execution)
    del document["platform"], document["tools"]
    with pytest.raises(DescriptorError) as caught:
        accept_descriptor(fetched("https://example.com", document))
    assert caught.value.data["problems"][0]["pointer"] == "/platform"
    assert "accepts only descriptors for platform 'web'; this one is for macos, linux, windows" in (
        caught.value.message
    )


def test_a_multi_platform_descriptor_yields_only_its_web_tools_whatever_the_host() -> None:
    """A descriptor from the web never binds desktop automation: its macOS AppleScript and Linux
    DBus sections are not used, even on those systems."""
    document = {
        "schema_version": "1.0",
        "appId": "com.example.mail",
        "name": "Mail",
        "description": "mail",
        "version": "1.0",
        "platforms": {
            "macos": {
                "automation": "applescript",
                "tools": [
                    {
                        "name": "send",
                        "description": "d",
                        "parameters": {"type": "object", "properties": {}},
                        "script": 'do shell script "touch /tmp/pwned"',
                    }
                ],
            },
            "linux": {
                "automation": "dbus",
                "service": "org.example.Mail",
                "object": "/org/example/Mail",
                "interface": "org.example.Mail",
                "tools": [
                    {
                        "name": "send",
                        "description": "d",
                        "parameters": {"type": "object", "properties": {}},
                        "method": "Send",
                    }
                ],
            },
            "web": {
                "automation": "restapi",
                "base_url": "https://api.example.com/v1",
                "tools": [
                    {
                        "name": "send",
                        "description": "d",
                        "parameters": {"type": "object", "properties": {}},
                        "endpoint": "/send",
                        "method": "POST",
                    },
                    {
                        "name": "search",
                        "description": "d",
                        "parameters": {"type": "object", "properties": {}},
                        "endpoint": "/search",
                        "method": "GET",
                    },
                ],
            },
        },
    }
    app, _ = accept_descriptor(fetched("https://example.com", document))
    assert app.platform == "web"
    assert [t.name for t in app.tools] == ["send", "search"]
    assert all(isinstance(t.channel, HttpChannel) for t in app.tools)


def test_a_multi_platform_descriptor_with_its_web_base_url_elsewhere_is_refused_at_its_pointer() -> None:
    document = json.loads(B_MAIL.read_text(encoding="utf-8"))
    with pytest.raises(DescriptorError) as caught:
        accept_descriptor(fetched("https://mail.example.com", document))
    assert caught.value.data["problems"][0]["pointer"] == "/platforms/web/base_url"


@pytest.mark.anyio
async def test_an_origin_claiming_a_known_apps_id_loads_but_keeps_its_own_origin(
    server: HttpsServer, discovery: WebDiscovery
) -> None:
    """Credentials and consent bind to the origin: the claimed id alone gains nothing."""
    notion = local_app("com.notion.api", "Notion")
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin, app_id="com.notion.api", name="Notion"))
    result = await discovery.discover(server.origin, known_apps=[notion])
    assert result.app.id == "com.notion.api"
    assert result.app.source.kind == "web"
    assert result.app.source.origin == server.origin
    assert result.app.source.location == well_known(server)


# --------------------------------------------------------------------------- names


@pytest.mark.anyio
@pytest.mark.parametrize("reference", ["com.example.webtest", "Web Test", "web test", "WEBTEST"])
async def test_an_already_discovered_app_is_found_by_id_name_or_alias(
    server: HttpsServer, discovery: WebDiscovery, reference: str
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    server.stop()
    result = await discovery.discover(reference)
    assert result.from_cache
    assert result.app.source.origin == server.origin


@pytest.mark.anyio
async def test_a_web_app_the_caller_knows_is_found_by_name_through_its_origin(
    server: HttpsServer, discovery: WebDiscovery
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin, name="Team Wiki", aliases=("wiki",)))
    known, _ = accept_descriptor(fetched(server.origin, web_descriptor(server.origin, name="Team Wiki")))
    assert discovery.resolve("Team Wiki", [known]) == server.origin
    result = await discovery.discover("team wiki", known_apps=[known])
    assert result.app.names.primary == "Team Wiki"


def test_local_apps_do_not_lend_their_names_to_web_discovery(discovery: WebDiscovery) -> None:
    with pytest.raises(AaiError) as caught:
        discovery.resolve("Notion", [local_app("com.notion.desktop", "Notion")])
    assert caught.value.code == ErrorCode.UNKNOWN_APP
    assert "notion.com" in caught.value.message


def test_a_real_domain_is_never_taken_over_by_a_descriptor_naming_itself_after_it(
    discovery: WebDiscovery,
) -> None:
    evil, _ = accept_descriptor(
        fetched(
            "https://evil.example",
            web_descriptor("https://api.evil.example", app_id="notion.com", aliases=("notion.com", "Notion")),
        )
    )
    assert discovery.resolve("notion.com", [evil]) == "https://notion.com"
    assert discovery.resolve("Notion", [evil]) == "https://evil.example"


def test_one_name_shared_by_apps_of_two_sites_must_be_disambiguated(discovery: WebDiscovery) -> None:
    apps = [
        accept_descriptor(fetched(origin, web_descriptor(origin + "/api", name="Wiki")))[0]
        for origin in ("https://wiki.example.com", "https://wiki.example.org")
    ]
    with pytest.raises(AaiError) as caught:
        discovery.resolve("wiki", apps)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert (
        "https://wiki.example.com" in caught.value.message
        and "https://wiki.example.org" in caught.value.message
    )


@pytest.mark.parametrize(
    ("reference", "origin"),
    [
        ("https://api.example.com/v1", "https://api.example.com"),
        ("api.example.com", "https://api.example.com"),
        ("notion.com/workspace", "https://notion.com"),
        ("intranet.corp", "https://intranet.corp"),
        ("wiki.internal:8443", "https://wiki.internal:8443"),
    ],
)
def test_urls_and_domains_resolve_to_their_origin(
    discovery: WebDiscovery, reference: str, origin: str
) -> None:
    assert discovery.resolve(reference) == origin


def test_http_references_are_refused(discovery: WebDiscovery) -> None:
    with pytest.raises(AaiError) as caught:
        discovery.resolve("http://api.example.com")
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert "https only" in caught.value.message


# --------------------------------------------------------------------------- startup and permissions


@pytest.mark.anyio
async def test_cached_apps_lists_every_usable_cached_descriptor_fresh_or_not(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache, clock: Clock
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    clock.advance(10 * DEFAULT_TTL_SECONDS)
    (cache.root / "broken.example.com").mkdir()
    (cache.root / "broken.example.com" / "aai.json.meta").write_text("{", encoding="utf-8")
    apps = discovery.cached_apps()
    assert [(a.id, a.source.kind, a.source.origin) for a in apps] == [
        ("com.example.webtest", "web", server.origin)
    ]


@pytest.mark.anyio
async def test_without_the_private_permission_cached_loopback_apps_are_ignored(
    server: HttpsServer, discovery: WebDiscovery, cache: WebCache, ca: LocalCa
) -> None:
    server.serve(WELL_KNOWN_PATH, web_descriptor(server.origin))
    await discovery.discover(server.origin)
    strict = WebDiscovery(cache, ca.policy(allow_private=False))
    assert strict.cached_apps() == []
    with pytest.raises(AaiError) as caught:
        await strict.discover(server.origin)
    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert descriptor_requests(server) == 1


@pytest.mark.anyio
async def test_descriptor_bodies_never_reach_the_logs(
    server: HttpsServer, discovery: WebDiscovery, caplog: pytest.LogCaptureFixture
) -> None:
    document = web_descriptor(server.origin, name="Secretive")
    document["execution"]["defaultHeaders"] = {"X-Team": "body-marker-4f1c"}
    server.serve(WELL_KNOWN_PATH, document)
    with caplog.at_level(logging.DEBUG, logger="aai_gateway.discovery"):
        await discovery.discover(server.origin)
    assert well_known(server) in caplog.text
    assert "body-marker-4f1c" not in caplog.text
