"""Plain-text tables: columns line up with CJK text, and a table fits the terminal's width."""

from __future__ import annotations

from aai_gateway.cli.tables import display_width, render_table


def test_columns_line_up_whatever_the_width_of_their_characters() -> None:
    table = render_table(
        ["ID", "NAME", "NOTE"], [["a", "待办事项", "x"], ["bb", "todo", "y"]], total_width=80
    )

    _header, _rule, first, second = table.splitlines()
    assert display_width(first[: first.index("x")]) == display_width(second[: second.index("y")]) == 14


def test_the_rule_under_a_long_last_column_ends_at_the_terminals_edge_and_its_cells_stay_whole() -> None:
    long = "word " * 100
    table = render_table(["ID", "DESCRIPTION"], [["a", long.strip()]], total_width=60)

    _header, rule, row = table.splitlines()
    assert len(rule) == 60
    assert row.endswith(long.strip())  # the last column is never cut: the terminal wraps it


def test_the_rule_is_never_shorter_than_the_last_header() -> None:
    table = render_table(["IDENTIFIER", "DESCRIPTION"], [["a" * 70, "text"]], total_width=60)

    assert table.splitlines()[1].endswith("-" * len("DESCRIPTION"))


def test_marks_drawn_on_the_letter_before_them_take_no_column_so_thai_and_hindi_names_line_up() -> None:
    thai, hindi = "จัดการงานที่ต้องทำ", "हिंदी"  # 4 Thai marks and Devanagari's anusvara: class 0

    table = render_table(["NAME", "NOTE"], [[thai, "x"], [hindi, "y"], ["todo", "z"]], total_width=80)

    assert (display_width(thai), display_width(hindi)) == (14, 4)
    _header, _rule, *rows = table.splitlines()
    assert [display_width(row[:-1]) for row in rows] == [16, 16, 16]
