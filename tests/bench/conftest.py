"""The benchmarks import each other as top-level modules (`from harness import ...`): tests of
their code import them the same way."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
