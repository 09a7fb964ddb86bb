"""iOS URL-scheme tools: URLs proved by parsing them back, and the executor against a stand-in
`xcrun` on a temporary PATH (no simulator or device is involved)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.ios import NEEDS_MACOS, IosExecutor, UrlError, build_url

from .mobile_support import ADVERSARIAL, EVENT, call, calls, planwise, stand_in

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
CREATE = planwise("ios")


def template(tool: str) -> str:
    found = CREATE.tool(tool)
    assert found is not None and found.call is not None
    url_template: str = found.call.url_template  # type: ignore[union-attr]
    return url_template


def test_create_event_url_of_the_seed_example() -> None:
    arguments = {**EVENT, "title": "Lunch & Learn", "notes": "bring #3 = 50%/person?"}
    assert build_url(template("create_event"), arguments, "planwise") == (
        "planwise://x-callback-url/events/new?title=Lunch%20%26%20Learn"
        "&start=2025-06-03T14%3A00%3A00%2B02%3A00&end=2025-06-03T15%3A00%3A00%2B02%3A00"
        "&calendar=Personal&location=&notes=bring%20%233%20%3D%2050%25%2Fperson%3F"
    )


def test_list_events_url_of_the_seed_example_keeps_its_literal_query() -> None:
    arguments = {"from": "2025-06-03", "to": "2025-06-04", "calendar": "日程"}
    assert build_url(template("list_events"), arguments, "planwise") == (
        "planwise://x-callback-url/events/export?from=2025-06-03&to=2025-06-04"
        "&calendar=%E6%97%A5%E7%A8%8B&format=json"
    )


def test_a_template_that_does_not_open_the_channel_scheme_is_refused() -> None:
    with pytest.raises(UrlError):
        build_url("https://evil.example/?q=${q}", {"q": "x"}, "planwise")
    with pytest.raises(UrlError):  # a value cannot supply the scheme either
        build_url("${q}", {"q": "planwise://x"}, "planwise")


def test_every_adversarial_value_stays_inside_its_own_query_value() -> None:
    keys = [f"k{i}" for i in range(len(ADVERSARIAL))]
    url_template = "planwise://x/y?" + "&".join(f"{k}=${{{k}}}" for k in keys) + "&end=1"
    url = build_url(url_template, dict(zip(keys, ADVERSARIAL, strict=True)), "planwise")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == ("planwise", "x", "/y", "")
    parsed = parse_qs(parts.query, keep_blank_values=True)
    assert parsed == {**{k: [v] for k, v in zip(keys, ADVERSARIAL, strict=True)}, "end": ["1"]}


@settings(max_examples=200)
@given(TEXT, TEXT, TEXT)
def test_substituted_values_parse_back_exactly_and_never_change_the_url_structure(
    segment: str, first: str, second: str
) -> None:
    url = build_url(
        "planwise://host/items/${s}?a=${a}&b=${b}#top", {"s": segment, "a": first, "b": second}, "planwise"
    )
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.fragment) == ("planwise", "host", "top")
    assert parts.path.count("/") == 2 and unquote(parts.path.split("/")[2]) == segment
    assert parse_qs(parts.query, keep_blank_values=True) == {"a": [first], "b": [second]}


def test_non_string_values_are_sent_as_json_text_and_missing_ones_as_empty() -> None:
    url = build_url("planwise://x?n=${n}&l=${l}&m=${m}", {"n": 3, "l": [1, "a"]}, "planwise")
    assert parse_qs(urlsplit(url).query, keep_blank_values=True) == {"n": ["3"], "l": ['[1,"a"]'], "m": [""]}


# --------------------------------------------------------------------------- executor

XCRUN = r"""
state = os.path.join(here, "pasted")
if args[:2] == ["simctl", "list"]:
    if os.path.exists(os.path.join(here, "nosimctl")):
        sys.stderr.write('xcrun: error: unable to find utility "simctl", not a developer tool or in PATH\n')
        sys.exit(72)
    booted = [{"name": "iPhone 15", "state": "Booted"}]
    if os.path.exists(os.path.join(here, "noboot")):
        booted = []
    print(json.dumps({"devices": {"com.apple.CoreSimulator.SimRuntime.iOS-17-0": booted}}))
elif args[:2] == ["simctl", "openurl"] and os.path.exists(os.path.join(here, "notinstalled")):
    sys.stderr.write("An error was encountered processing the command (code=-10814)\n")
    sys.exit(1)
elif args[:2] == ["simctl", "openurl"]:
    if os.path.isdir(os.path.join(here, "group")) and not os.path.exists(os.path.join(here, "silent")):
        with open(os.path.join(here, "group", "aai-result.json"), "w") as out:
            out.write('{"event_id": "e-9"}')
    open(state, "w").close()
elif args[:2] == ["simctl", "pbpaste"]:
    sys.stdout.write('{"events": []}' if os.path.exists(state) else "old clipboard")
elif args[:2] == ["simctl", "get_app_container"]:
    print("group.other\t/nowhere")
    print("group.com.example.planwise\t" + os.path.join(here, "group"))
"""


# `open` and `pbpaste` of the Mac: the "app" answers in the Mac's clipboard or group container.
OPEN = r"""
group = os.path.join(os.environ["HOME"], "Library", "Group Containers", "group.com.example.planwise")
if os.path.isdir(group):
    with open(os.path.join(group, "aai-result.json"), "w") as out:
        out.write('{"event_id": "mac-1"}')
open(os.path.join(here, "pasted"), "w").close()
"""
PBPASTE = r"""
sys.stdout.write('{"on": "mac"}' if os.path.exists(os.path.join(here, "pasted")) else "old clipboard")
"""


def ios_executor(
    tmp_path: Path, *, platform: str = "darwin", mac: bool = False, xcrun: bool = True
) -> tuple[IosExecutor, Path]:
    bin_dir = tmp_path / "bin"
    if xcrun:
        stand_in(bin_dir, "xcrun", XCRUN)
    if mac:
        stand_in(bin_dir, "open", OPEN)
        stand_in(bin_dir, "pbpaste", PBPASTE)
    bin_dir.mkdir(parents=True, exist_ok=True)
    environ = {"PATH": str(bin_dir), "HOME": str(tmp_path / "home")}
    return IosExecutor(environ=environ, platform=platform), bin_dir


def _call(tool: str, arguments: dict[str, Any]) -> Any:
    return call(CREATE, tool, arguments)


@pytest.mark.anyio
async def test_clipboard_tool_opens_the_url_in_the_simulator_and_reads_the_new_clipboard(
    tmp_path: Path,
) -> None:
    executor, bin_dir = ios_executor(tmp_path)
    result = await executor.execute(_call("list_events", {"from": "a", "to": "b", "calendar": "x&y"}))
    assert result == {"events": []}
    opened = [c for c in calls(bin_dir) if c[1] == "openurl"]
    assert opened == [
        [
            "simctl",
            "openurl",
            "booted",
            "planwise://x-callback-url/events/export?from=a&to=b&calendar=x%26y&format=json",
        ]
    ]


@pytest.mark.anyio
async def test_app_group_tool_reads_the_result_file_the_app_wrote_in_its_group_container(
    tmp_path: Path,
) -> None:
    executor, bin_dir = ios_executor(tmp_path)
    (bin_dir / "group").mkdir()
    assert await executor.execute(_call("create_event", EVENT)) == {"event_id": "e-9"}
    assert ["simctl", "get_app_container", "booted", "com.example.planwise", "groups"] in calls(bin_dir)


@pytest.mark.anyio
async def test_without_a_group_container_the_call_answers_the_opened_url(tmp_path: Path) -> None:
    executor, _ = ios_executor(tmp_path)
    result = await executor.execute(_call("create_event", EVENT))
    assert set(result) == {"opened"} and result["opened"].startswith("planwise://x-callback-url/events/new?")


@pytest.mark.anyio
async def test_an_app_that_never_answers_times_out(tmp_path: Path) -> None:
    executor, bin_dir = ios_executor(tmp_path)
    (bin_dir / "group").mkdir()
    (bin_dir / "silent").touch()  # the stand-in opens the URL but the app writes nothing
    started = time.monotonic()
    with pytest.raises(AaiError) as caught:
        await executor.execute(call(CREATE, "create_event", EVENT, timeout_ms=500))
    assert caught.value.code is ErrorCode.TIMEOUT
    assert time.monotonic() - started < 5


def test_outside_macos_url_scheme_tools_cannot_run(tmp_path: Path) -> None:
    executor, _ = ios_executor(tmp_path, platform="linux")
    tool = CREATE.tool("create_event")
    assert tool is not None
    assert executor.unavailable_reason(tool) == NEEDS_MACOS
    assert (
        IosExecutor(environ={"PATH": str(tmp_path / "empty")}, platform="darwin").unavailable_reason(tool)
        == NEEDS_MACOS
    )
    assert ios_executor(tmp_path)[0].unavailable_reason(tool) is None


@pytest.mark.anyio
async def test_without_a_booted_simulator_the_url_opens_on_the_mac_and_the_macs_clipboard_is_read(
    tmp_path: Path,
) -> None:
    executor, bin_dir = ios_executor(tmp_path, mac=True)
    (bin_dir / "noboot").touch()
    result = await executor.execute(_call("list_events", {"from": "a", "to": "b", "calendar": "x"}))
    assert result == {"on": "mac"}
    url = "planwise://x-callback-url/events/export?from=a&to=b&calendar=x&format=json"
    assert [url] in calls(bin_dir)  # `open URL`
    assert not [c for c in calls(bin_dir) if c[:2] == ["simctl", "openurl"]]


@pytest.mark.anyio
async def test_without_simctl_an_app_group_result_is_read_from_the_macs_group_container(
    tmp_path: Path,
) -> None:
    executor, bin_dir = ios_executor(tmp_path, mac=True)
    (bin_dir / "nosimctl").touch()  # xcrun without Xcode: "unable to find utility simctl"
    (tmp_path / "home" / "Library" / "Group Containers" / "group.com.example.planwise").mkdir(parents=True)
    assert await executor.execute(_call("create_event", EVENT)) == {"event_id": "mac-1"}


@pytest.mark.anyio
async def test_with_no_simulator_and_no_open_the_call_is_unavailable_saying_why(tmp_path: Path) -> None:
    executor, bin_dir = ios_executor(tmp_path)
    (bin_dir / "noboot").touch()
    assert executor.unavailable_reason(CREATE.tools[0]) is None  # xcrun alone counts as available…
    with pytest.raises(AaiError) as caught:  # …but this call has nowhere to open its URL
        await executor.execute(_call("create_event", EVENT))
    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "no iOS Simulator is booted, and `open` was not found" in caught.value.message


@pytest.mark.anyio
async def test_an_app_the_simulator_cannot_open_is_unavailable_with_the_simulators_message(
    tmp_path: Path,
) -> None:
    executor, bin_dir = ios_executor(tmp_path)
    (bin_dir / "notinstalled").touch()
    with pytest.raises(AaiError) as caught:
        await executor.execute(_call("create_event", EVENT))
    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "the booted iOS Simulator could not open the planwise: URL" in caught.value.message
    assert "code=-10814" in caught.value.message and "com.example.planwise installed" in caught.value.message
