"""Snapshot checking for the guide tests.

`snapshot(name, text)` compares `text` with `tests/guide/snapshots/<name>.md`. Run
`UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/guide` to (re)write the files, then review the diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from .helpers import SNAPSHOT_DIR

Snapshot = Callable[[str, str], None]


def updating_snapshots() -> bool:
    return os.environ.get("UPDATE_SNAPSHOTS", "") not in ("", "0")


@pytest.fixture
def snapshot() -> Snapshot:
    def check(name: str, text: str) -> None:
        path = SNAPSHOT_DIR / f"{name}.md"
        if updating_snapshots():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
            return
        if not path.exists():
            pytest.fail(
                f"no snapshot {path.name}; write it with UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/guide"
            )
        expected = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
        assert text == expected, (
            f"guide differs from snapshots/{path.name}; if the change is intended, "
            "rewrite it with UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/guide"
        )

    return check
