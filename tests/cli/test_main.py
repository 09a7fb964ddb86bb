"""The command line parses a run with its own command's parser alone, and leaves help and
mistakes to the parser of every command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aai_gateway.cli.main import COMMAND_MODULES, main


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
