"""Every run starts in `cli/entry.py`: its imports make no full pass of the cyclic collector."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, sys
full_passes = []
def count(phase, info):
    if phase == "start" and info["generation"] == 2:
        full_passes.append(1)
gc.callbacks.append(count)
sys.argv = ["aai-gateway", "--version"]
from aai_gateway.cli.entry import main
try:
    main()
except SystemExit:
    pass
print(len(full_passes), gc.isenabled(), gc.get_freeze_count())
"""


def test_the_commands_imports_make_no_full_collection_and_leave_the_collector_on() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120
    )
    assert "aai-gateway" in done.stdout
    full_passes, collecting, frozen = done.stdout.splitlines()[-1].split()
    assert full_passes == "0"
    assert collecting == "True"
    assert int(frozen) > 10_000  # what the imports made is out of the collector's view
