"""Plain-text tables: columns line up with CJK text; in a terminal, or with COLUMNS set, every
line fits its width (free text cut with `…`, ids whole, one block of `HEADER: value` lines per row
when the columns cannot fit); through a pipe with COLUMNS unset, the layout scripts always read."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from aai_gateway.cli.tables import PIPE_WIDTH, cut, display_width, render_table
from tests.cli.processes import keyring_free_env, run_cli
from tests.cli.test_search_command import fill

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_IDS = sorted(path.parent.name for path in EXAMPLES.glob("*/aai.json"))
SCAN = ["scan", "--no-default-paths", "--path", str(EXAMPLES)]
WHY = "\nWhy some tools cannot run here\n"  # below scan's table: every reason whole, in sentences


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard output a pipe and COLUMNS unset: what a script reading the CLI sees."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())


def widest(text: str) -> int:
    return max(display_width(line) for line in text.splitlines())


def user(tmp_path: Path, columns: int | None) -> dict[str, str]:
    """The environment of a user with no session bus, in a terminal `columns` wide (None: COLUMNS
    unset, as in a script)."""
    env = keyring_free_env()
    env["XDG_RUNTIME_DIR"] = str(tmp_path)
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "config.toml")
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def test_columns_line_up_whatever_the_width_of_their_characters() -> None:
    table = render_table(
        ["ID", "NAME", "NOTE"], [["a", "待办事项", "x"], ["bb", "todo", "y"]], total_width=80
    )

    _header, _rule, first, second = table.splitlines()
    assert display_width(first[: first.index("x")]) == display_width(second[: second.index("y")]) == 14


def test_marks_drawn_on_the_letter_before_them_take_no_column_so_thai_and_hindi_names_line_up() -> None:
    thai, hindi = "จัดการงานที่ต้องทำ", "हिंदी"  # 4 Thai marks and Devanagari's anusvara: class 0

    table = render_table(["NAME", "NOTE"], [[thai, "x"], [hindi, "y"], ["todo", "z"]], total_width=80)

    assert (display_width(thai), display_width(hindi)) == (14, 4)
    _header, _rule, *rows = table.splitlines()
    assert [display_width(row[:-1]) for row in rows] == [16, 16, 16]


def test_through_a_pipe_a_table_is_laid_out_as_it_always_was(piped: None) -> None:
    rows = [["a", "x" * 200, "the last column, whole however long " * 3]]

    table = render_table(["ID", "NOTE", "DESCRIPTION"], rows)

    note = "x" * 93 + "…"  # before the last: cut to leave it 20 of 120 columns
    assert table.splitlines() == [
        "ID  " + "NOTE".ljust(96) + "DESCRIPTION",
        "--  " + "-" * 94 + "  " + "-" * 20,  # the last rule ends at column 120
        f"a   {note}  {rows[0][2].strip()}",
    ]


def test_through_a_pipe_the_last_column_stays_whole_and_its_rule_ends_at_column_120(piped: None) -> None:
    long = "word " * 100

    _header, rule, row = render_table(["ID", "DESCRIPTION"], [["a", long.strip()]]).splitlines()

    assert len(rule) == PIPE_WIDTH
    assert row.endswith(long.strip())


def test_through_a_pipe_the_rule_is_never_shorter_than_the_last_header(piped: None) -> None:
    table = render_table(["IDENTIFIER", "DESCRIPTION"], [["a" * 130, "text"]])

    assert table.splitlines()[1].endswith("  " + "-" * len("DESCRIPTION"))


def test_in_a_terminal_the_widest_free_text_is_cut_so_every_line_fits_and_ids_stay_whole() -> None:
    rows = [
        ["dev.example.a-rather-long-id", "Notes", "Keeps notes, and finds them again by their words"],
        ["b", "名前のとても長いアプリケーション", "Short"],
    ]

    table = render_table(["ID", "NAME", "DESCRIPTION"], rows, total_width=60, keep={0})

    assert widest(table) <= 60
    _header, _rule, first, second = table.splitlines()
    assert first.startswith("dev.example.a-rather-long-id  Notes")
    assert first.endswith("…") and second.split()[1].endswith("…")
    assert display_width(first[: first.index("Keeps")]) == display_width(second[: second.index("Short")])


def test_a_table_that_marks_no_column_cuts_only_its_last() -> None:
    rows = [["claude-code", "com.example.planwise", "list_events", "file:/home/ada/apps/planwise/aai.json"]]

    table = render_table(["CALLER", "APP", "TOOL", "SOURCE"], rows, total_width=70)

    assert widest(table) <= 70
    assert table.splitlines()[2] == "claude-code  com.example.planwise  list_events  file:…lanwise/aai.json"


def test_a_cut_path_keeps_its_file_name_and_other_text_its_start() -> None:
    assert cut("/home/ada/.config/Claude/claude_desktop_config.json", 30) == "…de/claude_desktop_config.json"
    assert cut("file:/home/ada/apps/planwise/aai.json", 20) == "file:…nwise/aai.json"
    assert cut(r"C:\Users\ada\AppData\Roaming\Claude\config.json", 16) == "…ude\\config.json"
    assert cut("no: ACP agent command not found", 12) == "no: ACP age…"
    assert cut("short", 12) == "short"


def test_a_cut_never_splits_a_wide_character_or_leaves_a_mark_without_its_letter() -> None:
    accented = "/notes/" + "e\u0301" * 20  # é as e and a combining acute accent: one column each

    kept_end = cut(accented, 10)
    kept_start = cut("待办事项待办事项", 7)

    assert kept_end == "…" + "e\u0301" * 9 and display_width(kept_end) == 10
    assert kept_start == "待办事…" and display_width(kept_start) == 7  # 3 wide letters, then 1 column


def test_when_even_the_ids_do_not_fit_each_row_becomes_a_block_of_header_value_lines() -> None:
    rows = [["dev.example.notes", "Keeps notes, and finds them again"], ["dev.example.x", "Short"]]

    table = render_table(["ID", "NOTE"], rows, total_width=28, keep={0})  # 17 + 2 + 10 at least

    assert table.split("\n\n") == [
        "ID:   dev.example.notes\nNOTE: Keeps notes, and find…",
        "ID:   dev.example.x\nNOTE: Short",
    ]


def test_an_id_wider_than_the_room_beside_its_header_goes_whole_on_the_next_line() -> None:
    table = render_table(
        ["ID", "DESCRIPTION"], [["dev.example.a-rather-long-id", "Notes"]], total_width=30, keep={0}
    )

    assert table.splitlines() == ["ID:", "dev.example.a-rather-long-id", "DESCRIPTION: Notes"]


def test_in_a_terminal_narrower_than_a_header_the_headers_are_cut_and_an_empty_value_adds_no_line() -> None:
    rows = [["me", ""], ["you", "2026-12-01"]]

    table = render_table(["CALLER", "DECIDED (UTC)"], rows, total_width=10, keep={0})

    assert widest(table) <= 10
    assert table.split("\n\n") == ["CALLER:\nme\nDECIDED (…", "CALLER:\nyou\nDECIDED (…\n2026-12-01"]


# --------------------------------------------------------------------------- the commands


def test_scan_in_a_40_column_terminal_shows_each_app_as_lines_that_fit_with_its_id_whole(
    tmp_path: Path,
) -> None:
    done = run_cli(user(tmp_path, 40), *SCAN, cwd=tmp_path)

    assert done.code == 0, done.err
    table, _, why = done.out.partition(WHY)
    assert widest(table) <= 40
    assert [line.split()[1] for line in table.splitlines() if line.startswith("ID:")] == EXAMPLE_IDS
    assert "SOURCE:    …" in table and "/aai.json\n" in table  # a path keeps its file's name
    assert "com.example.ledgerdesk (all 4 tools): needs Windows (COM)" in why


def test_scan_in_a_200_column_terminal_is_one_table_whose_lines_fit(tmp_path: Path) -> None:
    done = run_cli(user(tmp_path, 200), *SCAN, cwd=tmp_path)

    assert done.code == 0, done.err
    table = done.out.partition(WHY)[0]
    lines = table.splitlines()
    assert widest(table) <= 200
    assert lines[2].split()[:3] == ["ID", "NAME", "PLATFORM"]
    assert [line.split()[0] for line in lines[4:]] == EXAMPLE_IDS
    assert "D-Bus Message Bus" in table


def test_scan_in_a_real_terminal_fits_it_without_columns_being_set(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "aai_gateway", *SCAN],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=user(tmp_path, None),
        cwd=tmp_path,
    )
    os.close(follower)
    shown = b""
    try:
        while chunk := _read(leader):
            shown += chunk
    finally:
        process.wait(timeout=120)
        os.close(leader)

    table = shown.decode("utf-8").replace("\r\n", "\n").partition(WHY)[0]
    assert widest(table) <= 40
    assert [line.split()[1] for line in table.splitlines() if line.startswith("ID:")] == EXAMPLE_IDS


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # Linux: EIO once the child has gone and the terminal is closed
        return b""


def test_scan_through_a_pipe_without_columns_keeps_its_table_and_every_source_path_whole(
    tmp_path: Path,
) -> None:
    done = run_cli(user(tmp_path, None), *SCAN, cwd=tmp_path)

    assert done.code == 0, done.err
    rows = done.out.partition(WHY)[0].splitlines()[4:]
    assert [row.split()[0] for row in rows] == EXAMPLE_IDS
    assert [row.split()[-1] for row in rows] == [str(EXAMPLES / i / "aai.json") for i in EXAMPLE_IDS]


@pytest.mark.parametrize("columns", [40, 200])
def test_search_fits_the_terminal_and_keeps_app_ids_and_operation_names_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, columns: int
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COLUMNS", str(columns))
    apps = fill(tmp_path / "apps")

    assert main(["search", "send an email", "--no-default-paths", "--path", str(apps)]) == 0

    out = capsys.readouterr().out
    table = out.split("\n\n", 1)[1].partition("\n\nAn operation's parameters")[0]
    assert widest(table) <= columns
    if columns == 40:
        assert table.startswith("#:           1\nAPP:         dev.test.mail\nOPERATION:   send_email\n")
    else:
        assert re.split(r"\s{2,}", table.splitlines()[2])[:3] == ["1", "dev.test.mail", "send_email"]
        assert "Send an email to one or more people." in table


@pytest.mark.parametrize("columns", [40, 200])
def test_consent_list_fits_the_terminal_and_keeps_callers_apps_and_tools_whole(
    tmp_path: Path, columns: int
) -> None:
    source = f"file:{EXAMPLES / 'com.example.planwise' / 'aai.json'}"
    env = user(tmp_path, columns)
    grant = ["--caller=claude-code", "--app=com.example.planwise", "--tool=list_events", f"--source={source}"]
    granted = run_cli(env, "consent", "grant", *grant)
    assert granted.code == 0, granted.err

    done = run_cli(env, "consent", "list")

    assert done.code == 0, done.err
    table = done.out.partition("\n\nDecisions are kept in")[0]
    assert widest(table) <= columns
    if columns == 40:
        assert table.splitlines()[:4] == [
            "CALLER:        claude-code",
            "APP:           com.example.planwise",
            "TOOL:          list_events",
            "DECISION:      allow",
        ]
        assert table.splitlines()[5].startswith("SOURCE:        file:…") and table.endswith("/aai.json")
    else:
        assert table.splitlines()[2].split()[:4] == [
            "claude-code",
            "com.example.planwise",
            "list_events",
            "allow",
        ]
        assert table.endswith(source)
