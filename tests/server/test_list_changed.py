"""Apps added or removed on disk while the gateway runs reach the client as tools/list_changed."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage

from tests.builders import c_descriptor, write_json
from tests.server.conftest import connected

pytestmark = pytest.mark.anyio
POLL = ("--poll-interval", "0.2")


def new_app() -> dict[str, object]:
    """An app that is runnable anywhere (HTTP), so listing it is a real change."""
    return c_descriptor("dev.test.new", name="New", type="http", baseUrl="http://127.0.0.1:9")


async def names(client: object) -> list[str]:
    listed = await client.list_tools()  # type: ignore[attr-defined]
    return [t.name for t in listed.tools]


async def test_a_handshake_client_is_notified_when_an_app_is_added_and_removed(apps_dir: Path) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connected(apps_dir, "legacy", *POLL, message_handler=on_message) as client:
        assert "app_dev_test_new" not in await names(client)
        write_json(apps_dir / "new.json", new_app())
        with anyio.fail_after(15):
            await changed.wait()
        assert "app_dev_test_new" in await names(client)

        changed = anyio.Event()
        (apps_dir / "new.json").unlink()
        with anyio.fail_after(15):
            await changed.wait()
        assert "app_dev_test_new" not in await names(client)


async def test_a_per_request_client_listening_for_tool_changes_gets_an_event(apps_dir: Path) -> None:
    async with connected(apps_dir, "auto", *POLL) as client:
        assert "app_dev_test_new" not in await names(client)
        async with client.listen(tools_list_changed=True) as subscription:
            write_json(apps_dir / "new.json", new_app())
            with anyio.fail_after(15):
                await subscription.__anext__()
        assert "app_dev_test_new" in await names(client)


async def test_a_changed_description_is_a_change_but_an_untouched_rescan_is_not(apps_dir: Path) -> None:
    events = 0
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        nonlocal events
        if isinstance(message, types.ToolListChangedNotification):
            events += 1
            changed.set()

    async with connected(apps_dir, "legacy", *POLL, message_handler=on_message) as client:
        await anyio.sleep(1.0)  # several polls with nothing changed
        assert events == 0
        document = c_descriptor("dev.test.offline", name="Offline", type="http", baseUrl="http://127.0.0.1:9")
        document["app"]["description"] = "Now with a new description"
        write_json(apps_dir / "offline.json", document)
        with anyio.fail_after(15):
            await changed.wait()
        listed = await client.list_tools()
    offline = next(t for t in listed.tools if t.name == "app_dev_test_offline")
    assert offline.description is not None and "Now with a new description." in offline.description


def with_threshold(apps_dir: Path, max_apps: int, pinned: str) -> None:
    """`[listing]` in the gateway's config.toml (after the consent settings the fixture wrote)."""
    config = apps_dir.parent / "config.toml"
    listing = f'\n[listing]\nmax_apps = {max_apps}\npinned = ["{pinned}"]\n'
    config.write_text(config.read_text(encoding="utf-8") + listing, encoding="utf-8")


BOUNDED = ["app_dev_test_adapter", "aai_search", "web_discover", "aai_exec"]


async def test_a_handshake_client_is_notified_when_the_apps_cross_the_listing_threshold(
    apps_dir: Path,
) -> None:
    with_threshold(apps_dir, 3, "dev.test.adapter")  # the folder has three runnable apps
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connected(apps_dir, "legacy", *POLL, message_handler=on_message) as client:
        assert "app_dev_test_offline" in await names(client)  # three apps: every one listed
        write_json(apps_dir / "new.json", new_app())
        with anyio.fail_after(15):
            await changed.wait()
        assert await names(client) == BOUNDED  # four: the pinned app and the universal tools

        changed = anyio.Event()
        (apps_dir / "new.json").unlink()
        with anyio.fail_after(15):
            await changed.wait()
        assert "app_dev_test_offline" in await names(client)


async def test_a_per_request_client_is_told_when_the_listing_becomes_bounded(apps_dir: Path) -> None:
    with_threshold(apps_dir, 3, "dev.test.adapter")
    async with connected(apps_dir, "auto", *POLL) as client:
        assert "app_dev_test_offline" in await names(client)
        async with client.listen(tools_list_changed=True) as subscription:
            write_json(apps_dir / "new.json", new_app())
            with anyio.fail_after(15):
                await subscription.__anext__()
        assert await names(client) == BOUNDED


async def test_in_a_bounded_list_an_app_added_without_a_pin_changes_nothing_the_client_sees(
    apps_dir: Path,
) -> None:
    with_threshold(apps_dir, 1, "dev.test.adapter")
    events = 0

    async def on_message(message: IncomingMessage) -> None:
        nonlocal events
        if isinstance(message, types.ToolListChangedNotification):
            events += 1

    async with connected(apps_dir, "legacy", *POLL, message_handler=on_message) as client:
        assert await names(client) == BOUNDED
        write_json(apps_dir / "new.json", new_app())
        found = await client.call_tool("aai_search", {"query": "New"})
        for _ in range(50):  # until a rescan has picked the new app up (it is searchable then)
            if found.structured_content and found.structured_content["results"]:
                break
            await anyio.sleep(0.2)
            found = await client.call_tool("aai_search", {"query": "New"})
        assert found.structured_content is not None
        assert found.structured_content["results"][0]["app"] == "dev.test.new"
        assert await names(client) == BOUNDED
    assert events == 0
