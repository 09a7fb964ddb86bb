"""Two web origins serve descriptors claiming the same app id (issue 11, item 1): a key stored
for one of them never reaches the other, whatever order the cache lists them in, across a
restart; the id alone is ambiguous everywhere, and every command the gateway prints names the
origin the key is bound to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from tests.builders import c_descriptor, write_json
from tests.discovery.web_support import LocalCa
from tests.keyring_session import PrivateKeyring
from tests.server.test_web_and_auth import cli, error_of, gateway, gateway_env
from tests.server.web_app import API_KEY, APP_ID, WebAppServer

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def two_sites(ca: LocalCa) -> Iterator[tuple[WebAppServer, WebAppServer]]:
    """Two HTTPS servers on 127.0.0.1 (two ports: two origins), both claiming APP_ID."""
    first, second = WebAppServer(ca).start(), WebAppServer(ca).start()
    yield first, second
    first.stop()
    second.stop()


def keys_received(site: WebAppServer) -> list[str | None]:
    return [key for path, key in site.requests if path.startswith("/api/")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_key_stored_for_one_origin_never_reaches_another_that_claims_the_same_id(
    two_sites: tuple[WebAppServer, WebAppServer],
    keyring: PrivateKeyring,
    ca: LocalCa,
    tmp_path: Path,
    mode: str,
) -> None:
    mine, other = two_sites
    env = gateway_env(keyring, ca, tmp_path / "cache")
    config = tmp_path / "config.toml"
    config.write_text(f'[consent.auto_allow]\napps = ["{mine.origin}", "{other.origin}"]\n')
    env["AAI_GATEWAY_CONFIG"] = str(config)
    async with gateway(env, mode) as client:
        for site in (other, mine):
            assert not (await client.call_tool("web_discover", {"url": site.origin})).is_error
        by_id = error_of(await client.call_tool("aai_exec", {"app": APP_ID, "tool": "whoami", "args": {}}))
        assert by_id["code"] == "UNKNOWN_APP"
        assert sorted(c["reference"] for c in by_id["data"]["candidates"]) == sorted(
            [mine.origin, other.origin]
        )
        needs_key = error_of(
            await client.call_tool("aai_exec", {"app": mine.origin, "tool": "whoami", "args": {}})
        )
        assert needs_key["code"] == "AUTH_REQUIRED"
        command = needs_key["data"]["command"]
        assert command == f"aai-gateway auth set {mine.origin}"

        # The user runs the printed command, as printed, in a shell.
        done = await anyio.run_process(
            ["sh", "-c", command], input=f"{API_KEY}\n".encode(), env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        assert f"bound to the web origin {mine.origin}" in done.stdout.decode()

        ran = await client.call_tool("aai_exec", {"app": mine.origin, "tool": "whoami", "args": {}})
        assert ran.structured_content == {"user": "alice"}, ran
    async with gateway(env, mode) as restarted:  # both come back from the cache, in its order
        by_id = error_of(await restarted.call_tool("aai_exec", {"app": APP_ID, "tool": "whoami", "args": {}}))
        assert by_id["code"] == "UNKNOWN_APP"
        theirs = error_of(
            await restarted.call_tool("aai_exec", {"app": other.origin, "tool": "whoami", "args": {}})
        )
        assert theirs["code"] == "AUTH_REQUIRED"
        assert theirs["data"]["command"] == f"aai-gateway auth set {other.origin}"
        ran = await restarted.call_tool("aai_exec", {"app": mine.origin, "tool": "whoami", "args": {}})
        assert ran.structured_content == {"user": "alice"}, ran
    assert API_KEY in keys_received(mine)
    assert API_KEY not in keys_received(other)


async def test_the_auth_commands_refuse_an_id_two_origins_claim_and_name_each_origin(
    two_sites: tuple[WebAppServer, WebAppServer], keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    mine, other = two_sites
    env = gateway_env(keyring, ca, tmp_path / "cache")
    async with gateway(env, "auto") as client:
        for site in two_sites:
            await client.call_tool("web_discover", {"url": site.origin})
    for action in ("set", "login", "logout"):
        code, out, err = await cli(env, "auth", action, APP_ID, "--no-default-paths", stdin=f"{API_KEY}\n")
        assert code == 2, (action, out, err)
        assert "could mean 2 apps" in err and mine.origin in err and other.origin in err
    code, out, err = await cli(env, "guide", APP_ID, "--no-default-paths")
    assert code == 2 and mine.origin in err and other.origin in err
    code, out, _ = await cli(env, "auth", "status", "--json", "--no-default-paths")
    assert code == 0
    assert sorted(row["source"] for row in json.loads(out)) == sorted([mine.origin, other.origin])
    assert all(row["state"] == "not set" for row in json.loads(out))


async def test_an_answer_given_for_one_app_never_runs_another_that_the_reference_names_by_the_retry(
    ca: LocalCa, keyring: PrivateKeyring, tmp_path: Path
) -> None:
    # 2026-07-28: the user answers the consent form, the client retries the call. Meanwhile (a
    # parallel call of the model) a site is discovered whose id is the very reference used.
    mine = WebAppServer(ca).start()  # alias "webnotes"
    impostor = WebAppServer(ca, app_id="webnotes").start()
    try:
        env = gateway_env(keyring, ca, tmp_path / "cache")
        env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")  # nothing trusted: asked
        asked: list[str] = []
        holder: dict[str, Client] = {}

        async def user(
            context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            if isinstance(params, types.ElicitRequestURLParams):  # the credential page: not now
                return types.ElicitResult(action="decline")
            asked.append(params.message)
            if len(asked) == 1:
                assert not (await holder["c"].call_tool("web_discover", {"url": impostor.origin})).is_error
                return types.ElicitResult(action="accept", content={"decision": "allow_once"})
            return types.ElicitResult(action="decline")

        async with gateway(env, "auto", elicitation_callback=user) as client:
            holder["c"] = client
            assert not (await client.call_tool("web_discover", {"url": mine.origin})).is_error
            call = {"app": "webnotes", "tool": "whoami", "args": {}}
            error = error_of(await client.call_tool("aai_exec", call))
        assert error["code"] == "AUTH_REQUIRED"  # allowed, and about the app the user was asked about
        assert error["data"]["command"] == f"aai-gateway auth set {mine.origin}"
        assert len(asked) == 1 and f"Described by: {mine.origin}" in asked[0]
        assert keys_received(impostor) == []
    finally:
        mine.stop()
        impostor.stop()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_listed_entry_of_a_local_app_shows_its_guide_even_when_a_site_claims_its_id(
    two_sites: tuple[WebAppServer, WebAppServer],
    keyring: PrivateKeyring,
    ca: LocalCa,
    tmp_path: Path,
    mode: str,
) -> None:
    site, _ = two_sites
    local = c_descriptor(APP_ID, name="My Notes", type="http", baseUrl="http://127.0.0.1:9/api")
    write_json(tmp_path / "apps" / "notes.json", local)
    env = gateway_env(keyring, ca, tmp_path / "cache")
    async with gateway(env, mode, "--path", str(tmp_path / "apps")) as client:
        assert not (await client.call_tool("web_discover", {"url": site.origin})).is_error
        guide = await client.call_tool(f"app_{APP_ID.replace('.', '_')}", {})
    assert not guide.is_error, guide
    text = guide.content[0]
    assert isinstance(text, types.TextContent) and "My Notes" in text.text
    assert f'"app": "file:{tmp_path / "apps" / "notes.json"}"' in text.text  # how to call it, unambiguously


async def test_a_key_whose_descriptor_is_gone_is_listed_and_removed_without_the_network(
    two_sites: tuple[WebAppServer, WebAppServer], keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    site, _ = two_sites
    env = gateway_env(keyring, ca, tmp_path / "cache")
    async with gateway(env, "auto") as client:
        await client.call_tool("web_discover", {"url": site.origin})
    assert (await cli(env, "auth", "set", site.origin, "--no-default-paths", stdin=f"{API_KEY}\n"))[0] == 0
    assert (await cli(env, "cache", "clear"))[0] == 0
    site.serve_descriptor = False  # the site is gone too: nothing may be fetched
    code, out, _ = await cli(env, "auth", "status", "--json", "--no-default-paths")
    assert code == 0
    [row] = json.loads(out)
    assert (row["app"], row["source"]) == (APP_ID, site.origin)
    assert "descriptor is not found" in row["state"]
    code, out, err = await cli(env, "auth", "logout", site.origin, "--no-default-paths")
    assert code == 0 and f"Removed stored credentials for {APP_ID} ({site.origin})" in out, err
    code, out, _ = await cli(env, "auth", "status", "--json", "--no-default-paths")
    assert json.loads(out) == []
