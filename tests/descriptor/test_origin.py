"""Origins: scheme, host and port, one spelling per address, https only for web origins."""

from __future__ import annotations

import pytest

from aai_gateway.descriptor.origin import Origin, normalize_origin, url_origin
from aai_gateway.errors import AaiError


@pytest.mark.parametrize(
    ("written", "origin"),
    [
        ("https://API.Example.com./x", "https://api.example.com"),
        ("api.example.com:443", "https://api.example.com"),
        ("https://127.1:8443", "https://127.0.0.1:8443"),
        ("https://2130706433", "https://127.0.0.1"),
        ("https://0x7f.0.0.1", "https://127.0.0.1"),
        ("https://93.184.55330", "https://93.184.216.34"),
        ("https://[0:0::1]:8443", "https://[::1]:8443"),
        ("https://[::ffff:7f00:1]", "https://[::ffff:127.0.0.1]"),
        ("https://1e100.net", "https://1e100.net"),  # a name that only looks numeric stays a name
    ],
)
def test_every_spelling_of_an_origin_normalizes_to_one(written: str, origin: str) -> None:
    assert normalize_origin(written) == origin


@pytest.mark.parametrize(
    "written", ["http://example.com", "https://user:pw@example.com", "https://exa mple.com", ""]
)
def test_what_is_not_an_https_origin_is_refused_with_a_reason(written: str) -> None:
    with pytest.raises(AaiError):
        normalize_origin(written)


def test_url_origins_keep_the_scheme_and_fill_in_its_default_port() -> None:
    assert url_origin("http://127.1:8080/v1") == Origin("http", "127.0.0.1", 8080)
    assert url_origin("https://example.com/x") == Origin("https", "example.com", 443)
    assert url_origin("ftp://example.com") is None
    assert str(Origin("https", "::1", 8443)) == "https://[::1]:8443"
