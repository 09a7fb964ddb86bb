"""`aai-gateway serve` started again reads and checks only the descriptor files that changed,
and lists and guides exactly what the files say: the SDK client over stdio, real processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.builders import c_descriptor, write_json
from tests.server.conftest import connected

pytestmark = pytest.mark.anyio
HOUR_AGO = time.time() - 3600


def write_app(folder: Path, app_id: str, description: str) -> None:
    document = c_descriptor(app_id, type="http", baseUrl="http://127.0.0.1:9")
    document["app"]["description"] = description
    path = write_json(folder / app_id / "aai.json", document)
    os.utime(path, (HOUR_AGO, HOUR_AGO))  # older than the cache's two seconds of doubt


async def start(folder: Path, log: Path, mode: str) -> tuple[list[str], str]:
    """The names tools/list gives, and the guide of dev.test.a."""
    async with connected(folder, mode, "--log-level", "INFO", "--log-file", str(log)) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        guide = await client.call_tool("app_dev_test_a", {})
    text = guide.content[0].text  # type: ignore[union-attr]
    return listed, text


def served_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if "serving" in line]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_second_start_takes_every_unchanged_descriptor_from_the_cache(
    tmp_path: Path, mode: str
) -> None:
    folder, log = tmp_path / "apps", tmp_path / "gateway.log"
    for name in ("a", "b", "c"):
        write_app(folder, f"dev.test.{name}", f"App {name} for tests")
    first = await start(folder, log, mode)
    second = await start(folder, log, mode)
    assert second == first
    assert "3 descriptor files read and checked, 0 from the descriptor cache" in served_lines(log)[0]
    assert "0 descriptor files read and checked, 3 from the descriptor cache" in served_lines(log)[1]

    write_app(folder, "dev.test.a", "Edited while the gateway was stopped")
    listed, guide = await start(folder, log, mode)
    assert "1 descriptor files read and checked, 2 from the descriptor cache" in served_lines(log)[2]
    assert listed == first[0]
    assert "Edited while the gateway was stopped" in guide
