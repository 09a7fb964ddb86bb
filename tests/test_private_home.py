"""No test reaches the developer's own folders (tests/conftest.py, `private_home`): not the test,
not a module's shared fixture that starts a gateway before any test's own folders exist, and not
a gateway that an MCP client starts with its default environment (HOME, PATH and a few more,
none of the XDG variables), which finds its cache, config and state from HOME alone."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from aai_gateway.discovery.card_cache import DATABASE
from tests.builders import write_json
from tests.conftest import GATEWAY, GATEWAY_SETTINGS, USER_GATEWAY_FOLDERS, gateway_folders
from tests.server.conftest import adapter_app


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def assert_private(folders: list[Path], root: Path) -> None:
    """Every gateway folder is under the tests' temporary `root`, none is the developer's."""
    assert not set(folders) & set(USER_GATEWAY_FOLDERS)
    assert [folder for folder in folders if not folder.is_relative_to(root)] == []


def test_every_test_runs_with_a_home_and_gateway_folders_of_its_own_and_none_of_the_users_settings(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert_private(gateway_folders(), tmp_path_factory.getbasetemp())
    assert [name for name in os.environ if name.startswith(GATEWAY_SETTINGS)] == []


@pytest.fixture(scope="module")
def folders_of_a_shared_fixture() -> Iterator[list[Path]]:
    yield gateway_folders()  # what a gateway started here, for a whole module, would use


def test_a_modules_shared_fixture_already_has_private_folders(
    folders_of_a_shared_fixture: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert_private(folders_of_a_shared_fixture, tmp_path_factory.getbasetemp())


@pytest.mark.anyio
async def test_a_gateway_an_mcp_client_starts_with_its_default_environment_caches_in_the_tests_home(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    home = Path(os.environ["HOME"])
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    # No `env`: the MCP SDK passes on its default environment, as it does for a user's client.
    bare = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "--no-default-paths", "--path", str(tmp_path / "apps")],
    )
    async with Client(bare, client_info=types.Implementation(name="test", version="1")) as client:
        assert (await client.list_tools()).tools
    assert (home / ".cache" / GATEWAY / DATABASE).is_file()
