"""Origins: scheme, host and port, one spelling per address, https only for web origins."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor import origin as origin_module
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


HOSTS = st.lists(
    st.text(alphabet="abcdefxz0123456789-_", min_size=0, max_size=6), min_size=1, max_size=5
).map(".".join)


@settings(max_examples=300)
@given(
    scheme=st.sampled_from(["http", "https", "HTTPS", "ftp"]),
    host=st.one_of(HOSTS, st.sampled_from(["127.1", "0x7f.0.0.1", "2130706433", "[::1]", "1e100.net"])),
    path=st.sampled_from(["", "/", "/v1", "/v1/x.y_z~", "/a%20b", "?q=1", ":8443/v1", "./", "#f"]),
)
def test_a_plain_base_url_has_the_origin_the_full_parse_gives_it(scheme: str, host: str, path: str) -> None:
    """`url_origin` reads the origin off a plain URL (lower-case host name, no port, plain path)
    without httpx: credentials are bound to origins, so it must agree with the full parse."""
    url = f"{scheme}://{host}{path}"
    quick = url_origin(url)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(origin_module, "_PLAIN_URL", re.compile(r"(?!)"))  # never plain: httpx parses
        assert url_origin(url) == quick
