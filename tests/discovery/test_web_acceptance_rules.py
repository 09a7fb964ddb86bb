"""What a fetched descriptor may point at, decided up front with a JSON pointer: on an IP-literal
or single-label origin the port is part of the site, and the auth endpoints of a web app are https
(and, named by an IP address or a single-label host, the origin itself)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.discovery.web_cache import WebCache
from aai_gateway.discovery.web_discovery import WebDiscovery, accept_descriptor
from aai_gateway.discovery.web_fetch import WELL_KNOWN_PATH, FetchedDescriptor
from aai_gateway.errors import DescriptorError, ErrorCode
from tests.discovery.web_support import HttpsServer, LocalCa, closed_port, web_descriptor

A_WEB = Path(__file__).parents[1] / "fixtures" / "spec" / "a_web.json"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def server(ca: LocalCa) -> Iterator[HttpsServer]:
    running = HttpsServer(ca).start()
    yield running
    running.stop()


def fetched(origin: str, document: dict[str, Any]) -> FetchedDescriptor:
    return FetchedDescriptor(origin, origin + WELL_KNOWN_PATH, json.dumps(document).encode(), 200)


def refusal(origin: str, document: dict[str, Any]) -> DescriptorError:
    with pytest.raises(DescriptorError) as caught:
        accept_descriptor(fetched(origin, document))
    return caught.value


# --------------------------------------------------------------------------- ports


@pytest.mark.parametrize(
    ("origin", "base_url"),
    [
        ("https://127.0.0.1:8443", "https://127.0.0.1:9000/api"),
        ("https://127.0.0.1:8443", "https://127.0.0.1/api"),
        ("https://localhost:8443", "https://localhost/api"),
        ("https://[::1]:8443", "https://[::1]:9443/api"),
        ("https://127.1:8443", "https://127.1:9999/api"),  # shorthand spellings are the same address
        ("https://93.184.55330:8443", "https://93.184.55330:22/api"),
        ("https://127.0.0.1:8443", "https://0x7f.0.0.1:9000/api"),
        ("https://[0:0::1]:8443", "https://[::1]:9443/api"),
    ],
)
def test_an_ip_or_single_label_origin_may_not_point_its_base_url_at_another_port(
    origin: str, base_url: str
) -> None:
    error = refusal(origin, web_descriptor(base_url))
    assert "not on the same site" in error.message
    assert error.data["problems"][0]["pointer"] == "/execution/baseUrl"


def test_one_address_spelled_two_ways_is_one_origin_and_one_site() -> None:
    app, _ = accept_descriptor(fetched("https://127.0.0.1:8443", web_descriptor("https://127.1:8443/api")))
    assert str(app.binding) == "https://127.0.0.1:8443"
    shorthand, _ = accept_descriptor(fetched("https://127.1:8443", web_descriptor("https://127.1:8443/api")))
    assert shorthand.binding == app.binding


def test_on_a_registrable_domain_the_port_does_not_matter() -> None:
    app, _ = accept_descriptor(
        fetched("https://example.com:8443", web_descriptor("https://api.example.com/v1"))
    )
    assert app.source.origin == "https://example.com:8443"


@pytest.mark.anyio
async def test_a_loopback_site_describing_a_service_on_another_port_is_refused_when_discovered(
    server: HttpsServer, ca: LocalCa, tmp_path: Path
) -> None:
    other_port = closed_port()
    server.serve(WELL_KNOWN_PATH, web_descriptor(f"https://127.0.0.1:{other_port}/admin"))
    discovery = WebDiscovery(WebCache(tmp_path / "cache"), ca.policy(), "linux")

    with pytest.raises(DescriptorError) as caught:
        await discovery.discover(server.origin)

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert f"https://127.0.0.1:{other_port}/admin" in caught.value.message


# --------------------------------------------------------------------------- auth endpoints


def c_with_auth(origin: str, auth: dict[str, Any]) -> dict[str, Any]:
    document = web_descriptor(f"{origin}/api")
    document["auth"] = auth
    return document


def c_oauth(authorize: str, token: str) -> dict[str, Any]:
    return {
        "type": "oauth2",
        "oauth2": {"authorizationEndpoint": authorize, "tokenEndpoint": token, "scopes": ["read"]},
    }


def c_app_credential(token: str) -> dict[str, Any]:
    return {
        "type": "appCredential",
        "appCredential": {"tokenEndpoint": token, "tokenType": "tenantAccessToken"},
    }


def a_oauth(token: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(A_WEB.read_text(encoding="utf-8"))
    document["auth"]["oauth2"]["token_endpoint"] = token
    return document


def b_oauth(token: str) -> dict[str, Any]:
    return {
        "schema_version": "1.0",
        "appId": "com.example.b",
        "name": "B",
        "description": "b",
        "version": "1.0",
        "platforms": {
            "web": {
                "automation": "restapi",
                "base_url": "https://api.example.com/v1",
                "auth": {"type": "oauth2", "auth_url": "https://example.com/authorize", "token_url": token},
                "tools": [
                    {
                        "name": "search",
                        "description": "d",
                        "parameters": {"type": "object", "properties": {}},
                        "endpoint": "/search",
                        "method": "GET",
                    }
                ],
            }
        },
    }


ORIGIN = "https://api.example.com"


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (
            c_with_auth(ORIGIN, c_app_credential("http://api.example.com/auth/token")),
            "/auth/appCredential/tokenEndpoint",
        ),
        (
            c_with_auth(ORIGIN, c_oauth("https://api.example.com/authorize", "http://api.example.com/token")),
            "/auth/oauth2/tokenEndpoint",
        ),
        (
            c_with_auth(ORIGIN, c_oauth("http://api.example.com/authorize", "https://api.example.com/token")),
            "/auth/oauth2/authorizationEndpoint",
        ),
        (a_oauth("http://example.com/oauth/token"), "/auth/oauth2/token_endpoint"),
        (b_oauth("http://example.com/token"), "/platforms/web/auth/token_url"),
    ],
)
def test_a_web_apps_auth_endpoints_must_be_https_at_their_pointer(
    document: dict[str, Any], pointer: str
) -> None:
    error = refusal(ORIGIN, copy.deepcopy(document))
    assert error.code == ErrorCode.INVALID_REQUEST
    [problem] = error.data["problems"]
    assert problem["pointer"] == pointer
    assert "must be https" in problem["message"]


@pytest.mark.parametrize(
    ("origin", "token_endpoint"),
    [
        (ORIGIN, "https://10.0.0.7/auth/token"),
        (ORIGIN, "https://127.0.0.1/auth/token"),
        (ORIGIN, "https://localhost/auth/token"),
        (ORIGIN, "https://[::1]/auth/token"),
        ("https://127.0.0.1:8443", "https://127.0.0.1:9000/auth/token"),
    ],
)
def test_a_token_endpoint_on_an_address_that_is_not_the_origin_is_refused(
    origin: str, token_endpoint: str
) -> None:
    error = refusal(origin, c_with_auth(origin, c_app_credential(token_endpoint)))
    [problem] = error.data["problems"]
    assert problem["pointer"] == "/auth/appCredential/tokenEndpoint"
    assert "must be the origin itself" in problem["message"]
    assert token_endpoint in problem["message"]


@pytest.mark.parametrize(
    ("origin", "token_endpoint"),
    [
        (ORIGIN, "https://auth.example.com/token"),
        (ORIGIN, "https://login.identity-provider.example/oauth/token"),  # identity providers live elsewhere
        ("https://127.0.0.1:8443", "https://127.0.0.1:8443/auth/token"),
    ],
)
def test_token_endpoints_named_by_domain_or_on_the_origin_itself_are_accepted(
    origin: str, token_endpoint: str
) -> None:
    app, _ = accept_descriptor(fetched(origin, c_with_auth(origin, c_app_credential(token_endpoint))))
    assert app.source.origin == origin
