"""Every run starts in `cli/entry.py`, and `serve` builds what it serves, with the cyclic collector
off: the ~110,000 objects of the imports live as long as the process (bulk.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SPY = """
import gc, sys
watched = sys.argv[1]
collecting_while_imported = []

class Spy:  # asked first for every module imported
    def find_spec(self, name, path=None, target=None):
        if name == watched:
            collecting_while_imported.append(gc.isenabled())
        return None

sys.meta_path.insert(0, Spy())
sys.argv = ["aai-gateway", *sys.argv[2:]]
from aai_gateway.cli.entry import main
try:
    main()
except SystemExit:
    pass
finally:
    print(collecting_while_imported, gc.isenabled(), gc.get_freeze_count(), file=sys.stderr, flush=True)
"""


def _run(tmp_path: Path, watched: str, *arguments: str) -> str:
    environment = {
        **os.environ,
        "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"),
        "AAI_GATEWAY_CONFIG": str(tmp_path / "config.toml"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SPY, watched, *arguments],
        check=False,  # its stderr says what it saw, whatever the exit
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    return done.stderr


def test_a_commands_module_is_imported_with_the_collector_off_and_it_is_on_after(tmp_path: Path) -> None:
    said = _run(tmp_path, "aai_gateway.cli.main", "--version").splitlines()[-1]
    imported, collecting, frozen = said.rsplit(" ", 2)
    assert imported == "[False]"
    assert collecting == "True"
    assert int(frozen) > 10_000  # what the imports made is out of the collector's view


def test_serve_imports_the_server_with_the_collector_off(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    said = _run(tmp_path, "aai_gateway.server.app", "serve", "--no-default-paths", "--path", str(apps))
    imported, collecting, _frozen = said.splitlines()[-1].rsplit(" ", 2)  # serve ends with its input
    assert imported == "[False]"
    assert collecting == "True"


INTERRUPTED = """
import os, signal, sys

signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, whoever started pytest

watched = sys.argv[1]

class Interrupt:  # Ctrl-C while the module `watched` is being imported
    def find_spec(self, name, path=None, target=None):
        if name == watched:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["aai-gateway", "scan", "--no-default-paths"]
from aai_gateway.cli.entry import main
raise SystemExit(main())
"""


@pytest.mark.parametrize("importing", ["aai_gateway.cli.main", "aai_gateway.cli.scan"])
def test_ctrl_c_while_a_command_starts_exits_with_130_and_no_traceback(
    tmp_path: Path, importing: str
) -> None:
    environment = {
        **os.environ,
        "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"),
        "AAI_GATEWAY_CONFIG": str(tmp_path / "config.toml"),
    }
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED, importing],
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )

    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")
