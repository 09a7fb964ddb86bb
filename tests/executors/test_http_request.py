"""Building HTTP requests from a binding and arguments (pure; no network)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor.model import HttpCall, HttpChannel
from aai_gateway.errors import AaiError, ErrorCode, InvalidParamsError
from aai_gateway.executors.http_request import build_request, encode_path_value

CHANNEL = HttpChannel(base_url="https://api.example.com/v1/")

ADVERSARIAL = [
    "../",
    "..",
    ".",
    "../../etc/passwd",
    "a/b",
    "%2F",
    "%252F",
    "%",
    "?x=1",
    "#frag",
    "a&b=c",
    "k=v",
    "'\"",
    "a b",
    "+plus+",
    "😀",
    "中文",
    "\\..\\",
    "\r\nX-Injected: 1",
    "\x00",
    ";jsessionid=1",
    "@evil.example",
    "//evil.example",
]


def wire_path(url: str) -> bytes:
    """What httpx would put on the request line (it re-parses the URL we give it)."""
    return httpx.URL(url).raw_path


def test_the_url_is_the_base_url_without_its_trailing_slash_plus_the_tools_path() -> None:
    spec = build_request(CHANNEL, HttpCall(path="/items", method="GET"), "list_items", {})

    assert spec.url == "https://api.example.com/v1/items"
    assert spec.method == "GET"
    assert spec.query == ""
    assert spec.body is None


def test_a_tool_without_path_or_method_posts_to_its_own_name() -> None:
    spec = build_request(CHANNEL, None, "create_item", {"title": "x"})

    assert (spec.method, spec.url) == ("POST", "https://api.example.com/v1/create_item")
    assert json.loads(spec.body or b"") == {"title": "x"}
    assert spec.header("content-type") == "application/json"


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_a_path_placeholder_stays_one_segment_and_decodes_to_the_exact_value(value: str) -> None:
    spec = build_request(CHANNEL, HttpCall(path="/files/{name}/raw", method="GET"), "t", {"name": value})

    raw = wire_path(spec.full_url)
    assert raw.startswith(b"/v1/files/")
    assert raw.endswith(b"/raw")
    segment = raw.removeprefix(b"/v1/files/").removesuffix(b"/raw")
    assert not set(segment.decode("ascii")) & set("/?#\\ \r\n")
    assert unquote(segment.decode("ascii")) == value
    assert spec.query == ""


@pytest.mark.parametrize(
    ("value", "segment"), [(".", "%2E"), ("..", "%2E%2E"), ("...", "..."), ("a.b", "a.b")]
)
def test_dot_segments_are_percent_encoded_so_nothing_resolves_them(value: str, segment: str) -> None:
    assert encode_path_value(value) == segment
    spec = build_request(CHANNEL, HttpCall(path="/a/${v}/b", method="GET"), "t", {"v": value})
    assert wire_path(spec.url) == f"/v1/a/{segment}/b".encode()


def test_non_string_path_values_are_written_as_json_text() -> None:
    spec = build_request(
        CHANNEL,
        HttpCall(path="/{n}/{flag}/{ids}", method="GET"),
        "t",
        {"n": 404, "flag": True, "ids": [1, 2]},
    )

    assert spec.url.endswith("/404/true/%5B1%2C2%5D")


def test_a_missing_or_empty_path_parameter_is_refused_before_anything_is_sent() -> None:
    for arguments in ({}, {"id": None}, {"id": ""}):
        with pytest.raises(InvalidParamsError) as caught:
            build_request(CHANNEL, HttpCall(path="/users/{id}/delete"), "t", arguments, app_id="app")
        assert caught.value.code == ErrorCode.INVALID_PARAMS
        assert caught.value.data["violations"][0]["path"] == "/id"


def test_get_delete_head_and_options_send_leftover_arguments_as_the_query() -> None:
    arguments = {
        "id": "7",
        "q": "a b&c",
        "tags": ["x", "y"],
        "filter": {"k": [1]},
        "on": True,
        "off": False,
        "n": 2.5,
        "skip": None,
    }
    for method in ("GET", "DELETE", "HEAD", "OPTIONS"):
        spec = build_request(CHANNEL, HttpCall(path="/items/{id}", method=method), "t", arguments)

        assert spec.url.endswith("/items/7")
        assert parse_qsl(spec.query, keep_blank_values=True) == [
            ("q", "a b&c"),
            ("tags", "x"),
            ("tags", "y"),
            ("filter", '{"k":[1]}'),
            ("on", "true"),
            ("off", "false"),
            ("n", "2.5"),
        ]
        assert spec.body is None


def test_post_put_and_patch_send_leftover_arguments_as_a_json_body() -> None:
    arguments = {"id": 7, "title": "Ünïcode", "done": None, "tags": ["a"]}
    for method in ("POST", "PUT", "PATCH"):
        spec = build_request(CHANNEL, HttpCall(path="/items/{id}", method=method), "t", arguments)

        assert spec.query == ""
        assert json.loads(spec.body or b"") == {"title": "Ünïcode", "done": None, "tags": ["a"]}
        assert spec.header("Content-Type") == "application/json"


def test_a_body_template_replaces_the_leftover_arguments() -> None:
    call = HttpCall(path="/search", method="POST", body={"query": "${q}", "page_size": "${size}", "fixed": 1})

    spec = build_request(CHANNEL, call, "t", {"q": "cats", "size": 5, "unused": "x"})

    assert json.loads(spec.body or b"") == {"query": "cats", "page_size": 5, "fixed": 1}


def test_a_query_params_template_defines_the_query_and_omits_missing_arguments() -> None:
    call = HttpCall(path="/search", method="GET", query_params={"q": "${q}", "limit": "${limit}", "v": "2"})

    spec = build_request(CHANNEL, call, "t", {"q": "a+b", "other": "dropped"})

    assert parse_qsl(spec.query) == [("q", "a+b"), ("v", "2")]


def test_a_post_with_a_query_template_puts_the_rest_in_the_body() -> None:
    call = HttpCall(path="/items", method="POST", query_params={"dry_run": "${dry}"})

    spec = build_request(CHANNEL, call, "t", {"dry": True, "title": "x"})

    assert spec.query == "dry_run=true"
    assert json.loads(spec.body or b"") == {"title": "x"}


def test_the_base_urls_query_and_a_query_written_in_the_path_are_kept() -> None:
    channel = HttpChannel(base_url="https://api.example.com/v1?api-version=2")
    call = HttpCall(path="/search?type={kind}#ignored", method="GET")

    spec = build_request(channel, call, "t", {"kind": "a&b=c", "q": "x"})

    assert spec.url == "https://api.example.com/v1/search"
    assert parse_qsl(spec.query) == [("api-version", "2"), ("type", "a&b=c"), ("q", "x")]


def test_tool_headers_override_default_headers_case_insensitively_and_are_substituted() -> None:
    channel = HttpChannel(base_url="https://h", default_headers={"Accept": "text/plain", "X-App": "1"})
    call = HttpCall(
        method="GET", headers={"accept": "application/json", "X-Trace": "t-${trace}", "X-Opt": "${opt}"}
    )

    spec = build_request(channel, call, "t", {"trace": 42, "q": "x"})

    assert spec.headers == (("accept", "application/json"), ("X-App", "1"), ("X-Trace", "t-42"))
    assert spec.query == "q=x"  # header parameters are not repeated in the query


@pytest.mark.parametrize("value", ["a\r\nX-Evil: 1", "a\nb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb"])
def test_a_header_value_with_control_characters_is_refused_naming_header_and_parameter(value: str) -> None:
    call = HttpCall(method="GET", headers={"Authorization": "Bearer ${token}"})

    with pytest.raises(InvalidParamsError) as caught:
        build_request(CHANNEL, call, "t", {"token": value}, app_id="app")

    violation = caught.value.data["violations"][0]
    assert violation["path"] == "/token"
    assert "'Authorization'" in violation["message"]
    assert "'token'" in violation["message"]
    assert value not in caught.value.message


def test_header_values_keep_unicode_and_tabs_but_lose_surrounding_blanks() -> None:
    call = HttpCall(method="GET", headers={"X-Name": "${name}"})

    spec = build_request(CHANNEL, call, "t", {"name": "  José\t😀 "})

    assert spec.header("x-name") == "José\t😀"


def test_a_declared_content_type_is_kept_and_form_bodies_are_url_encoded() -> None:
    channel = HttpChannel(
        base_url="https://h", default_headers={"Content-Type": "application/x-www-form-urlencoded"}
    )

    spec = build_request(channel, HttpCall(method="POST"), "t", {"a": "x&y", "b": [1, 2]})

    assert spec.header("content-type") == "application/x-www-form-urlencoded"
    assert parse_qsl((spec.body or b"").decode()) == [("a", "x&y"), ("b", "1"), ("b", "2")]


# --------------------------------------------------------------------------- properties


@settings(max_examples=1000)
@given(st.text(min_size=1))  # "" is refused (a missing segment), tested above
def test_any_string_in_a_path_placeholder_survives_httpx_and_decodes_exactly(value: str) -> None:
    spec = build_request(CHANNEL, HttpCall(path="/a/{x}/b", method="GET"), "t", {"x": value})

    url = httpx.URL(spec.full_url)
    raw = url.raw_path.decode("ascii")
    assert urlsplit(raw).query == ""
    assert raw.count("/") == 4
    prefix, segment, suffix = raw.rsplit("/", 2)
    assert (prefix, suffix) == ("/v1/a", "b")
    assert segment not in (".", "..")
    assert unquote(segment, errors="strict") == value


@settings(max_examples=500)
@given(st.dictionaries(st.text(min_size=1), st.text() | st.lists(st.text(), max_size=3), max_size=5))
def test_any_strings_in_query_arguments_come_back_exactly(arguments: dict[str, Any]) -> None:
    spec = build_request(CHANNEL, HttpCall(path="/s", method="GET"), "t", arguments)

    expected = [(k, item) for k, v in arguments.items() for item in (v if isinstance(v, list) else [v])]
    assert httpx.URL(spec.full_url).query.decode("ascii") == spec.query
    assert parse_qsl(spec.query, keep_blank_values=True, errors="strict") == expected


@settings(max_examples=500)
@given(st.dictionaries(st.text(), st.text() | st.integers() | st.booleans() | st.none(), max_size=5))
def test_any_strings_in_a_json_body_come_back_exactly(arguments: dict[str, Any]) -> None:
    spec = build_request(CHANNEL, HttpCall(path="/s", method="PUT"), "t", arguments)

    assert json.loads(spec.body or b"") == arguments


def test_a_header_value_with_a_lone_surrogate_is_refused_before_it_reaches_the_encoder() -> None:
    call = HttpCall(method="GET", headers={"X-Name": "${name}"})

    with pytest.raises(InvalidParamsError) as caught:
        build_request(CHANNEL, call, "t", {"name": "a\ud800b"}, app_id="app")

    assert caught.value.data["violations"][0]["path"] == "/name"
    assert "lone surrogate" in caught.value.data["violations"][0]["message"]


@pytest.mark.parametrize("name", ["Content-Length", "Transfer-Encoding", "host", "Connection"])
def test_a_header_the_http_client_writes_itself_never_leaves_even_from_a_descriptor_built_in_code(
    name: str,
) -> None:
    """Descriptor validation refuses these names; a binding built without it is refused too."""
    call = HttpCall(method="POST", headers={name: "5"})

    with pytest.raises(AaiError) as caught:
        build_request(CHANNEL, call, "t", {"q": "x"}, app_id="app")

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert caught.value.data["header"] == name


@pytest.mark.parametrize(
    ("path", "method", "arguments"),
    [
        ("/items/{id}", "GET", {"id": "a" * 70_000, "q": "short"}),
        ("/search", "GET", {"q": "b" * 70_000, "page": 2}),
        ("/search?term={term}", "POST", {"term": "c" * 70_000}),
    ],
    ids=["path", "query", "path-query"],
)
def test_an_argument_that_makes_the_url_too_long_for_http_is_refused_naming_it(
    path: str, method: str, arguments: dict[str, Any]
) -> None:
    channel = HttpChannel(base_url="http://127.0.0.1:9/api")
    with pytest.raises(InvalidParamsError) as caught:
        build_request(channel, HttpCall(path=path, method=method), "t", arguments, app_id="dev.x")
    culprit = next(name for name, value in arguments.items() if isinstance(value, str) and len(value) > 1000)
    violations = caught.value.data["violations"]
    assert violations[0]["path"] == f"/{culprit}"
    assert "URL" in violations[0]["message"]
    assert "dev.x" in caught.value.message and " t" in caught.value.message
