"""`aai-gateway search`: what `aai_search` finds, as a table a person reads, as JSON, or as the
agent reads it; every command it prints works as printed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from aai_gateway.cli import search as search_command
from aai_gateway.cli.main import main
from tests.builders import c_descriptor, mcp_descriptor, write_json
from tests.cli.processes import run_cli
from tests.server.conftest import adapter_app, big_app, connected

PROTOCOL_MODES = ("legacy", "auto")  # the 2025-11-25 handshake, the 2026-07-28 per-request one


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fill(folder: Path) -> Path:
    """An adapter app, a 30-operation web app, a mail app, and an MCP server whose tools were
    never read (its program is this Python: it could run, and no test starts it)."""
    write_json(folder / "adapter.json", adapter_app())
    write_json(folder / "big.json", big_app(30))
    mail = c_descriptor("dev.test.mail", name="Mailbox", type="http", baseUrl="http://127.0.0.1:9")
    mail["tools"] = [
        {"name": "send_email", "description": "Send an email to one or more people.", "parameters": {}},
        {"name": "list_folders", "description": "List the mail folders.", "parameters": {}},
    ]
    write_json(folder / "mail.json", mail)
    write_json(
        folder / "waiting" / "aai.json",
        mcp_descriptor("dev.test.waiting", name="Waiting", command=sys.executable),
    )
    (folder.parent / "config.toml").write_text("", encoding="utf-8")
    return folder


@pytest.fixture
def apps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COLUMNS", "300")
    for variable in (
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "AAI_GATEWAY_CACHE_DIR",
        "LANG",
        "LC_ALL",
    ):
        monkeypatch.delenv(variable, raising=False)
    return fill(tmp_path / "apps")


def search(capsys: pytest.CaptureFixture[str], apps: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["search", *argv, "--no-default-paths", "--path", str(apps)])
    out, err = capsys.readouterr()
    return code, out, err


def table_rows(out: str) -> list[list[str]]:
    """The rows of the table under the heading, split on the gaps between columns."""
    body = out.split("\n\n")[1]
    return [re.split(r"\s{2,}", line.strip()) for line in body.splitlines()[2:]]


def test_search_prints_the_best_matches_as_a_table_and_a_guide_command_that_works_as_printed(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = search(capsys, apps, "send an email")

    assert code == 0
    assert out.startswith('Apps and operations matching "send an email", best first:\n')
    first = table_rows(out)[0]
    assert first[:3] == ["1", "dev.test.mail", "send_email"]
    assert first[4] == "Send an email to one or more people."
    printed = re.search(r"An operation's parameters and example call: (.+)", out)
    assert printed is not None
    argv = shlex.split(printed.group(1))
    assert argv[:4] == ["aai-gateway", "guide", "dev.test.mail", "--operations=send_email"]
    assert main(argv[1:]) == 0
    assert "send_email" in capsys.readouterr().out


def test_pages_followed_by_the_printed_offset_are_one_search_read_a_page_at_a_time(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    _, whole, _ = search(capsys, apps, "operation does one thing", "--limit", "50")
    everything = [row[:3] for row in table_rows(whole)]
    paged: list[list[str]] = []
    offset = 0
    while True:
        _, out, _ = search(capsys, apps, "operation does one thing", "--limit", "7", "--offset", str(offset))
        paged += [row[:3] for row in table_rows(out)]
        more = re.search(r"More follow: run the same search with --offset (\d+)\.", out)
        if more is None:
            break
        offset = int(more.group(1))
        assert offset == len(paged)

    assert len(everything) == 31  # the big app's 30 operations and the app itself
    assert paged == everything


def test_a_blank_query_with_app_lists_its_operations_in_order_without_scores(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = search(capsys, apps, "", "--app", "Big", "--limit", "3", "--offset", "3")

    assert code == 0
    assert out.startswith(
        "Operations of dev.test.big that run here, in the descriptor's order (results 4-6):"
    )
    assert [r[:2] for r in table_rows(out)] == [["4", "op_003"], ["5", "op_004"], ["6", "op_005"]]
    assert "SCORE" not in out
    assert "More follow: run the same search with --offset 6." in out


def test_no_operation_of_an_app_matching_prints_the_command_that_lists_them_all(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = search(capsys, apps, "qqzzxv", "--app", "dev.test.mail")

    assert code == 0
    printed = out.split("All of them: ", 1)[1].strip()
    assert out.startswith('No operation of dev.test.mail matches "qqzzxv".')
    assert main(shlex.split(printed)[1:]) == 0
    listed = capsys.readouterr().out
    assert "send_email" in listed and "list_folders" in listed


def test_json_gives_the_results_the_next_offset_and_the_apps_not_searched(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = search(capsys, apps, "operation", "--limit", "2", "--json")

    report = json.loads(out)
    assert code == 0
    assert set(report) == {"results", "next_offset", "not_searched", "skipped_files"}
    assert len(report["results"]) == 2
    assert all(set(r) == {"app", "tool", "score", "description"} for r in report["results"])
    assert report["next_offset"] == 2
    assert report["not_searched"] == ["dev.test.waiting"]


def test_the_table_names_the_mcp_servers_not_searched_with_a_refresh_command_for_these_folders(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    _, out, _ = search(capsys, apps, "send an email")

    note = re.search(
        r"The tools of 1 MCP server were never read \(dev\.test\.waiting\).*Read them now: (.+)", out
    )
    assert note is not None
    assert shlex.split(note.group(1)) == [
        "aai-gateway",
        "cache",
        "refresh",
        "dev.test.waiting",
        f"--path={apps}",
        "--no-default-paths",
    ]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["   "], "QUERY is blank: say what you want to do or name an app"),
        (["<what you want to do>"], "QUERY is the placeholder <what you want to do>"),
        (["mail", "--app", "dev.test.mial"], "no app 'dev.test.mial' (did you mean 'dev.test.mail'"),
    ],
)
def test_a_query_aai_search_would_refuse_is_a_usage_error_saying_what_to_change(
    capsys: pytest.CaptureFixture[str], apps: Path, argv: list[str], said: str
) -> None:
    code, out, err = search(capsys, apps, *argv)

    assert (code, out) == (2, "")
    assert err.startswith(f"error: {said}")


@pytest.mark.parametrize(
    "option", [["--limit", "0"], ["--limit", "51"], ["--offset", "-1"], ["--offset", "x"]]
)
def test_a_limit_or_offset_out_of_range_is_refused_before_anything_is_read(
    capsys: pytest.CaptureFixture[str], apps: Path, option: list[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        search(capsys, apps, "mail", *option)

    assert stopped.value.code == 2
    assert f"argument {option[0]}: {option[0]}" in capsys.readouterr().err


@pytest.mark.anyio
async def test_text_is_exactly_what_aai_search_answers_an_agent_of_either_protocol_generation(
    apps: Path,
) -> None:
    env = {
        "HOME": str(apps.parent),
        "PATH": "/usr/bin:/bin",
        "AAI_GATEWAY_CONFIG": str(apps.parent / "config.toml"),
    }
    queries: list[dict[str, str | int]] = [
        {"query": "send an email", "limit": 3},
        {"query": "op_007 op_002", "app": "dev.test.big"},
    ]
    printed = []
    for arguments in queries:
        argv = ["search", str(arguments["query"]), "--text", "--no-default-paths", "--path", str(apps)]
        argv += ["--limit", str(arguments["limit"])] if "limit" in arguments else []
        argv += ["--app", str(arguments["app"])] if "app" in arguments else []
        printed.append(run_cli(env, *argv))
    for mode in PROTOCOL_MODES:
        async with connected(apps, mode) as client:
            answered = [await client.call_tool("aai_search", arguments) for arguments in queries]

        for cli, answer in zip(printed, answered, strict=True):
            assert cli.code == 0, cli.err
            block = answer.content[0]
            assert block.type == "text"
            assert cli.out == block.text, mode


def test_a_search_over_many_apps_says_on_stderr_that_it_indexes_them_first(
    capsys: pytest.CaptureFixture[str], apps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_command, "INDEX_NOTICE_FROM", 4)

    code, out, err = search(capsys, apps, "send an email")
    _, _, within = search(capsys, apps, "send", "--app", "dev.test.mail")

    assert code == 0 and out.startswith("Apps and operations matching")
    assert err == "Indexing 4 apps for search…\n"
    assert within == err  # a search within an app of the index reads the index too


@pytest.mark.parametrize("folder", ["-apps", "a b $HOME `x` 'q'", "esc\x1b]0;title\x07 \u202eevil\nline"])
def test_printed_commands_work_pasted_into_bash_whatever_the_folder_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, apps: Path, folder: str
) -> None:
    odd = apps.rename(tmp_path / folder)
    code = main(["search", "send an email", "--no-default-paths", f"--path={odd}"])
    out = capsys.readouterr().out
    printed = [line.rsplit(": aai-gateway ", 1)[1] for line in out.splitlines() if ": aai-gateway " in line]
    printed = [f"aai-gateway {command}" for command in printed]

    assert code == 0
    assert len(printed) == 2  # the guide command and the refresh command
    for command in printed:
        assert "\n" not in command
        words = subprocess.run(["bash", "-c", f"printf '%s\\0' {command}"], capture_output=True, check=True)
        argv = words.stdout.decode().split("\0")[:-1]
        assert argv[0] == "aai-gateway" and f"--path={odd}" in argv
        assert argv[-1] == "--no-default-paths"


def test_an_app_none_of_whose_operations_runs_here_is_said_with_why_whatever_the_query(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    write_json(
        apps / "norun.json",
        c_descriptor("dev.test.norun", name="Norun", type="stdio", command="/nonexistent/adapter"),
    )

    _, blank, _ = search(capsys, apps, "", "--app", "dev.test.norun")
    _, asked, _ = search(capsys, apps, "ping", "--app", "dev.test.norun", "--offset", "5")

    for out in (blank, asked):
        assert out.startswith("The operation of Norun (dev.test.norun) cannot run on this machine: ")
        assert "/nonexistent/adapter" in out


def test_files_the_search_could_not_use_are_counted_with_the_scan_command_that_says_why(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    (apps / "broken.json").write_text("{not json", encoding="utf-8")

    _, out, _ = search(capsys, apps, "send an email")
    _, listed, _ = search(capsys, apps, "send an email", "--json")

    assert (
        f"1 descriptor file could not be used; why: aai-gateway scan '--path={apps}' --no-default-paths"
        in out
        or (
            f"1 descriptor file could not be used; why: aai-gateway scan --path={apps} --no-default-paths"
            in out
        )
    )
    assert json.loads(listed)["skipped_files"] == 1


def test_a_page_of_one_result_says_which_result_it_is(capsys: pytest.CaptureFixture[str], apps: Path) -> None:
    _, out, _ = search(capsys, apps, "", "--app", "dev.test.mail", "--limit", "1", "--offset", "1")

    assert out.startswith("Operations of dev.test.mail that run here, in the descriptor's order (result 2):")


def test_a_query_typed_without_quotes_is_searched_as_the_words_it_is_made_of(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    quoted = search(capsys, apps, "send an email")

    unquoted = search(capsys, apps, "send", "an", "email")

    assert unquoted == quoted and quoted[0] == 0
