"""The one-time credential page: a user types a secret into a local page in a real browser, the
gateway stores it; nobody else (other sites, rebinding DNS names, stale forms) gets to submit,
descriptor text cannot inject markup, and secrets stay out of logs."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from aai_gateway.auth.credential_page import CredentialPage, parse_cookie_header
from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.descriptor import AppDescriptor, LocalizedName, Source
from aai_gateway.descriptor.model import (
    HttpChannel,
    PlatformSection,
    Tool,
)
from aai_gateway.descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, CookieAuth, Instructions
from aai_gateway.errors import SecretStoreUnavailableError
from aai_gateway.pages import local_page
from aai_gateway.pages.local_page import CSP, PageClosedError
from tests.browser import assert_no_markup_ran, chromium

HOSTILE = """<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'"&amp;"""
URL_PATTERN = re.compile(r"^http://127\.0\.0\.1:(\d+)/c/([A-Za-z0-9_-]{43})$")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------- builders


def make_app(
    *,
    app_id: str = "com.example.notes",
    names: dict[str, str] | None = None,
    source: Source | None = None,
) -> AppDescriptor:
    channel = HttpChannel(base_url="https://api.example.com")
    tool = Tool(name="ping", parameters={"type": "object"}, channel=channel)
    names = names or {"en": "Notes", "zh-CN": "笔记"}
    return AppDescriptor(
        dialect="C",
        schema_version="1.0",
        version="1.0.0",
        declared_version="1.0.0",
        id=app_id,
        names=LocalizedName(names=names, default_lang=next(iter(names))),
        description="Notes for tests",
        sections=(PlatformSection(platform="web", declared_type="http", channel=channel, tools=(tool,)),),
        platform="web",
        tools=(tool,),
        source=source
        or Source(
            kind="web",
            location="https://notes.example.com/.well-known/aai.json",
            origin="https://notes.example.com",
        ),
    )


API_KEY = ApiKeyAuth(
    name="X-Api-Key",
    obtain_url="https://notes.example.com/settings/keys",
    instructions=Instructions(
        short="Create a key in Settings.",
        detailed="Open Settings\nthen API keys",
        help_url="https://notes.example.com/help/keys",
    ),
)
APP_CREDENTIAL = AppCredentialAuth(
    token_endpoint="https://open.example.com/token",
    token_type="tenantAccessToken",
    instructions=Instructions(short="Copy App ID and App Secret from the developer console."),
)
COOKIES = CookieAuth(
    login_url="https://notes.example.com/login",
    required_cookies=("session_id", "csrf_token"),
    domain="notes.example.com",
    instructions=Instructions(short="Sign in first."),
)


def memory_store() -> CredentialStore:
    return CredentialStore(MemorySecretStore())


async def csrf_of(client: httpx.AsyncClient, url: str) -> str:
    response = await client.get(url)
    assert response.status_code == 200, response.text
    found = re.search(r'name="csrf" value="([^"]+)"', response.text)
    assert found is not None
    return found.group(1)


async def post(client: httpx.AsyncClient, url: str, data: dict[str, str], **headers: str) -> httpx.Response:
    return await client.post(url, data=data, headers=headers)


async def server_is_closed(url: str, within: float = 5.0) -> bool:
    """True once connecting to the page's port is refused (polls until `within` seconds pass)."""
    with anyio.move_on_after(within):
        while True:
            try:
                async with httpx.AsyncClient() as client:
                    await client.get(url)
            except httpx.ConnectError:
                return True
            except (httpx.ReadError, httpx.RemoteProtocolError):
                pass  # accepted as the server was closing, then dropped: still closing, ask again
            await anyio.sleep(0.05)
    return False


def port_of(url: str) -> int:
    found = URL_PATTERN.match(url)
    assert found is not None, url
    return int(found.group(1))


# --------------------------------------------------------------------------- in the browser


@pytest.mark.anyio
async def test_an_api_key_typed_into_the_page_in_chromium_lands_in_the_store() -> None:
    store = memory_store()
    app = make_app()
    page = CredentialPage(app, API_KEY, store, locale="zh-CN")
    async with page.serve() as url, chromium() as browser:
        assert URL_PATTERN.match(url) and page.url == url
        tab = await browser.new_page()
        response = await tab.goto(url)
        assert response is not None and response.status == 200
        text = await tab.inner_text("body")
        for expected in (
            "笔记",  # the name in the requested locale
            "com.example.notes",
            "https://notes.example.com",  # where the descriptor came from
            "Create a key in Settings.",
            "Open Settings\nthen API keys",
            "https://notes.example.com/help/keys",
            "operating system's keyring",
            "never sent to the AI agent",
        ):
            assert expected in text
        assert await tab.get_attribute("a[href='https://notes.example.com/settings/keys']", "rel") == (
            "noopener noreferrer"
        )
        key_input = tab.get_by_label("API key")
        assert await key_input.get_attribute("type") == "password"
        assert await tab.locator("input[type=hidden][name=csrf]").count() == 1
        await key_input.fill("sk-live-0123456789")
        await tab.get_by_role("button", name="Save to keyring").click()
        await tab.get_by_text("Saved. You can close this tab.").first.wait_for()
        credential = await page.wait()
    assert credential.kind == "apiKey" and credential.api_key == "sk-live-0123456789"
    assert credential.binding == "https://notes.example.com"  # bound to where the descriptor came from
    stored = store.load(app)
    assert stored is not None and stored.api_key == "sk-live-0123456789"


@pytest.mark.anyio
async def test_an_app_id_and_secret_typed_in_chromium_with_javascript_off_land_in_the_store() -> None:
    store = memory_store()
    app = make_app(app_id="com.example.open", source=Source(kind="bundled", location="bundled:open"))
    page = CredentialPage(app, APP_CREDENTIAL, store)
    async with page.serve() as url, chromium() as browser:
        context = await browser.new_context(java_script_enabled=False)
        tab = await context.new_page()
        await tab.goto(url)
        text = await tab.inner_text("body")
        assert "bundled with AAI Gateway" in text and "App ID and App Secret" in text
        assert await tab.get_by_label("App ID").get_attribute("type") == "text"
        assert await tab.get_by_label("App Secret").get_attribute("type") == "password"
        await tab.get_by_label("App ID").fill("cli_a1b2c3")
        await tab.get_by_label("App Secret").fill("s3cr3t-app-secret")
        await tab.get_by_role("button", name="Save to keyring").click()
        await tab.get_by_text("Saved. You can close this tab.").first.wait_for()
        credential = await page.wait()
    assert (credential.kind, credential.client_id, credential.client_secret) == (
        "appCredential",
        "cli_a1b2c3",
        "s3cr3t-app-secret",
    )
    assert store.load(app) is not None


@pytest.mark.anyio
async def test_cookies_are_checked_in_chromium_and_a_missing_one_keeps_the_page_open_with_an_error() -> None:
    store = memory_store()
    app = make_app(source=Source(kind="file", location="/home/u/.aai/notes/aai.json"))
    page = CredentialPage(app, COOKIES, store)
    async with page.serve() as url, chromium() as browser:
        tab = await browser.new_page()
        await tab.goto(url)
        text = await tab.inner_text("body")
        assert "the local file /home/u/.aai/notes/aai.json" in text
        assert "session_id" in text and "csrf_token" in text and "notes.example.com/login" in text
        await tab.get_by_label("Cookie header").fill("session_id=abc123; theme=dark")
        await tab.get_by_role("button", name="Save to keyring").click()
        alert = tab.get_by_role("alert")
        await alert.wait_for()
        assert "The cookie csrf_token is missing." in await alert.inner_text()
        assert await tab.get_by_label("Value of cookie csrf_token").get_attribute("aria-invalid") == "true"
        assert "abc123" not in await tab.content()  # secrets are not echoed back
        assert store.load(app) is None

        await tab.get_by_label("Value of cookie session_id").fill("abc123")
        await tab.get_by_label("Value of cookie csrf_token").fill("tok456")
        await tab.get_by_role("button", name="Save to keyring").click()
        await tab.get_by_text("Saved. You can close this tab.").first.wait_for()
        credential = await page.wait()
    assert credential.kind == "cookie"
    assert credential.cookies == {"session_id": "abc123", "csrf_token": "tok456"}


@pytest.mark.anyio
async def test_hostile_descriptor_strings_are_shown_as_text_and_run_no_script_in_chromium() -> None:
    instructions = Instructions(
        short=HOSTILE,
        detailed=f"</p>{HOSTILE}",
        help_url="javascript:window.__pwned=3",
        screenshot_url='https://x.example/"><script>window.__pwned=4</script>',
    )
    auth = CookieAuth(
        login_url="javascript:window.__pwned=5",
        required_cookies=('sid"><script>window.__pwned=6</script>',),
        domain=HOSTILE,
        instructions=instructions,
    )
    app = make_app(
        app_id=f"com.evil{HOSTILE}",
        names={"en": HOSTILE},
        source=Source(
            kind="web", location="https://evil.example/aai.json", origin=f"https://evil.example/{HOSTILE}"
        ),
    )
    page = CredentialPage(app, auth, memory_store(), timeout_seconds=30)
    dialogs: list[str] = []
    async with page.serve() as url, chromium() as browser:
        tab = await browser.new_page()
        tab.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await tab.goto(url)
        await assert_no_markup_ran(tab)
        assert await tab.locator("a[href^='javascript:']").count() == 0
        assert HOSTILE in await tab.inner_text("h1")
        assert await tab.title() == f"Connect {HOSTILE} — AAI Gateway"
        # the re-rendered form after an error is escaped just the same
        await tab.get_by_role("button", name="Save to keyring").click()
        await tab.get_by_role("alert").wait_for()
        await assert_no_markup_ran(tab)
    assert dialogs == []


# --------------------------------------------------------------------------- raw HTTP


@pytest.mark.anyio
async def test_a_pasted_cookie_header_keeps_extra_cookies_and_a_field_filled_one_by_one_wins() -> None:
    store = memory_store()
    page = CredentialPage(make_app(), COOKIES, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        response = await post(
            client,
            url,
            {
                "csrf": csrf,
                "cookie_header": "Cookie: session_id=old; csrf_token=tok; _ga=GA1.2.3",
                "cookie_0": "new",  # session_id
                "cookie_1": "",
            },
        )
        assert response.status_code == 200, response.text
        credential = await page.wait()
    assert credential.cookies == {"session_id": "new", "csrf_token": "tok", "_ga": "GA1.2.3"}


def test_a_cookie_header_is_split_into_name_value_pairs_and_malformed_parts_are_named_by_position() -> None:
    cookies, problems = parse_cookie_header(" a=1;b = 2 ; ; c=x=y;bad; d=\x01;")
    assert cookies == {"a": "1", "b": "2", "c": "x=y"}
    assert problems == [
        "Part 5 of the cookie header is not name=value.",
        "The value of part 6 of the cookie header has a forbidden character.",
    ]


@pytest.mark.anyio
async def test_a_cookie_value_with_a_semicolon_or_a_line_break_is_refused() -> None:
    page = CredentialPage(make_app(), COOKIES, memory_store())
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        for bad in ("a;evil=1", "a\r\nX: y", "a,b"):
            response = await post(client, url, {"csrf": csrf, "cookie_0": bad, "cookie_1": "ok"})
            assert response.status_code == 400
            assert "forbidden character" in response.text
        assert page.state == "open"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "Enter the API key."),
        ("   \t ", "Enter the API key."),
        ("sk-1\r\nX-Injected: 1", "must be one line"),
        ("sk-1\nmore", "must be one line"),
        ("sk-\x00", "must be one line"),
    ],
)
async def test_an_empty_or_multi_line_api_key_is_refused_with_a_clear_error_and_the_page_stays_open(
    value: str, message: str
) -> None:
    store = memory_store()
    app = make_app()
    page = CredentialPage(app, API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        response = await post(client, url, {"csrf": csrf, "api_key": value})
        assert response.status_code == 400
        assert message in response.text and 'role="alert"' in response.text
        assert 'aria-invalid="true"' in response.text
        if value.strip():
            assert value not in response.text
        assert store.load(app) is None and page.state == "open"
        response = await post(client, url, {"csrf": csrf, "api_key": "  sk-good  \n"})
        assert response.status_code == 200
        assert (await page.wait()).api_key == "sk-good"  # surrounding whitespace trimmed


@pytest.mark.anyio
async def test_an_app_credential_needs_both_the_app_id_and_the_secret() -> None:
    page = CredentialPage(make_app(), APP_CREDENTIAL, memory_store())
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        response = await post(client, url, {"csrf": csrf, "app_id": "cli_1", "app_secret": ""})
        assert response.status_code == 400 and "Enter the App Secret." in response.text
        assert 'value="cli_1"' in response.text  # the non-secret App ID is kept for the retry
        response = await post(client, url, {"csrf": csrf, "app_id": "", "app_secret": "shh-secret"})
        assert response.status_code == 400 and "Enter the App ID." in response.text
        assert "shh-secret" not in response.text
        assert page.state == "open"


@pytest.mark.anyio
async def test_the_page_works_once_then_answers_410_gone_and_its_server_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local_page, "SHUTDOWN_GRACE_SECONDS", 1.0)  # room to knock again
    store = memory_store()
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        first = await post(client, url, {"csrf": csrf, "api_key": "sk-first"})
        assert first.status_code == 200 and "Saved. You can close this tab." in first.text
        second = await post(client, url, {"csrf": csrf, "api_key": "sk-second"})
        assert second.status_code == 410
        assert (await client.get(url)).status_code == 410
        assert (await page.wait()).api_key == "sk-first"
        assert await server_is_closed(url), "the server keeps running after the credential was saved"
    loaded = store.load(make_app())
    assert loaded is not None and loaded.api_key == "sk-first"


@pytest.mark.anyio
async def test_a_wrong_token_or_another_path_gets_404_and_saves_nothing() -> None:
    store = memory_store()
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        base = url.rsplit("/c/", 1)[0]
        for other in (f"{base}/c/{'A' * 43}", url[:-1], f"{url}x", f"{url}/", f"{base}/c/", f"{base}/"):
            assert (await client.get(other)).status_code == 404
            assert (await post(client, other, {"csrf": csrf, "api_key": "sk-x"})).status_code == 404
        assert store.load(make_app()) is None and page.state == "open"


@pytest.mark.anyio
async def test_a_post_without_the_pages_csrf_token_is_refused_and_the_page_stays_usable() -> None:
    store = memory_store()
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        for data in (
            {"api_key": "sk-x"},
            {"csrf": "", "api_key": "sk-x"},
            {"csrf": csrf[:-1] + ("B" if csrf.endswith("A") else "A"), "api_key": "sk-x"},  # one char off
        ):
            assert (await post(client, url, data)).status_code == 403
        assert store.load(make_app()) is None
        assert (await post(client, url, {"csrf": csrf, "api_key": "sk-ok"})).status_code == 200


@pytest.mark.anyio
async def test_a_request_with_a_foreign_host_header_is_refused_against_dns_rebinding() -> None:
    store = memory_store()
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        port = port_of(url)
        csrf = await csrf_of(client, url)
        for host in (f"evil.example:{port}", f"localhost:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
            get = await client.get(url, headers={"Host": host})
            assert get.status_code == 400 and "csrf" not in get.text
            response = await post(client, url, {"csrf": csrf, "api_key": "sk-x"}, Host=host)
            assert response.status_code == 400
        assert store.load(make_app()) is None and page.state == "open"


@pytest.mark.anyio
async def test_a_post_from_a_foreign_origin_or_a_cross_site_fetch_is_refused() -> None:
    store = memory_store()
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        port = port_of(url)
        csrf = await csrf_of(client, url)
        data = {"csrf": csrf, "api_key": "sk-x"}
        for origin in (
            "http://evil.example",
            "null",
            f"http://localhost:{port}",
            f"https://127.0.0.1:{port}",
        ):
            assert (await post(client, url, data, Origin=origin)).status_code == 403
        for site in ("cross-site", "same-site"):
            assert (await post(client, url, data, **{"Sec-Fetch-Site": site})).status_code == 403
        assert store.load(make_app()) is None
        same = await post(
            client, url, data, Origin=f"http://127.0.0.1:{port}", **{"Sec-Fetch-Site": "same-origin"}
        )
        assert same.status_code == 200


@pytest.mark.anyio
async def test_only_a_urlencoded_form_of_bounded_size_is_accepted() -> None:
    page = CredentialPage(make_app(), API_KEY, memory_store())
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        as_json = await client.post(url, json={"csrf": csrf, "api_key": "sk-x"})
        assert as_json.status_code == 415
        multipart = await client.post(url, data={"csrf": csrf}, files={"api_key": ("k", b"sk-x")})
        assert multipart.status_code == 415
        huge = await post(client, url, {"csrf": csrf, "api_key": "k" * 70_000})
        assert huge.status_code == 413
        assert (await client.put(url, content=b"")).status_code == 405
        assert page.state == "open"


@pytest.mark.anyio
async def test_every_response_forbids_caching_framing_referrers_and_scripts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local_page, "SHUTDOWN_GRACE_SECONDS", 1.0)
    page = CredentialPage(make_app(), API_KEY, memory_store())
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        responses = [
            await client.get(url),
            await client.get(url + "x"),
            await client.get(url, headers={"Host": "evil.example"}),
            await post(client, url, {"csrf": csrf, "api_key": ""}),
            await post(client, url, {"csrf": "nope", "api_key": "k"}),
            await post(client, url, {"csrf": csrf, "api_key": "k"}),
            await client.get(url),  # 410
        ]
    for response in responses:
        headers = response.headers
        assert headers["cache-control"] == "no-store"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] in ("no-referrer", "same-origin")
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["content-security-policy"] == CSP
        assert headers["content-type"].startswith("text/html")
    assert "script-src" not in CSP and "default-src 'none'" in CSP and "frame-ancestors 'none'" in CSP
    assert "'unsafe-inline'" not in CSP


# --------------------------------------------------------------------------- lifecycle


@pytest.mark.anyio
async def test_nobody_submitting_before_the_timeout_raises_timeout_error_and_stops_the_server() -> None:
    page = CredentialPage(make_app(), API_KEY, memory_store(), timeout_seconds=0.3)
    async with page.serve() as url:
        with anyio.fail_after(5):
            with pytest.raises(TimeoutError, match=r"com\.example\.notes"):
                await page.wait()
        assert page.state == "expired"
        assert await server_is_closed(url)


@pytest.mark.anyio
async def test_leaving_the_context_closes_the_page_and_wait_then_says_so() -> None:
    page = CredentialPage(make_app(), API_KEY, memory_store())
    async with page.serve() as url, httpx.AsyncClient() as client:
        assert (await client.get(url)).status_code == 200
    assert page.state == "closed"
    assert await server_is_closed(url, within=0.5)
    with pytest.raises(PageClosedError):
        await page.wait()
    with pytest.raises(RuntimeError, match="only once"):
        async with page.serve():
            pass


@pytest.mark.anyio
async def test_an_error_inside_the_context_propagates_as_itself_and_the_server_stops() -> None:
    page = CredentialPage(make_app(), API_KEY, memory_store())
    url = ""
    with pytest.raises(LookupError, match="boom"):
        async with page.serve() as url:
            raise LookupError("boom")
    assert await server_is_closed(url, within=0.5)


@pytest.mark.anyio
async def test_waiting_before_serving_is_a_programming_error() -> None:
    page = CredentialPage(make_app(), API_KEY, memory_store())
    with pytest.raises(RuntimeError, match="serve"):
        await page.wait()
    with pytest.raises(RuntimeError, match="not served"):
        _ = page.url


class FailingSecrets(MemorySecretStore):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def set(self, key: str, value: str) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise SecretStoreUnavailableError("the keyring is locked")
        super().set(key, value)


@pytest.mark.anyio
async def test_a_keyring_failure_is_shown_and_the_user_can_retry_on_the_same_page() -> None:
    store = CredentialStore(FailingSecrets(failures=1))
    page = CredentialPage(make_app(), API_KEY, store)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        failed = await post(client, url, {"csrf": csrf, "api_key": "sk-retry-me"})
        assert failed.status_code == 500
        assert "the keyring is locked" in failed.text and "sk-retry-me" not in failed.text
        assert page.state == "open"
        assert (await post(client, url, {"csrf": csrf, "api_key": "sk-retry-me"})).status_code == 200
        assert (await page.wait()).api_key == "sk-retry-me"


class SlowSecrets(MemorySecretStore):
    """A keyring that takes a while, like one waiting for the user to unlock it."""

    def set(self, key: str, value: str) -> None:
        time.sleep(1.0)
        super().set(key, value)


@pytest.mark.anyio
async def test_a_save_under_way_when_the_time_runs_out_still_completes_and_is_returned() -> None:
    store = CredentialStore(SlowSecrets())
    page = CredentialPage(make_app(), API_KEY, store, timeout_seconds=0.5)
    async with page.serve() as url, httpx.AsyncClient() as client:
        csrf = await csrf_of(client, url)
        response = await post(client, url, {"csrf": csrf, "api_key": "sk-slow"})
        assert response.status_code == 200
        assert (await page.wait()).api_key == "sk-slow"
        assert page.state == "saved"


@pytest.mark.anyio
async def test_submitted_secrets_never_reach_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = ["sk-LOGCHECK-1", "LOGCHECK-app-secret", "LOGCHECK-cookie"]
    store = CredentialStore(FailingSecrets(failures=1))
    cases: list[tuple[Any, Callable[[str], list[dict[str, str]]]]] = [
        (
            API_KEY,
            lambda csrf: [
                {"csrf": "wrong", "api_key": secrets[0]},
                {"csrf": csrf, "api_key": secrets[0] + "\n" + secrets[0]},
                {"csrf": csrf, "api_key": secrets[0]},  # fails once in the keyring
                {"csrf": csrf, "api_key": secrets[0]},
            ],
        ),
        (
            APP_CREDENTIAL,
            lambda csrf: [
                {"csrf": csrf, "app_id": "", "app_secret": secrets[1]},
                {"csrf": csrf, "app_id": "cli_1", "app_secret": secrets[1]},
            ],
        ),
        (
            COOKIES,
            lambda csrf: [
                {"csrf": csrf, "cookie_header": f"session_id={secrets[2]}; x"},
                {"csrf": csrf, "cookie_0": secrets[2], "cookie_1": secrets[2]},
            ],
        ),
    ]
    for index, (auth, forms) in enumerate(cases):
        page = CredentialPage(make_app(app_id=f"com.example.log{index}"), auth, store)
        async with page.serve() as url, httpx.AsyncClient() as client:
            for form in forms(await csrf_of(client, url)):
                await post(client, url, form)
            await page.wait()
    logged = caplog.text + repr([(r.msg, r.args) for r in caplog.records])
    assert "saved to the keyring" in logged  # the log does record what happened...
    for secret in secrets:
        assert secret not in logged  # ...but never the values
    assert len(store.stored()) == 3


def test_only_api_keys_app_credentials_and_cookies_are_asked_for_on_the_page() -> None:
    from aai_gateway.descriptor.model_auth import OAuth2Auth

    oauth = OAuth2Auth(authorization_endpoint="https://x/a", token_endpoint="https://x/t")
    with pytest.raises(TypeError):
        CredentialPage(make_app(), oauth, memory_store())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        CredentialPage(make_app(), API_KEY, memory_store(), timeout_seconds=0)
