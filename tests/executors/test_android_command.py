"""The adb argv of intent tools, proved by a real POSIX shell, and the parsers of adb output."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor.model import IntentCall, IntentChannel
from aai_gateway.executors import android_command as cmd

from .mobile_support import ADVERSARIAL, EVENT, planwise

TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)


def shell_words(remote_line: str) -> list[str]:
    """What the device's `sh` makes of the line `adb shell` sends: its words, one by one."""
    done = subprocess.run(
        ["sh", "-c", "printf '%s\\0' " + remote_line], capture_output=True, check=True, timeout=10
    )
    return done.stdout.decode("utf-8").split("\0")[:-1]


def _tool(name: str) -> tuple[IntentChannel, IntentCall]:
    tool = planwise("android").tool(name)
    assert tool is not None
    assert isinstance(tool.channel, IntentChannel) and isinstance(tool.call, IntentCall)
    return tool.channel, tool.call


def test_create_event_of_the_seed_example_is_an_ordered_broadcast_with_string_extras() -> None:
    channel, call = _tool("create_event")
    command = cmd.intent_command(channel, call, EVENT, serial="emulator-5554")
    assert command.argv == (
        "adb", "-s", "emulator-5554", "shell",
        "am", "broadcast", "-a", "com.example.planwise.action.CREATE_EVENT", "-p", "com.example.planwise",
        "--es", "title", "Dentist",
        "--es", "start", "2025-06-03T14:00:00+02:00",
        "--es", "end", "2025-06-03T15:00:00+02:00",
        "--es", "calendar", "Personal",
        "--es", "location", "''",
        "--es", "notes", "''",
    )  # fmt: skip


def test_list_events_of_the_seed_example_starts_the_activity_and_queries_its_provider() -> None:
    channel, call = _tool("list_events")
    arguments = {"from": "2025-06-03T00:00:00Z", "to": "2025-06-04T00:00:00Z", "calendar": "Work & Home"}
    command = cmd.intent_command(channel, call, arguments, serial=None)
    assert command.argv == (
        "adb", "shell", "am", "start", "-W",
        "-a", "com.example.planwise.action.QUERY_EVENTS", "-p", "com.example.planwise",
        "--es", "from", "2025-06-03T00:00:00Z",
        "--es", "to", "2025-06-04T00:00:00Z",
        "--es", "calendar", "'Work & Home'",
    )  # fmt: skip
    assert call.result_uri is not None
    query = cmd.content_query_command(cmd.result_uri(call.result_uri, arguments), serial=None)
    assert query.argv == (
        "adb",
        "shell",
        "content",
        "query",
        "--uri",
        "content://com.example.planwise.provider/events",
    )


def test_a_component_package_is_sent_with_dash_n() -> None:
    channel = IntentChannel(package="com.example/.Receiver")
    command = cmd.intent_command(channel, IntentCall(action="A"), {}, serial=None)
    assert command.remote[-2:] == ("-n", "com.example/.Receiver")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("text", ["--es", "k", "text"]),
        (True, ["--ez", "k", "true"]),
        (False, ["--ez", "k", "false"]),
        (7, ["--ei", "k", "7"]),
        (2**40, ["--el", "k", str(2**40)]),
        (1.5, ["--ef", "k", "1.5"]),
        (None, ["--esn", "k"]),
        (["a,b", "c"], ["--esa", "k", "a\\,b,c"]),
        ([1, 2], ["--eia", "k", "1,2"]),
        ([1, 2**40], ["--ela", "k", f"1,{2**40}"]),
        ([1, 2.5], ["--efa", "k", "1.0,2.5"]),
        ({"a": [1]}, ["--es", "k", '{"a":[1]}']),
        ([], ["--es", "k", "[]"]),
        (["a", 1], ["--es", "k", '["a",1]']),
    ],
)
def test_extras_are_typed_from_the_argument_value(value: Any, words: list[str]) -> None:
    assert cmd.extra_words("k", value) == words


@pytest.mark.parametrize("items", [["a\\"], ["x\\,y"], ["a", ""]])
def test_string_lists_am_cannot_round_trip_are_refused(items: list[str]) -> None:
    with pytest.raises(cmd.ExtraError):
        cmd.extra_words("k", items)


def test_integers_wider_than_64_bits_are_refused() -> None:
    with pytest.raises(cmd.ExtraError):
        cmd.extra_words("k", 2**70)


def test_a_missing_optional_argument_drops_its_extra_and_text_keeps_json_of_other_values() -> None:
    call = IntentCall(action="A", extras={"a": "${a}", "b": "n=${b}", "c": "${c}"})
    command = cmd.intent_command(IntentChannel(package="p"), call, {"b": 3}, serial=None)
    assert command.remote[7:] == ("--es", "b", "n=3")


def test_nul_cannot_be_quoted_for_the_shell() -> None:
    with pytest.raises(ValueError, match="NUL"):
        cmd.shell_quote("a\0b")


def test_every_adversarial_value_reaches_am_as_exactly_one_word() -> None:
    extras = {f"k{i}": f"${{p{i}}}" for i in range(len(ADVERSARIAL))}
    arguments = {f"p{i}": value for i, value in enumerate(ADVERSARIAL)}
    command = cmd.intent_command(
        IntentChannel(package="p"), IntentCall(action="A", extras=extras), arguments, serial=None
    )
    words = shell_words(command.remote_line)
    assert words[words.index("--es") :] == [
        w for i, v in enumerate(ADVERSARIAL) for w in ("--es", f"k{i}", v)
    ]


@settings(max_examples=60)
@given(st.lists(TEXT, min_size=1, max_size=12), TEXT)
def test_the_device_shell_splits_the_command_back_into_the_exact_values(
    values: list[str], action: str
) -> None:
    extras = {f"k{i}": f"${{p{i}}}" for i in range(len(values))}
    arguments = {f"p{i}": value for i, value in enumerate(values)}
    call = IntentCall(action=action, extras=extras, result_type="broadcast")
    command = cmd.intent_command(IntentChannel(package="com.example"), call, arguments, serial=None)
    expected = ["am", "broadcast", "-a", action, "-p", "com.example"]
    expected += [w for i, v in enumerate(values) for w in ("--es", f"k{i}", v)]
    assert shell_words(command.remote_line) == expected


@settings(max_examples=60)
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_shell_quote_is_a_single_word_for_any_string(values: list[str]) -> None:
    assert shell_words(" ".join(cmd.shell_quote(v) for v in values)) == values


def test_result_uri_placeholders_are_percent_encoded() -> None:
    uri = cmd.result_uri("content://p/items/${id}?q=${q}", {"id": "a/b", "q": "x&y z"})
    assert uri == "content://p/items/a%2Fb?q=x%26y%20z"


# --------------------------------------------------------------------------- parsers


def test_broadcast_result_with_json_data_spanning_lines_and_quotes() -> None:
    data = '{"event_id": "e1",\n "t": "say \\"hi\\", then \\"bye\\""}'
    output = f'Broadcasting: Intent {{ act=A pkg=p }}\nBroadcast completed: result=-1, data="{data}"\n'
    parsed = cmd.parse_broadcast(output)
    assert parsed == cmd.BroadcastResult(-1, data)
    assert cmd.decode_data(parsed.data) == {"event_id": "e1", "t": 'say "hi", then "bye"'}


def test_broadcast_result_without_data_and_with_extras() -> None:
    assert cmd.parse_broadcast("Broadcast completed: result=0\n") == cmd.BroadcastResult(0, None)
    extras = 'Broadcast completed: result=1, data="{\\"ok\\":1}", extras: Bundle[{k=v}]\n'
    assert cmd.parse_broadcast(extras) == cmd.BroadcastResult(1, '{\\"ok\\":1}')
    assert cmd.parse_broadcast("Broadcasting: Intent { }\n") is None


def test_content_query_rows_become_objects_with_null_and_multiline_values() -> None:
    output = (
        "Row: 0 _id=1, title=Dentist, notes=bring card\nand id, location=NULL\n"
        "Row: 1 _id=2, title=a, b, notes=\n"
    )
    assert cmd.parse_content_rows(output) == [
        {"_id": "1", "title": "Dentist", "notes": "bring card\nand id", "location": None},
        {"_id": "2", "title": "a, b", "notes": ""},
    ]
    assert cmd.parse_content_rows("No result found.\n") == []


def test_am_errors_are_found_even_when_am_exits_zero() -> None:
    output = "Starting: Intent { act=A }\nError: Activity not started, unable to resolve Intent\n"
    assert cmd.am_error(output) == "Error: Activity not started, unable to resolve Intent"
    assert cmd.am_error("Broadcast completed: result=0\n") is None


# --------------------------------------------------------------------------- typed extras, as `am` reads them


def am_reads(option: str, word: str) -> Any:
    """What `am` makes of one typed extra's value word (as Android's `am` parses it)."""
    if option == "--esa":
        return [item.replace("\\,", ",") for item in re.split(r"(?<!\\),", word)]
    if option in ("--eia", "--ela"):
        return [int(item) for item in word.split(",")]
    if option == "--efa":
        return [float(item) for item in word.split(",")]
    if option == "--ez":
        return {"true": True, "false": False}[word]
    if option in ("--ei", "--el"):
        return int(word)
    if option == "--ef":
        return float(word)
    assert option == "--es", option
    return word


EXTRA_VALUES = st.one_of(
    st.booleans(),
    st.integers(min_value=cmd.INT64[0], max_value=cmd.INT64[1]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),  # `am --ef` reads a 32-bit float
    TEXT,
    st.lists(TEXT, min_size=1, max_size=5),
    st.lists(st.integers(min_value=cmd.INT64[0], max_value=cmd.INT64[1]), min_size=1, max_size=5),
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=5),
    st.dictionaries(TEXT, TEXT, max_size=3),
)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), EXTRA_VALUES), max_size=6))
def test_typed_extras_reach_am_through_the_device_shell_as_exactly_their_values(
    extras: list[tuple[str, Any]],
) -> None:
    words: list[str] = []
    sent: list[tuple[str, Any]] = []
    for key, value in extras:
        try:
            part = cmd.extra_words(key, value)
        except cmd.ExtraError:  # refused outright (e.g. a list `am` cannot split back)
            continue
        words += part
        sent.append((key, value))
    line = " ".join(cmd.shell_quote(word) for word in words)
    split = shell_words(line) if line else []
    assert split == words
    position = 0
    for key, value in sent:
        option, named = split[position], split[position + 1]
        assert named == key
        read = am_reads(option, split[position + 2])
        if option == "--es" and not isinstance(value, str):
            read = json.loads(read)  # objects and mixed arrays travel as JSON text
        assert read == value
        position += 3
    assert position == len(split)


@settings(max_examples=200)
@given(TEXT, TEXT)
def test_result_uri_values_parse_back_exactly_from_their_path_segment_and_query(
    segment: str, query: str
) -> None:
    uri = cmd.result_uri(
        "content://com.example.provider/events/${id}?q=${q}&x=1", {"id": segment, "q": query}
    )
    parts = urlsplit(uri)
    assert (parts.scheme, parts.netloc) == ("content", "com.example.provider")
    assert parts.path.count("/") == 2 and unquote(parts.path.rsplit("/", 1)[1]) == segment
    assert parse_qs(parts.query, keep_blank_values=True) == {"q": [query], "x": ["1"]}
    assert shell_words(cmd.content_query_command(uri, serial=None).remote_line)[-1] == uri
