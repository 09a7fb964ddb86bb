from __future__ import annotations

from pathlib import Path

import pytest

from tests.discovery.cache_support import five_apps


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    """Five descriptors, older than the card cache's two seconds of doubt."""
    return five_apps(tmp_path / "apps")
