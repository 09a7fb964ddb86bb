"""Which app a reference names: one binding per app, URLs compared by scheme, host and port, and
a reference that fits apps described in different places refused as ambiguous, never settled by
the order in which apps happened to be found."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aai_gateway.descriptor import Source, load_descriptor
from aai_gateway.descriptor.card import AppCard, card_of
from aai_gateway.errors import AaiError, AmbiguousAppError, ErrorCode, UnknownAppError, UnknownToolError
from aai_gateway.service.resolve import AppDirectory, resolve_tool
from tests.builders import c_descriptor

from .apps import http_app, operation

ID = "dev.test.notes"


def web_app(origin: str, app_id: str = ID, *, name: str = "Notes", base: str | None = None) -> AppCard:
    document = c_descriptor(app_id, name=name, platform="web", type="http", baseUrl=base or f"{origin}/api")
    source = Source(kind="web", location=f"{origin}/.well-known/aai.json", origin=origin)
    return card_of(load_descriptor(json.dumps(document), source, "web"))


def local_app(path: str, app_id: str = ID, *, bundled: bool = False, **execution: Any) -> AppCard:
    document = c_descriptor(app_id, name="Notes", **execution)
    source = Source(kind="bundled" if bundled else "file", location=path)
    return card_of(load_descriptor(json.dumps(document), source, "linux"))


def candidates_of(error: AaiError) -> list[str]:
    return [c["reference"] for c in error.data["candidates"]]


def test_an_id_claimed_by_two_origins_is_ambiguous_and_each_origin_names_its_app() -> None:
    a, b = web_app("https://127.0.0.1:8443"), web_app("https://127.0.0.1:9443")
    for order in ([a, b], [b, a]):  # whichever the cache listed first
        directory = AppDirectory([], order)
        with pytest.raises(AmbiguousAppError) as caught:
            directory.resolve(ID)
        assert caught.value.code is ErrorCode.UNKNOWN_APP
        assert candidates_of(caught.value) == ["https://127.0.0.1:8443", "https://127.0.0.1:9443"]
        assert directory.resolve("https://127.0.0.1:8443") is a
        assert directory.resolve("https://127.0.0.1:9443/api/x") is b
        assert directory.resolve("127.0.0.1:9443") is b


def test_an_id_shared_by_a_web_app_and_a_local_app_is_ambiguous_with_a_reference_for_each() -> None:
    bundled = local_app("/gateway/bundled/notes.json", bundled=True)
    evil = web_app("https://evil.example")
    directory = AppDirectory([bundled], [evil])
    with pytest.raises(AmbiguousAppError) as caught:
        directory.resolve(ID)
    assert candidates_of(caught.value) == [f"bundled:{ID}", "https://evil.example"]
    assert directory.resolve(f"bundled:{ID}") is bundled
    assert directory.resolve("https://evil.example") is evil
    assert directory.reference_for(bundled) == f"bundled:{ID}"
    assert directory.reference_for(evil) == "https://evil.example"


def test_a_file_app_is_named_by_its_absolute_path_and_an_id_nobody_else_claims_by_the_id() -> None:
    mine = local_app("/home/me/apps/notes.json")
    other = web_app("https://notes.example", "dev.test.other")
    directory = AppDirectory([mine], [other])
    assert directory.resolve("file:/home/me/apps/notes.json") is mine
    assert directory.resolve("file:/home/me/apps/../apps/notes.json") is mine
    assert directory.reference_for(mine) == ID
    with pytest.raises(UnknownAppError):
        directory.resolve("file:apps/notes.json")  # relative: names nothing


def test_a_url_on_another_port_of_a_known_host_is_not_that_app() -> None:
    directory = AppDirectory([], [web_app("https://127.0.0.1:8443")])
    for other in ("https://127.0.0.1:9443", "https://127.0.0.1", "127.0.0.1:9443", "http://127.0.0.1:8443"):
        with pytest.raises(UnknownAppError):
            directory.resolve(other)


def test_a_local_http_app_is_found_by_its_api_url_with_scheme_host_and_port() -> None:
    app = local_app("/apps/local.json", type="http", baseUrl="http://127.0.0.1:8080/v1")
    directory = AppDirectory([app])
    assert directory.resolve("http://127.0.0.1:8080/v1/anything") is app
    assert directory.resolve("127.0.0.1:8080") is app
    for other in ("https://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1"):
        with pytest.raises(UnknownAppError):
            directory.resolve(other)


def test_a_domain_finds_the_app_on_its_subdomain_on_the_default_port_only() -> None:
    notion = web_app("https://api.notion.com")
    directory = AppDirectory([], [notion, web_app("https://x.other.com:8443", "dev.test.x")])
    assert directory.resolve("notion.com") is notion
    assert directory.resolve("https://notion.com") is notion
    with pytest.raises(UnknownAppError):
        directory.resolve("other.com")  # its only app listens on 8443


def test_a_name_shared_by_a_local_and_a_web_app_means_the_local_one() -> None:
    mine = local_app("/apps/notes.json", "dev.test.mine")
    theirs = web_app("https://notes.example", "dev.test.theirs")
    assert AppDirectory([mine], [theirs]).resolve("notes") is mine
    two_sites = AppDirectory([], [theirs, web_app("https://else.example", "dev.test.else")])
    with pytest.raises(AmbiguousAppError):
        two_sites.resolve("Notes")


def test_ids_and_tool_list_names_match_ignoring_case_unless_that_is_ambiguous_too() -> None:
    app = local_app("/apps/notes.json", "Dev.Test.Notes")
    directory = AppDirectory([app])
    for reference in ("dev.test.notes", "app_Dev_Test_Notes", "app:dev.test.notes"):
        assert directory.resolve(reference) is app
    with pytest.raises(AmbiguousAppError):
        AppDirectory([app], [web_app("https://n.example", "dev.test.NOTES")]).resolve("dev.test.notes")


def test_every_candidate_reference_in_an_ambiguity_error_resolves_to_exactly_that_app() -> None:
    apps = [local_app("/apps/a.json"), web_app("https://a.example"), web_app("https://b.example:8443")]
    directory = AppDirectory(apps[:1], apps[1:])
    with pytest.raises(AmbiguousAppError) as caught:
        directory.resolve(ID)
    found = [directory.resolve(reference) for reference in candidates_of(caught.value)]
    assert sorted(map(id, found)) == sorted(map(id, apps))
    for reference in candidates_of(caught.value):
        assert repr(reference) in caught.value.message


@pytest.mark.parametrize(
    ("reference", "impostor_id"),
    [
        ("mail", "mail"),  # a local app's name
        ("Mail", "mail"),
        ("email", "email"),  # a local app's alias
        ("app_dev_test_mail", "app_dev_test_mail"),  # a local app's tools/list name
        ("dev.test.mail", "DEV.TEST.MAIL"),  # a local app's id in another case
    ],
)
def test_a_web_app_whose_id_is_what_names_a_local_app_never_takes_it_over(
    reference: str, impostor_id: str
) -> None:
    document = c_descriptor("dev.test.mail", name="Mail")
    document["app"]["aliases"] = ["email"]
    mine = card_of(
        load_descriptor(json.dumps(document), Source(kind="file", location="/apps/mail.json"), "linux")
    )
    impostor = web_app("https://evil.example", impostor_id)
    directory = AppDirectory([mine], [impostor])
    with pytest.raises(AmbiguousAppError) as caught:
        directory.resolve(reference)
    assert sorted(candidates_of(caught.value)) == ["file:/apps/mail.json", "https://evil.example"]
    assert directory.resolve("file:/apps/mail.json") is mine


def test_a_web_app_whose_id_is_a_domain_another_site_serves_is_ambiguous_with_that_site() -> None:
    genuine = web_app("https://api.notion.com", "com.notion.api")
    impostor = web_app("https://evil.example", "api.notion.com")
    directory = AppDirectory([], [genuine, impostor])
    with pytest.raises(AmbiguousAppError) as caught:
        directory.resolve("api.notion.com")
    assert sorted(candidates_of(caught.value)) == ["https://api.notion.com", "https://evil.example"]
    assert directory.resolve("https://api.notion.com") is genuine


def test_a_local_app_calling_an_origin_and_the_web_app_fetched_from_it_are_ambiguous() -> None:
    mine = local_app("/apps/corp.json", "dev.test.corp", type="http", baseUrl="https://api.corp.example/v1")
    theirs = web_app("https://api.corp.example", "example.corp.api")
    directory = AppDirectory([mine], [theirs])
    for reference in ("api.corp.example", "https://api.corp.example/v1/x"):
        with pytest.raises(AmbiguousAppError):
            directory.resolve(reference)


def test_a_web_apps_display_name_equal_to_a_local_id_does_not_make_it_ambiguous() -> None:
    mine = local_app("/apps/notes.json")
    theirs = web_app("https://notes.example", "dev.test.theirs", name=ID)
    assert AppDirectory([mine], [theirs]).resolve(ID) is mine


def test_an_unknown_operation_of_a_big_app_is_named_with_its_closest_names_not_all_of_them() -> None:
    names = [f"create_{thing}" for thing in ("issue", "branch", "release")] + [
        f"op_{i:03d}" for i in range(200)
    ]
    app = http_app("dev.test.big", tools=[operation(name, "Does one thing") for name in names])

    with pytest.raises(UnknownToolError) as raised:
        resolve_tool(app, "create_isue")

    message = raised.value.message
    assert "has no tool 'create_isue' (did you mean 'create_issue'" in message
    assert "it has 203 operations" in message and "op_150" not in message
    assert raised.value.data["known_count"] == 203 and "known_tools" not in raised.value.data
    assert "aai_search" in message


def test_an_unknown_operation_name_of_a_megabyte_comes_back_cut() -> None:
    app = http_app("dev.test.small", tools=[operation("echo", "Echo")])
    with pytest.raises(UnknownToolError) as raised:
        resolve_tool(app, "x" * 1_000_000)
    assert len(raised.value.message) < 1_000 and "(1000000 characters)" in raised.value.message
    assert raised.value.data["known_tools"] == ["echo"]


def test_an_unknown_app_is_answered_with_the_names_spelled_like_it_and_a_long_reference_cut() -> None:
    directory = AppDirectory([local_app("/apps/notes.json", "dev.test.notes")], [])

    with pytest.raises(UnknownAppError) as typo:
        directory.resolve("dev.test.note")
    with pytest.raises(UnknownAppError) as huge:
        directory.resolve("n" * 1_000_000)

    assert "no app 'dev.test.note' (did you mean 'dev.test.notes'" in typo.value.message
    assert typo.value.data["close_matches"][0] == "dev.test.notes"
    assert len(huge.value.message) < 1_000 and "(1000000 characters)" in huge.value.message


def test_a_name_that_a_thousand_apps_share_is_ambiguous_in_an_error_of_bounded_size() -> None:
    apps = [
        local_app(f"/apps/{i}.json", f"dev.test.app{i:04d}", type="http", baseUrl="http://127.0.0.1:9")
        for i in range(1000)
    ]
    directory = AppDirectory(apps)
    for reference in ("Notes", "127.0.0.1:9"):
        with pytest.raises(AmbiguousAppError) as caught:
            directory.resolve(reference)
        error = caught.value
        assert error.data["candidate_count"] == 1000
        assert candidates_of(error) == [f"file:/apps/{i}.json" for i in range(50)]
        assert "file:/apps/9.json" in error.message and "file:/apps/10.json" not in error.message
        assert (
            error.message.count("name it") == 10
            and "… (1000 in all: aai_search finds the one meant)" in error.message
        )
        assert len(json.dumps(error.to_payload())) < 10_000
