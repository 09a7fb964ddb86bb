"""Consent end to end: two MCP clients of different names against one private OS keyring, each
answer of the elicitation form behaving as named, in both protocol generations; a client that
cannot ask getting CONSENT_REQUIRED with a working consent page and the command that grants it;
a client that can only open links answering on the consent page."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from aai_gateway.consent.prompt_text import ConsentQuestion, build_prompt
from aai_gateway.server.pages import MAX_OPEN_PAGES
from tests.builders import c_descriptor, write_json
from tests.http_handlers import QuietHandler
from tests.keyring_session import PrivateKeyring
from tests.server.conftest import adapter_app

pytestmark = pytest.mark.anyio

HOSTILE_NAME = 'Mail "x" \\ $(touch PWNED) `touch PWNED` " & do shell script "touch PWNED" & "'
HOSTILE_TEXT = 'line one\nline two "quoted" $(touch PWNED) `id` \\\\ " & do shell script "touch PWNED" & "'
ARGUMENTS = {"text": 'hi "there" $(touch PWNED)'}
GENERATIONS = pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["2025-11-25", "2026-07-28"])


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    document = adapter_app()
    document["app"]["name"] = {"en": HOSTILE_NAME}
    document["tools"][0]["description"] = HOSTILE_TEXT
    write_json(tmp_path / "apps" / "adapter.json", document)
    return tmp_path / "apps"


def env_for(keyring: PrivateKeyring, apps: Path) -> dict[str, str]:
    """No desktop (the elicitation path is under test), no config, and `aai-gateway` on PATH as
    a user has it, for the commands the gateway prints."""
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(desktop, None)
    env["AAI_GATEWAY_CONFIG"] = str(apps.parent / "no-config.toml")
    bin_dir = apps.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    command = bin_dir / "aai-gateway"
    command.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m aai_gateway "$@"\n', encoding="utf-8"
    )
    command.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    return env


class User:
    """Answers consent forms the way it is told to, and remembers what it was shown."""

    def __init__(self, decision: str, remember: bool = False) -> None:
        self.decision, self.remember = decision, remember
        self.shown: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.shown.append(params)
        return types.ElicitResult(
            action="accept", content={"decision": self.decision, "remember": self.remember}
        )


def gateway(env: dict[str, str], apps: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )


@asynccontextmanager
async def client(
    env: dict[str, str],
    apps: Path,
    name: str,
    mode: str = "legacy",
    user: Any = None,
    *,
    transport: Transport | None = None,
) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"elicitation_callback": user} if user else {}
    async with Client(
        transport or gateway(env, apps),
        mode=mode,
        client_info=types.Implementation(name=name, version="1"),
        **options,
    ) as c:
        # "auto" must really have negotiated the per-request generation, not fallen back.
        assert (c.protocol_version in MODERN_PROTOCOL_VERSIONS) is (mode == "auto")
        yield c


async def call(
    c: Client, tool: str = "echo", arguments: dict[str, Any] | None = None
) -> tuple[str | None, Any]:
    """(error code or None, payload)."""
    if arguments is None:
        arguments = ARGUMENTS if tool == "echo" else {}
    result = await c.call_tool("aai_exec", {"app": "dev.test.adapter", "tool": tool, "args": arguments})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    payload = json.loads(block.text)
    return (payload["error"]["code"], payload["error"]) if result.is_error else (None, payload)


async def answer_page(url: str, choice: str) -> str:
    """What a user's browser does on the consent page: load it, press the button `choice`."""
    async with httpx.AsyncClient() as browser:
        page = await browser.get(url)
        assert page.status_code == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        assert f'value="{choice}"' in page.text
        done = await browser.post(url, data={"csrf": csrf.group(1), "choice": choice})
        assert done.status_code == 200, done.text
        return page.text


async def no_marker(apps: Path) -> None:
    assert not await anyio.Path(apps / "PWNED").exists()  # where the adapter runs
    assert not await anyio.Path("PWNED").exists()


# --------------------------------------------------------------------------- elicitation form


@GENERATIONS
async def test_the_form_shows_the_caller_app_tool_description_and_arguments_as_the_dialog_does(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    user = User("allow_once")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
    [form] = user.shown
    question = ConsentQuestion(
        caller="agent-a",
        app_name=HOSTILE_NAME,
        app_id="dev.test.adapter",
        source=f"file:{apps / 'adapter.json'}",
        tool="echo",
        tool_description=HOSTILE_TEXT,
        arguments={**ARGUMENTS, "count": 1},
    )
    assert form.message == build_prompt(question).text
    assert f"Agent: agent-a\nApp: {HOSTILE_NAME[:40]}" in form.message  # as text, wrapped at 70 columns
    assert "  line one\n  line two" in form.message  # the description keeps its lines, indented
    assert '  "text": "hi \\"there\\" $(touch PWNED)",' in form.message
    choices = [c["const"] for c in form.requested_schema["properties"]["decision"]["oneOf"]]
    assert choices == ["allow_once", "allow_tool", "allow_app", "deny"]
    await no_marker(apps)


@GENERATIONS
async def test_a_client_or_app_name_with_line_breaks_or_bidi_cannot_fake_a_line_of_the_form(
    keyring: PrivateKeyring, tmp_path: Path, mode: str
) -> None:
    apps = tmp_path / "apps"
    document = adapter_app()
    document["app"]["name"] = {"en": "Evil\u202eliaM\nApp id: com.apple.mail"}
    write_json(apps / "adapter.json", document)
    user = User("deny")
    fake_caller = "Evil\n\nApp: Trusted Notes (com.apple.notes)"
    async with client(env_for(keyring, apps), apps, fake_caller, mode, user) as c:
        assert (await call(c))[0] == "CONSENT_DENIED"
    [form] = user.shown
    lines = form.message.split("\n")
    assert "Agent: Evil\\n\\nApp: Trusted Notes (com.apple.notes)" in lines
    # The app's name lost its bidi override and line break when its file loaded (shown_text.py)
    assert [line for line in lines if line.startswith("App: ")] == ["App: EvilliaM App id: com.apple.mail"]
    assert "\u202e" not in form.message


@GENERATIONS
async def test_allow_once_asks_again_next_time(keyring: PrivateKeyring, apps: Path, mode: str) -> None:
    user = User("allow_once")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
        assert (await call(c))[0] is None
    assert len(user.shown) == 2


async def test_one_allow_once_answer_replayed_by_two_concurrent_retries_runs_the_call_once(
    keyring: PrivateKeyring, apps: Path
) -> None:
    """2026-07-28: a client (or anything replaying its messages) that sends the retry carrying the
    user's "Allow once" twice at the same time gets the call run once; the other retry is asked
    again."""
    user = User("allow_once")  # declares that the client can ask; this test answers itself
    async with client(env_for(keyring, apps), apps, "agent-a", "auto", user) as c:
        arguments = {"app": "dev.test.adapter", "tool": "sleep", "args": {"seconds": 1.5}}
        first = await c.session.call_tool("aai_exec", arguments, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.input_requests
        allow = types.ElicitResult(action="accept", content={"decision": "allow_once", "remember": False})
        answers: dict[str, types.InputResponse] = dict.fromkeys(first.input_requests, allow)
        outcomes: list[Any] = []

        async def retry() -> None:
            outcomes.append(
                await c.session.call_tool(
                    "aai_exec",
                    arguments,
                    input_responses=answers,
                    request_state=first.request_state,
                    allow_input_required=True,
                )
            )

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(retry)
            await anyio.sleep(0.5)  # the first retry is running the tool by now
            tasks.start_soon(retry)
    ran = [o for o in outcomes if isinstance(o, types.CallToolResult)]
    asked = [o for o in outcomes if isinstance(o, types.InputRequiredResult)]
    assert len(ran) == 1 and not ran[0].is_error, outcomes
    assert len(asked) == 1 and asked[0].request_state != first.request_state


@GENERATIONS
async def test_always_allow_this_tool_covers_that_tool_only(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    user = User("allow_tool")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
        assert (await call(c))[0] is None
        assert len(user.shown) == 1
        assert (await call(c, "fail"))[0] == "NOT_FOUND"  # asked, allowed, and the app answered
    assert len(user.shown) == 2


@GENERATIONS
async def test_always_allow_all_tools_covers_every_tool_of_the_app(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    user = User("allow_app")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
        assert (await call(c, "fail"))[0] == "NOT_FOUND"
    assert len(user.shown) == 1


@GENERATIONS
async def test_deny_is_respected_and_asked_again_unless_remembered(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    env = env_for(keyring, apps)
    once = User("deny")
    async with client(env, apps, "agent-a", mode, once) as c:
        code, error = await call(c)
        assert code == "CONSENT_DENIED" and error["data"]["remembered"] is False
        assert (await call(c))[0] == "CONSENT_DENIED"
    assert len(once.shown) == 2

    remembered = User("deny", remember=True)
    async with client(env, apps, "agent-a", mode, remembered) as c:
        code, error = await call(c)
        assert code == "CONSENT_DENIED" and error["data"]["remembered"] is True
        assert error["data"]["command"] == (
            "aai-gateway consent revoke --caller=agent-a --app=dev.test.adapter --tool=echo "
            f"--source=file:{apps / 'adapter.json'}"
        )
        assert (await call(c))[0] == "CONSENT_DENIED"
    assert len(remembered.shown) == 1
    await anyio.run_process(["sh", "-c", error["data"]["command"]], env=env)
    async with client(env, apps, "agent-a", mode, User("allow_once")) as c:
        assert (await call(c))[0] is None  # the denial is forgotten: asked, and allowed


async def test_a_grant_to_one_client_is_invisible_to_another_and_survives_a_restart(
    keyring: PrivateKeyring, apps: Path
) -> None:
    env = env_for(keyring, apps)
    async with client(env, apps, "agent-a", "legacy", User("allow_tool")) as a:
        assert (await call(a))[0] is None
    async with client(env, apps, "agent-b", "auto") as b:  # no elicitation: cannot be asked
        assert (await call(b))[0] == "CONSENT_REQUIRED"
    async with client(env, apps, "agent-a", "auto") as a_again:  # a new gateway process
        assert (await call(a_again))[0] is None


# --------------------------------------------------------------------------- nobody can ask


@GENERATIONS
async def test_a_client_without_elicitation_gets_consent_required_with_everything_to_show_the_user(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    async with client(env_for(keyring, apps), apps, "agent-b", mode) as b:
        code, error = await call(b)
    assert code == "CONSENT_REQUIRED"
    data = error["data"]
    assert data["caller"] == "agent-b"
    assert (data["app_id"], data["app_name"], data["tool"]) == ("dev.test.adapter", HOSTILE_NAME, "echo")
    assert data["source"] == f"file:{apps / 'adapter.json'}"
    assert data["tool_description"] == HOSTILE_TEXT
    assert data["tool_parameters"]["required"] == ["text"]
    assert data["arguments"] == {**ARGUMENTS, "count": 1}
    assert data["command"] == (
        "aai-gateway consent grant --caller=agent-b --app=dev.test.adapter --tool=echo "
        f"--source=file:{apps / 'adapter.json'}"
    )
    assert data["command"] in error["message"]


@GENERATIONS
async def test_an_agent_that_fetches_every_link_it_reads_cannot_approve_its_own_call(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    # The model reads CONSENT_REQUIRED. Were an approval page's link in it, an agent with a fetch
    # tool could GET the page, read its CSRF token and POST "always allow" (issue 11, item 2).
    async with client(env_for(keyring, apps), apps, "agent-b", mode) as b:
        code, error = await call(b)
        assert code == "CONSENT_REQUIRED"
        read_by_the_model = json.dumps(error)
        links = re.findall(r"https?://[^\s\"'\\]+", read_by_the_model)
        assert links == [], links
        async with httpx.AsyncClient() as agent_fetch:
            for link in links:  # what such an agent would do with any link it found
                await agent_fetch.get(link)
        assert (await call(b))[0] == "CONSENT_REQUIRED"
    await no_marker(apps)


URL_ONLY: dict[str, Any] = {"url": {}}


def advertising_url_elicitation_only(message: SessionMessage) -> SessionMessage:
    """The message with the client's capabilities (in `initialize`, and in each request's `_meta`
    on 2026-07-28) saying that it can open links for the user, and cannot show forms."""
    request = message.message
    if not isinstance(request, types.JSONRPCRequest) or request.params is None:
        return message
    params = dict(request.params)
    if request.method == "initialize":
        params["capabilities"] = {**params.get("capabilities", {}), "elicitation": URL_ONLY}
    meta = params.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(types.CLIENT_CAPABILITIES_META_KEY), dict):
        capabilities = {**meta[types.CLIENT_CAPABILITIES_META_KEY], "elicitation": URL_ONLY}
        params["_meta"] = {**meta, types.CLIENT_CAPABILITIES_META_KEY: capabilities}
    return SessionMessage(request.model_copy(update={"params": params}), message.metadata)


@asynccontextmanager
async def link_only_client_transport(server: StdioServerParameters) -> AsyncIterator[tuple[Any, Any]]:
    """stdio to the gateway as a client that can only open links speaks it: what the SDK client
    sends passes through `advertising_url_elicitation_only` on its way to the server."""
    async with stdio_client(server) as (read_stream, write_stream):
        sending, outgoing = anyio.create_memory_object_stream[SessionMessage]()

        async def forward() -> None:
            async with outgoing:
                async for message in outgoing:
                    await write_stream.send(advertising_url_elicitation_only(message))

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            async with sending:
                yield read_stream, sending


@GENERATIONS
async def test_a_client_that_can_only_open_links_gets_the_consent_page_and_goes_on(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    pages: list[str] = []

    async def browser_user(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams)
        pages.append(await answer_page(params.url, "allow_tool"))
        return types.ElicitResult(action="accept")

    transport = link_only_client_transport(gateway(env_for(keyring, apps), apps))
    async with client(env_for(keyring, apps), apps, "agent-c", mode, browser_user, transport=transport) as c:
        assert (await call(c))[0] is None
        assert (await call(c))[0] is None
    [page] = pages  # asked once, remembered
    assert "agent-c" in page and "Always allow this tool" in page
    await no_marker(apps)


async def test_an_agent_calling_in_a_loop_opens_no_more_consent_pages_than_the_limit(
    keyring: PrivateKeyring, apps: Path
) -> None:
    """Each page holds a socket for ten minutes: past the limit, a call is refused as one from a
    client that cannot ask is (CONSENT_REQUIRED, with the command that grants it), at once."""
    opened: list[str] = []
    all_open = anyio.Event()

    async def user_away(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams)
        opened.append(params.url)
        if len(opened) == MAX_OPEN_PAGES:
            all_open.set()
        return types.ElicitResult(action="accept")  # the link was opened; nobody answers the page

    transport = link_only_client_transport(gateway(env_for(keyring, apps), apps))
    agent = client(env_for(keyring, apps), apps, "agent-d", "legacy", user_away, transport=transport)
    async with agent as c, anyio.create_task_group() as waiting:
        for number in range(MAX_OPEN_PAGES):
            waiting.start_soon(call, c, "echo", {"text": f"call {number}"})
        with anyio.fail_after(120):  # a call that never opened its page must fail the test, not hang it
            await all_open.wait()
            code, error = await call(c, "echo", {"text": "one call too many"})
        waiting.cancel_scope.cancel()
    assert code == "CONSENT_REQUIRED"
    assert "aai-gateway consent grant" in json.dumps(error)
    assert len(set(opened)) == MAX_OPEN_PAGES


async def test_the_grant_command_works_as_printed_in_a_shell_without_discovery_options(
    keyring: PrivateKeyring, apps: Path, tmp_path: Path
) -> None:
    env = env_for(keyring, apps)
    caller = "-x \"$(touch PWNED)\" `touch PWNED` 'quoted'"
    async with client(env, apps, caller, "auto") as b:
        code, error = await call(b)
        assert code == "CONSENT_REQUIRED"
        done = await anyio.run_process(["sh", "-c", error["data"]["command"]], env=env, cwd=tmp_path)
        assert caller.encode() in done.stdout
        assert (await call(b))[0] is None
    assert not (tmp_path / "PWNED").exists()
    await no_marker(apps)
    listed = await anyio.run_process(["aai-gateway", "consent", "list", "--json"], env=env)
    [row] = json.loads(listed.stdout)
    assert (row["caller"], row["app"], row["tool"], row["decision"]) == (
        caller,
        "dev.test.adapter",
        "echo",
        "allow",
    )
    assert row["source"] == f"file:{apps / 'adapter.json'}"
    revoke = ["consent", "revoke", f"--caller={caller}", "--app", "dev.test.adapter", "--tool", "echo"]
    await anyio.run_process(["aai-gateway", *revoke], env=env)  # no discovery options needed either
    listed = await anyio.run_process(["aai-gateway", "consent", "list", "--json"], env=env)
    assert json.loads(listed.stdout) == []


@GENERATIONS
async def test_a_nameless_client_is_offered_no_lasting_grant(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    async with client(env_for(keyring, apps), apps, "  ", mode) as anonymous:
        code, error = await call(anonymous)
    assert code == "CONSENT_REQUIRED"
    assert error["data"]["caller"] == "Unknown Client"
    assert error["data"]["command"] is None
    assert "no lasting grant" in error["data"]["no_lasting_grant"]


KEY = "sk-typed-on-the-page-0123456789"


class _KeyedApi(QuietHandler):
    """GET /me: 200 with the right X-Key, else 401."""

    def do_GET(self) -> None:
        ok = self.headers.get("X-Key") == KEY
        self.send_json(200 if ok else 401, b'{"user": "alice"}' if ok else b'{"message": "no key"}')


@GENERATIONS
async def test_a_link_only_client_allowing_once_on_the_page_then_saving_a_key_is_not_asked_for_consent_again(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    """Consent on the consent page ("Allow once"), then the app's key on the credential page: the
    call then runs, in that same call, on that one answer; the user is shown each page once and
    the gateway never waits on a page it did not show."""
    api = ThreadingHTTPServer(("127.0.0.1", 0), _KeyedApi)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    document = c_descriptor("dev.test.keyed", name="Keyed", platform="web", type="http")
    document["execution"]["baseUrl"] = f"http://127.0.0.1:{api.server_port}"
    document["auth"] = {
        "type": "apiKey",
        "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://keys.example"},
    }
    document["tools"][0].update(name="me", execution={"path": "/me", "method": "GET"})
    write_json(apps / "keyed.json", document)
    shown: list[str] = []

    async def browser_user(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams)
        consent = "allow or deny" in params.message
        shown.append("consent" if consent else "credentials")
        if consent:
            await answer_page(params.url, "allow_once")
        else:
            async with httpx.AsyncClient() as browser:
                page = await browser.get(params.url)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None
                saved = await browser.post(params.url, data={"csrf": csrf.group(1), "api_key": KEY})
                assert saved.status_code == 200, saved.text
        return types.ElicitResult(action="accept")

    env = env_for(keyring, apps)
    transport = link_only_client_transport(gateway(env, apps))
    try:
        async with client(env, apps, "agent-c", mode, browser_user, transport=transport) as c:
            with anyio.fail_after(60):  # were it waiting on a page nobody was shown: a page's 10 minutes
                result = await c.call_tool("aai_exec", {"app": "dev.test.keyed", "tool": "me", "args": {}})
    finally:
        api.shutdown()
        api.server_close()
    assert result.structured_content == {"user": "alice"}, result
    assert shown == ["consent", "credentials"]
