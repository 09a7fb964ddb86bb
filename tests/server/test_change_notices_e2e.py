"""A running `aai-gateway serve` notices descriptors added and removed through the OS's file
notifications, and polls instead, saying why, when it cannot have them.

The gateway runs as its own process, driven by the SDK's MCP client in both protocol generations.
Where notifications are meant to work the poll interval is an hour: a change listed in time was
noticed, not polled for."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage

import aai_gateway
from tests.builders import c_descriptor, write_json
from tests.server.conftest import gateway_command

pytestmark = pytest.mark.anyio
NEW = "app_dev_test_new"
HOUR = ("--poll-interval", "3600")
# The package under test, so the gateway process runs these sources (a worktree's too).
SOURCES = str(Path(aai_gateway.__file__).resolve().parents[1])
Changed = Callable[[], Awaitable[None]]


def new_app() -> dict[str, object]:
    return c_descriptor("dev.test.new", name="New", type="http", baseUrl="http://127.0.0.1:9")


def serve_command(folder: Path, *extra: str, wrapper: tuple[str, ...] = ()) -> StdioServerParameters:
    plain = gateway_command(folder, *extra)
    command = [*wrapper, plain.command, *plain.args]
    return StdioServerParameters(
        command=command[0], args=command[1:], env={**(plain.env or {}), "PYTHONPATH": SOURCES}
    )


@asynccontextmanager
async def gateway(params: StdioServerParameters, mode: str) -> AsyncIterator[tuple[Client, Changed]]:
    """The client, and a wait for the next tools/list_changed (15 s at most) in its generation."""
    changes = [anyio.Event()]

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes[0].set()

    info = types.Implementation(name="test-agent", version="1.0")
    async with Client(params, mode=mode, client_info=info, message_handler=on_message) as client:
        await client.list_tools()  # a handshake client is notified once it has asked
        if mode == "legacy":

            async def next_handshake_change() -> None:
                with anyio.fail_after(15):
                    await changes[0].wait()
                changes[0] = anyio.Event()

            yield client, next_handshake_change
        else:
            async with client.listen(tools_list_changed=True) as events:

                async def next_event() -> None:
                    with anyio.fail_after(15):
                        await events.__anext__()

                yield client, next_event


async def names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["2025-11-25 handshake", "2026-07-28 per-request"])
async def test_a_descriptor_added_to_the_path_folder_is_listed_and_a_removed_one_unlisted(
    apps_dir: Path, mode: str
) -> None:
    async with gateway(serve_command(apps_dir, *HOUR), mode) as (client, changed):
        assert NEW not in await names(client)
        write_json(apps_dir / "new.json", new_app())
        await changed()
        assert NEW in await names(client)

        (apps_dir / "new.json").unlink()
        await changed()
        assert NEW not in await names(client)


async def test_an_app_folder_made_while_serving_is_watched_for_its_descriptor(apps_dir: Path) -> None:
    async with gateway(serve_command(apps_dir, *HOUR), "legacy") as (client, changed):
        (apps_dir / "new").mkdir()  # the descriptor comes at once, before the folder is watched:
        write_json(apps_dir / "new" / "aai.json", new_app())  # the rescan after watching it finds it
        await changed()
        assert NEW in await names(client)


async def test_forced_polling_finds_changes_at_the_poll_interval(apps_dir: Path) -> None:
    params = serve_command(apps_dir, "--force-polling", "--poll-interval", "0.2")
    async with gateway(params, "legacy") as (client, changed):
        write_json(apps_dir / "new.json", new_app())
        await changed()
        assert NEW in await names(client)


def watch_limit_of_one() -> tuple[str, ...]:
    """A command prefix running the gateway in a user namespace whose inotify limit is one watch,
    so that the kernel really refuses the second; () where user namespaces are not available."""
    prefix = ("unshare", "--user", "--map-root-user", "sh", "-c")
    script = 'echo 1 > /proc/sys/user/max_inotify_watches && exec "$@"'
    if not sys.platform.startswith("linux"):
        return ()
    try:
        probe = subprocess.run([*prefix, script, "sh", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    return (*prefix, script, "sh") if probe.returncode == 0 else ()


async def test_at_the_inotify_watch_limit_the_gateway_polls_and_says_how_to_raise_it(
    apps_dir: Path,
) -> None:
    wrapper = watch_limit_of_one()
    if not wrapper:
        pytest.skip("no user namespaces here to lower the inotify limit in")
    log = apps_dir.parent / "gateway.log"
    params = serve_command(apps_dir, "--poll-interval", "0.2", "--log-file", str(log), wrapper=wrapper)
    async with gateway(params, "legacy") as (client, changed):
        write_json(apps_dir / "new.json", new_app())
        await changed()
        assert NEW in await names(client)
    warnings = [line for line in log.read_text(encoding="utf-8").splitlines() if "WARNING" in line]
    assert len(warnings) == 1, warnings
    assert "every 0.2 s instead of by file notifications" in warnings[0]
    assert "sudo sysctl fs.inotify.max_user_watches=524288" in warnings[0]
