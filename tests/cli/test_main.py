"""The command line parses a run with its own command's parser alone, and leaves help and
mistakes to the parser of every command."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aai_gateway.cli.main import COMMAND_MODULES, main
from tests.builders import c_descriptor, write_json


@pytest.mark.parametrize("asked", [["--help"], ["-h"], ["--hel"], ["--he"], ["--path", "apps", "--hel"]])
def test_help_however_abbreviated_lists_every_command(
    asked: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(asked)
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert all(f"    {command} " in shown for command in COMMAND_MODULES)


def test_a_mistyped_command_is_named_with_every_command_to_choose_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["scna"])
    assert done.value.code == 2
    said = capsys.readouterr().err
    assert "invalid choice: 'scna'" in said and "'import'" in said and "'schema'" in said


def test_a_start_of_serve_imports_no_other_command() -> None:
    program = (
        "import sys; from aai_gateway.cli.main import parse; "
        "args = parse(['--no-default-paths', '--path', 'apps']); "
        "print(args.command, ' '.join(m for m in sys.modules if m.startswith('aai_gateway.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    command, *modules = done.stdout.split()
    others = {f"aai_gateway.cli.{module}" for name, module in COMMAND_MODULES.items() if name != "serve"}
    assert command == "None" and "aai_gateway.cli.serve" in modules
    assert not others & set(modules), sorted(others & set(modules))


DISCOVERY = ["--no-default-paths", "--path", "APPS"]


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["scan", *DISCOVERY], 0),
        (["guide", "dev.test.notes", *DISCOVERY], 0),
        (["search", "notes", *DISCOVERY], 0),
        (["exec", "dev.test.notes", "nothing", *DISCOVERY], 1),  # no such operation
        (["consent", "list"], 0),
        (["auth", "status", *DISCOVERY], 2),  # no usable keyring
    ],
)
def test_commands_that_talk_to_no_mcp_server_do_not_import_the_mcp_sdk(
    command: list[str], code: int, tmp_path: Path
) -> None:
    # Importing the `mcp` package costs ~0.8 s, most of such a command's run.
    apps = tmp_path / "apps"
    write_json(
        apps / "notes" / "aai.json",
        c_descriptor("dev.test.notes", type="http", baseUrl="https://notes.example.com"),
    )
    argv = [str(apps) if word == "APPS" else word for word in command]
    program = (
        "import sys; from aai_gateway.cli.main import main; "
        f"code = main({argv!r}); "
        "sdk = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')); "
        "print(code, sdk, file=sys.stderr)"
    )
    environment = {
        **os.environ,
        "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"),
        "AAI_GATEWAY_CONFIG": str(tmp_path / "config.toml"),
        "HOME": str(tmp_path),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert done.stderr.splitlines()[-1] == f"{code} []", done.stderr


def test_a_start_whose_cards_come_from_the_cache_imports_neither_the_loader_nor_the_search_engine(
    tmp_path: Path,
) -> None:
    descriptor = write_json(
        tmp_path / "apps" / "notes" / "aai.json",
        c_descriptor("dev.test.notes", type="http", baseUrl="https://notes.example.com"),
    )
    old = time.time() - 60  # a file modified just now is read again at each start: it may change
    os.utime(descriptor, (old, old))
    program = (
        "import sys; from aai_gateway.cli.main import parse; "
        "from aai_gateway.cli.runtime import build_gateway, build_watcher; import aai_gateway.server.app; "
        f"args = parse(['--no-default-paths', '--path', {str(tmp_path / 'apps')!r}]); "
        "gateway = build_gateway(args, build_watcher(args)); "
        "print(gateway.listing.listable, ' '.join(sys.modules))"
    )
    environment = {**os.environ, "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache")}

    def start() -> tuple[str, set[str]]:
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, check=True, env=environment
        )
        listed, *modules = done.stdout.split()
        return listed, set(modules)

    first_listed, first = start()  # reads the file, and keeps its card
    listed, modules = start()
    assert first_listed == listed == "1"
    assert "aai_gateway.descriptor.loader" in first
    unneeded = {"aai_gateway.descriptor.loader", "aai_gateway.search.index", "aai_gateway.search.corpus"}
    assert not unneeded & modules, sorted(unneeded & modules)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize(
    "command", [["schema"], ["guide", "com.github.api"], ["--version"], ["scan", "--help"]]
)
def test_output_that_cannot_be_written_is_said_in_one_line_without_a_traceback(
    command: list[str], tmp_path: Path
) -> None:
    environment = {**os.environ, "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "aai_gateway", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            timeout=120,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr == "error: aai-gateway could not write its output: No space left on device\n"


@pytest.mark.parametrize("command", ["schema", "--version"])
def test_a_closed_standard_output_is_said_in_one_line_without_a_traceback(
    tmp_path: Path, command: str
) -> None:
    environment = {**os.environ, "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-c", f'exec "$0" -m aai_gateway {command} >&-', sys.executable],
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (
        1,
        "error: aai-gateway could not write its output: it is closed\n",
    )


def test_a_usage_error_with_a_closed_standard_error_writes_nothing_on_standard_output(
    tmp_path: Path,
) -> None:
    # argparse prints the usage on stdout when stderr is None: a redirected stdout would hold it.
    environment = {**os.environ, "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-c", 'exec "$0" -m aai_gateway schema --no-such-option 2>&-', sys.executable],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")


@pytest.mark.parametrize(
    ("where", "said"), [("missing/gateway.log", "its folder does not exist"), (".", "it is a folder")]
)
def test_a_log_file_that_cannot_be_opened_is_a_usage_error_saying_why_without_a_traceback(
    tmp_path: Path, where: str, said: str
) -> None:
    environment = {**os.environ, "AAI_GATEWAY_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    log_file = tmp_path / where
    done = subprocess.run(
        [sys.executable, "-m", "aai_gateway", "scan", "--no-default-paths", "--log-file", str(log_file)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: --log-file {log_file}: {said}")
    assert "Traceback" not in done.stderr


def test_an_unknown_log_level_is_a_usage_error_naming_the_levels(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scan", "--no-default-paths", "--log-level", "LOUD"])

    assert exited.value.code == 2
    assert "'LOUD' is not a log level: use DEBUG, INFO, WARNING, ERROR" in capsys.readouterr().err
    assert main(["scan", "--no-default-paths", "--log-level", "info"]) == 0
