"""The specification's own examples load, and the same app written in two dialects means the same thing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, ExecutionType, Platform, Tool
from aai_gateway.descriptor.model import (
    AcpChannel,
    AppleEventsChannel,
    ComChannel,
    DbusCall,
    DbusChannel,
    HttpCall,
    HttpChannel,
    ScriptCall,
    StdioChannel,
)
from aai_gateway.descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, CookieAuth, OAuth2Auth

from .helpers import (
    HOSTS,
    SPEC_DIR,
    JsonDict,
    fragments,
    load,
    read_fixture,
    rendered,
    search_tool_parameters,
    spec_fixture_paths,
    valid_c,
    with_changes,
)

LOCALES = ("zh-CN", "zh-TW", "en-US", "en", "ja-JP", "fr")


def expected_dialect(path: Path) -> str:
    if path.name.endswith(".c.json"):
        return "C"
    return path.name[0].upper()


def loaded(name: str, host: Platform = "linux") -> AppDescriptor:
    result = load((SPEC_DIR / name).read_bytes(), host)
    assert result.descriptor is not None, rendered(result)
    assert result.errors == []
    return result.descriptor


def tool_parts(tool: Tool) -> tuple[str, str, dict[str, Any], dict[str, Any] | None]:
    return (tool.name, tool.description, tool.parameters, tool.returns)


def assert_same_app(left: AppDescriptor, right: AppDescriptor, locales: tuple[str, ...] = LOCALES) -> None:
    assert left.id == right.id
    assert left.names.all_names() == right.names.all_names()
    for locale in locales:
        assert left.names.lookup(locale) == right.names.lookup(locale), locale
    assert left.names.primary == right.names.primary
    assert left.description == right.description
    assert left.aliases == right.aliases
    assert left.version == right.version


def assert_same_tools(left: tuple[Tool, ...], right: tuple[Tool, ...]) -> None:
    assert [tool_parts(t) for t in left] == [tool_parts(t) for t in right]


# --------------------------------------------------------------------------- every example loads


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("path", spec_fixture_paths(), ids=lambda p: p.name)
def test_every_spec_example_normalizes_without_errors_on_every_desktop_host(
    path: Path, host: Platform
) -> None:
    result = load(path.read_bytes(), host)

    assert result.errors == [], rendered(result)
    assert result.descriptor is not None
    assert result.dialect == expected_dialect(path)
    assert result.descriptor.dialect == result.dialect
    assert result.descriptor.tools, "every example declares at least one tool usable on a desktop host"
    result.descriptor.model_dump(mode="json")


def test_the_only_warnings_in_the_spec_examples_are_the_tools_the_spec_left_without_description() -> None:
    for path in spec_fixture_paths():
        result = load(path.read_bytes())
        for warning in result.warnings:
            assert warning.pointer.endswith("/description"), (path.name, warning.render())


@pytest.mark.parametrize("host", [*HOSTS, "web"])
def test_the_multi_platform_example_exposes_the_host_section_plus_web_tools(host: Platform) -> None:
    descriptor = loaded("b_mail.json", host)

    expected = {
        "macos": ["send_email", "search_emails", "search"],
        "windows": ["send_email", "search"],
        "linux": ["send_email", "search"],
        "web": ["search"],
    }[host]
    assert [t.name for t in descriptor.tools] == expected
    assert descriptor.platform == host
    assert descriptor.declared_platforms == ("macos", "windows", "linux", "android", "ios", "web")


def test_the_chinese_multi_platform_example_has_no_web_section_so_linux_gets_only_dbus_tools() -> None:
    descriptor = loaded("b_mail_zh.json", "linux")

    assert [(t.name, t.execution_type) for t in descriptor.tools] == [("send_email", ExecutionType.DBUS)]
    assert "web" not in descriptor.declared_platforms


def test_the_version_1_0_of_the_multi_platform_example_becomes_1_0_0() -> None:
    descriptor = loaded("b_mail.json")

    assert descriptor.version == "1.0.0"
    assert descriptor.declared_version == "1.0"


# --------------------------------------------------------------------------- C fragments


def _fragment_ids(value: Any) -> str:
    return str(value["type"]) if isinstance(value, dict) else str(value)


EXECUTION_PLATFORM: dict[str, str] = {
    "http": "web",
    "stdio": "linux",
    "acp": "windows",
    "apple-events": "macos",
    "dbus": "linux",
    "com": "windows",
}


@pytest.mark.parametrize("execution", fragments()["execution"], ids=_fragment_ids)
def test_every_execution_example_of_the_c_spec_normalizes_in_a_minimal_descriptor(
    execution: JsonDict,
) -> None:
    platform = EXECUTION_PLATFORM[execution["type"]]
    document = with_changes(valid_c("macos"), ("/platform", platform), ("/execution", execution))

    result = load(document)

    assert result.errors == [], rendered(result)
    assert result.warnings == []
    assert result.descriptor is not None
    channel = result.descriptor.tools[0].channel
    assert channel.type == execution["type"]
    assert result.descriptor.sections[0].declared_type == execution["type"]


def test_the_execution_examples_keep_their_settings_in_the_canonical_channel() -> None:
    channels = {}
    for execution in fragments()["execution"]:
        platform = EXECUTION_PLATFORM[execution["type"]]
        document = with_changes(valid_c("macos"), ("/platform", platform), ("/execution", execution))
        descriptor = load(document).descriptor
        assert descriptor is not None
        channels[execution["type"]] = descriptor.tools[0].channel

    assert channels["http"] == HttpChannel(
        base_url="https://api.example.com/v1", default_headers={"Content-Type": "application/json"}
    )
    assert channels["stdio"] == StdioChannel(
        command="aai-anything-example", args=("--exec",), timeout_ms=120000
    )
    assert channels["acp"] == AcpChannel(command="opencode", args=("--mcp",))
    assert channels["apple-events"] == AppleEventsChannel(
        bundle_id="com.example.reminders", event_class="AAI ", event_id="call"
    )
    assert channels["dbus"] == DbusChannel(
        service="com.example.files",
        object_path="/com/example/files/Executor",
        interface="com.example.files.Executor",
        bus="session",
    )
    assert channels["com"] == ComChannel(prog_id="Example.Application")


@pytest.mark.parametrize("auth", fragments()["auth"], ids=_fragment_ids)
def test_every_auth_example_of_the_c_spec_normalizes_in_a_minimal_web_descriptor(auth: JsonDict) -> None:
    document = with_changes(valid_c("web"), ("/auth", auth))

    result = load(document)

    assert result.errors == [], rendered(result)
    assert result.warnings == []
    assert result.descriptor is not None
    channel = result.descriptor.tools[0].channel
    assert isinstance(channel, HttpChannel)
    assert channel.auth is not None
    assert channel.auth.type == auth["type"]


def test_the_auth_examples_keep_their_settings_in_the_canonical_auth() -> None:
    found = {}
    for auth in fragments()["auth"]:
        descriptor = load(with_changes(valid_c("web"), ("/auth", auth))).descriptor
        assert descriptor is not None
        channel = descriptor.tools[0].channel
        assert isinstance(channel, HttpChannel)
        found[auth["type"]] = channel.auth

    oauth2 = found["oauth2"]
    assert isinstance(oauth2, OAuth2Auth)
    assert oauth2.authorization_endpoint == "https://example.com/oauth/authorize"
    assert oauth2.token_endpoint == "https://example.com/oauth/token"
    assert oauth2.scopes == ("read", "write")
    assert oauth2.pkce_method == "S256"
    api_key = found["apiKey"]
    assert isinstance(api_key, ApiKeyAuth)
    assert (api_key.location, api_key.name, api_key.obtain_url) == (
        "header",
        "X-Auth-Token",
        "https://example.com/settings/tokens",
    )
    assert api_key.instructions is not None
    assert api_key.instructions.help_url == "https://example.com/docs/api"
    credential = found["appCredential"]
    assert isinstance(credential, AppCredentialAuth)
    assert (credential.token_type, credential.expires_in) == ("tenantAccessToken", 7200)
    cookie = found["cookie"]
    assert isinstance(cookie, CookieAuth)
    assert cookie.required_cookies == ("session", "authToken")
    assert cookie.domain == ".example.com"
    assert cookie.instructions is not None
    assert cookie.instructions.short.startswith("Login in browser")


@pytest.mark.parametrize("index", [0, 1])
def test_every_tool_example_of_the_c_spec_normalizes_in_a_minimal_descriptor(index: int) -> None:
    tool = fragments()["tool"][index]
    document = with_changes(valid_c("macos"), ("/tools", [tool]))

    descriptor = load(document).descriptor

    assert descriptor is not None
    assert tool_parts(descriptor.tools[0]) == ("search", "Search for items", tool["parameters"], None)


def test_the_two_name_examples_of_the_spec_give_the_same_english_and_chinese_names() -> None:
    object_form, pipe_form = fragments()["names"]
    c_document = with_changes(valid_c("web"), ("/app/name", object_form["name"]))
    a_document = {**read_fixture("a_structure.json")}
    a_document["app"] = {**a_document["app"], "name": pipe_form["name"]}

    c_names = load(c_document).descriptor
    a_names = load(a_document).descriptor

    assert c_names is not None
    assert a_names is not None
    for locale in ("en", "en-US", "zh-CN", "zh_CN.UTF-8"):
        assert a_names.names.lookup(locale) == c_names.names.lookup(locale), locale
    assert c_names.names.lookup("ja") == "リマインダー"
    assert c_names.names.lookup("zh-TW") == "提醒事項"
    assert a_names.names.lookup("zh-TW") == "提醒事项"


# --------------------------------------------------------------------------- dialect A ≡ dialect C

A_EQUIVALENTS = {
    "a_desktop_macos.json": "a_desktop_macos.c.json",
    "a_structure.json": "a_structure.c.json",
    "a_web.json": "c_web_oauth2.json",
}


@pytest.mark.parametrize(("a_name", "c_name"), A_EQUIVALENTS.items())
def test_each_dialect_a_example_means_the_same_as_its_dialect_c_equivalent(a_name: str, c_name: str) -> None:
    a = loaded(a_name)
    c = loaded(c_name)

    # "fr" is left out: a pipe string cannot say which of its Latin-script names is French
    # (see the next test); every locale whose script identifies the name must agree.
    assert_same_app(a, c, locales=tuple(loc for loc in LOCALES if loc != "fr"))
    assert_same_tools(a.tools, c.tools)
    assert a.platform == c.platform
    assert [t.channel for t in a.tools] == [t.channel for t in c.tools]
    assert [t.call for t in a.tools] == [t.call for t in c.tools]


def test_a_pipe_name_cannot_tell_french_from_german_so_fr_falls_back_to_the_primary_name() -> None:
    a = loaded("a_desktop_macos.json")
    c = loaded("a_desktop_macos.c.json")

    assert a.names.lookup("fr") == "Reminders"
    assert c.names.lookup("fr") == "Rappels"
    assert a.names.all_names() == c.names.all_names() == ["Reminders", "提醒事项", "Rappels", "Erinnerungen"]


def test_an_example_without_a_french_name_agrees_on_fr_in_both_dialects() -> None:
    assert_same_app(loaded("a_web.json"), loaded("c_web_oauth2.json"), locales=("fr", "de-CH"))


def test_the_a_web_example_keeps_its_oauth2_pkce_base_url_and_per_tool_http_call() -> None:
    tool = loaded("a_web.json").tools[0]

    assert tool.channel == HttpChannel(
        base_url="https://api.example.com/v1",
        default_headers={"Content-Type": "application/json"},
        auth=OAuth2Auth(
            authorization_endpoint="https://example.com/oauth/authorize",
            token_endpoint="https://example.com/oauth/token",
            scopes=("read", "write"),
            pkce_method="S256",
        ),
    )
    assert tool.call == HttpCall(path="/search", method="POST")


def test_dialect_a_ipc_on_macos_means_apple_events_to_the_app_id_as_in_dialect_c() -> None:
    channel = loaded("a_desktop_macos.json").tools[0].channel

    assert channel == AppleEventsChannel(bundle_id="com.example.reminders")


# --------------------------------------------------------------------------- dialect B ≡ C per platform

# Dialect C has no android or ios platform and no AppleScript channel: those sections are compared
# on their app and tool parts only; the tools of the mobile sections equal the linux ones.
B_EQUIVALENTS: dict[Platform, tuple[str, bool]] = {
    "macos": ("b_mail.macos.c.json", False),
    "windows": ("b_mail.windows.c.json", True),
    "linux": ("b_mail.linux.c.json", True),
    "android": ("b_mail.linux.c.json", False),
    "ios": ("b_mail.linux.c.json", False),
    "web": ("b_mail.web.c.json", True),
}


B_SECTIONS = [
    *(("b_mail.json", platform) for platform in B_EQUIVALENTS),
    *(("b_mail_zh.json", platform) for platform in B_EQUIVALENTS if platform != "web"),
]


@pytest.mark.parametrize(("b_name", "platform"), B_SECTIONS)
def test_each_platform_section_of_the_dialect_b_example_means_the_same_as_a_dialect_c_file(
    b_name: str, platform: Platform
) -> None:
    c_name, same_channel = B_EQUIVALENTS[platform]
    b = loaded(b_name, host=platform)
    c = loaded(c_name)
    section = b.section(platform)
    assert section is not None

    assert_same_app(b, c)
    assert_same_tools(section.tools, c.tools)
    assert all(t.channel == section.channel for t in section.tools)
    if same_channel:
        assert section.channel == c.sections[0].channel
        assert [t.channel for t in section.tools] == [t.channel for t in c.tools]


def test_on_the_web_host_the_dialect_b_example_is_exactly_its_web_section() -> None:
    b = loaded("b_mail.json", host="web")
    c = loaded("b_mail.web.c.json")

    assert_same_tools(b.tools, c.tools)
    assert [t.channel for t in b.tools] == [t.channel for t in c.tools]
    call = b.tools[0].call
    assert isinstance(call, HttpCall)
    assert (call.path, call.method, call.body) == ("/search", "POST", {"query": "${query}"})


def test_the_dialect_b_bindings_keep_the_per_tool_calls_c_cannot_express() -> None:
    linux = loaded("b_mail.json", host="linux").section("linux")
    macos = loaded("b_mail.json", host="macos").section("macos")
    assert linux is not None
    assert macos is not None

    assert linux.tools[0].call == DbusCall(method="SendEmail", output_parser="json")
    script = macos.tools[1].call
    assert isinstance(script, ScriptCall)
    assert '"${query}"' in script.script
    assert script.output_parser == "result as text"
    assert macos.channel.type == ExecutionType.APPLESCRIPT


# --------------------------------------------------------------------------- dialect B merge rule


def _clashing_b() -> JsonDict:
    def tool(name: str, **binding: Any) -> JsonDict:
        return {
            "name": name,
            "description": f"{name} tool",
            "parameters": search_tool_parameters(),
            **binding,
        }

    return {
        "schema_version": "1.0",
        "appId": "com.example.search",
        "name": "Search",
        "description": "Finds things",
        "version": "2.1",
        "platforms": {
            "linux": {
                "automation": "dbus",
                "service": "org.example.Search",
                "object": "/org/example/Search",
                "interface": "org.example.Search",
                "tools": [tool("search", method="Search"), tool("index", method="Index")],
            },
            "web": {
                "automation": "restapi",
                "base_url": "https://search.example.com/api",
                "tools": [
                    tool("search", endpoint="/search", method="GET"),
                    tool("export", endpoint="/export"),
                ],
            },
        },
    }


def test_on_linux_the_active_tools_are_the_linux_section_plus_web_tools_linux_lacks() -> None:
    descriptor = load(_clashing_b(), "linux").descriptor
    assert descriptor is not None

    linux, web = descriptor.section("linux"), descriptor.section("web")
    assert linux is not None and web is not None
    assert [(t.name, t.channel) for t in descriptor.tools] == [
        ("search", linux.channel),
        ("index", linux.channel),
        ("export", web.channel),
    ]


def test_when_linux_and_web_both_define_search_the_os_binding_wins() -> None:
    descriptor = load(_clashing_b(), "linux").descriptor
    assert descriptor is not None

    search = descriptor.tool("search")
    assert search is not None
    assert search.execution_type == ExecutionType.DBUS
    assert search.call == DbusCall(method="Search")
    assert descriptor.execution_types == (ExecutionType.DBUS, ExecutionType.HTTP)


@pytest.mark.parametrize("host", ["macos", "windows", "web"])
def test_a_host_without_its_own_section_gets_the_web_tools(host: Platform) -> None:
    descriptor = load(_clashing_b(), host).descriptor
    assert descriptor is not None

    assert [(t.name, t.execution_type) for t in descriptor.tools] == [
        ("search", ExecutionType.HTTP),
        ("export", ExecutionType.HTTP),
    ]
    assert descriptor.platform == "web"


def test_every_section_stays_visible_whatever_the_host() -> None:
    descriptor = load(_clashing_b(), "windows").descriptor
    assert descriptor is not None

    assert descriptor.declared_platforms == ("linux", "web")
    linux = descriptor.section("linux")
    assert linux is not None
    assert [t.name for t in linux.tools] == ["search", "index"]
