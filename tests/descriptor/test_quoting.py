"""How much of a list of names a message repeats (`quoting.listed`), and commands printed for
pasting into a shell (`quoting.shell_command`)."""

from __future__ import annotations

import os
import subprocess

import pytest

from aai_gateway.cli.terminal import visible
from aai_gateway.descriptor.quoting import LISTED_ITEMS, listed, shell_command


def test_a_few_names_are_listed_whole_and_many_are_cut_with_how_many_in_all() -> None:
    assert listed(["a", "b"]) == "a, b"
    names = [f"n{i}" for i in range(LISTED_ITEMS + 3)]
    assert listed(names) == ", ".join(names[:LISTED_ITEMS]) + f", … ({LISTED_ITEMS + 3} in all)"


def test_how_many_are_listed_and_how_long_a_name_stays_whole_can_be_chosen() -> None:
    ids = ["com.example.a-rather-long-app-id", "dev.b", "dev.c"]
    assert listed(ids, most=2, whole_up_to=64) == "com.example.a-rather-long-app-id, dev.b, … (3 in all)"
    assert listed(ids, most=2).startswith("com.example.a-ra… (32 characters)")


@pytest.mark.parametrize(
    "argument",
    [
        "plain",
        "a b $HOME `x` 'q' \\n",
        "-starts-with-a-dash",
        "中文 😀",
        "\x1b]0;owned\x07\x1b[2J\x9b2J",  # retitles the window, clears it (ESC [ and its C1 form)
        "\u202eevil\u2066\nline\ttab\x7f",
        "bytes-\udcff-not-utf8",  # a file name's byte that is not UTF-8, as os.fsdecode gives it
    ],
)
def test_a_printed_command_pasted_into_bash_gives_back_its_arguments_byte_for_byte(argument: str) -> None:
    line = shell_command(["printf", "%s\\0", argument, "next"])
    ran = subprocess.run(["bash", "-c", line], capture_output=True, check=True, env={"LC_ALL": "C"})

    assert "\n" not in line and visible(line) == line  # one line, and nothing the output rewrites
    assert ran.stdout.split(b"\0")[:-1] == [os.fsencode(argument), b"next"]
