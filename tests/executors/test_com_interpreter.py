"""The dialect-B COM action sequence interpreter, against plain Python objects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor.model import ComAction
from aai_gateway.errors import AaiError, ComScriptError, ErrorCode
from aai_gateway.executors.com_interpreter import PythonObjectBackend, ScriptContext, run_sequence

from .com_support import SPEC_MAIL, Journal, MailItem, OutlookApplication, load_windows

CTX = ScriptContext("com.example.app", "tool", ("text", "other", "n", "opt"))


def outlook(journal: Journal) -> PythonObjectBackend:
    return PythonObjectBackend({"Outlook.Application": lambda: OutlookApplication(journal, "Application")})


def actions(*raw: dict[str, Any]) -> tuple[ComAction, ...]:
    return tuple(ComAction.model_validate(a) for a in raw)


class Box:
    """Keeps what it is given, as a property and through a method."""

    def __init__(self) -> None:
        self.Value: Any = None
        self.received: list[Any] = []

    def Take(self, *args: Any) -> str:
        self.received.extend(args)
        return "taken"


def test_the_spec_outlook_example_creates_a_mail_sets_its_fields_sends_it_and_returns_the_json() -> None:
    app = load_windows(SPEC_MAIL)
    tool = app.tools[0]
    assert tool.call is not None and tool.call.kind == "com"
    journal = Journal()
    backend = outlook(journal)
    arguments = {"to": "bob@example.com", "subject": "Hi", "body": "Line 1\nLine 2"}

    result = run_sequence(
        tool.call.actions,
        arguments,
        backend,
        ScriptContext(app.id, tool.name, tuple(tool.parameters["properties"])),
    )

    assert result == {"success": True, "message_id": "generated"}
    assert [prog_id for prog_id, _ in backend.created] == ["Outlook.Application"]
    assert journal.entries == [
        ("call", "Application", "CreateItem", 0),
        ("set", "MailItem", "To", "bob@example.com"),
        ("set", "MailItem", "Subject", "Hi"),
        ("set", "MailItem", "Body", "Line 1\nLine 2"),
        ("call", "MailItem", "Send"),
    ]


def test_the_result_is_the_value_of_the_last_action_that_gave_one_when_there_is_no_return() -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "set", "object": "box", "property": "Value", "value": "${n}"},
        {"action": "get", "var": "v", "object": "box", "property": "Value"},
    )
    assert run_sequence(sequence, {"n": 7}, PythonObjectBackend({"Box": Box}), CTX) == 7


def test_a_set_after_the_last_value_keeps_that_value_as_the_result() -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "call", "object": "box", "method": "Take", "args": ["${text}"]},
        {"action": "set", "object": "box", "property": "Value", "value": "${n}"},
    )
    assert run_sequence(sequence, {"text": "a", "n": 1}, PythonObjectBackend({"Box": Box}), CTX) == "taken"


def test_return_of_a_variable_gives_its_value_and_ends_the_sequence() -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "call", "var": "answer", "object": "box", "method": "Take", "args": ["${text}"]},
        {"action": "return", "object": "answer"},
        {"action": "call", "object": "box", "method": "Take", "args": ["never"]},
    )
    backend = PythonObjectBackend({"Box": Box})
    assert run_sequence(sequence, {"text": "a"}, backend, CTX) == "taken"
    assert backend.created[0][1].received == ["a"]


def test_a_whole_placeholder_passes_the_typed_value_and_an_embedded_one_its_text() -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "call", "object": "box", "method": "Take", "args": ["${n}", "n=${n}", ["${text}"], 3]},
    )
    backend = PythonObjectBackend({"Box": Box})
    run_sequence(sequence, {"n": [1, 2], "text": "t"}, backend, CTX)
    assert backend.created[0][1].received == [[1, 2], "n=[1,2]", ["t"], 3]


def test_a_missing_optional_parameter_skips_its_set_and_passes_none_as_an_argument() -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "set", "object": "box", "property": "Value", "value": "${opt}"},
        {"action": "call", "object": "box", "method": "Take", "args": ["${opt}", "[${opt}]"]},
    )
    backend = PythonObjectBackend({"Box": Box})
    run_sequence(sequence, {}, backend, CTX)
    box = backend.created[0][1]
    assert box.Value is None and box.received == [None, "[]"]


def test_a_returned_value_from_a_parameter_is_never_parsed_as_json() -> None:
    sequence = actions({"action": "return", "value": "${text}"})
    assert run_sequence(sequence, {"text": '{"a":1}'}, PythonObjectBackend({}), CTX) == '{"a":1}'


@pytest.mark.parametrize(
    ("raw", "pointer", "words"),
    [
        (
            [{"action": "call", "object": "mail", "method": "Send"}],
            "/actions/0",
            "unknown variable 'mail'",
        ),
        (
            [
                {"action": "create", "var": "app", "progid": "Box"},
                {"action": "set", "object": "app", "property": "Value", "value": "${nope}"},
            ],
            "/actions/1",
            "unknown placeholder ${nope}",
        ),
        (
            [{"action": "create", "var": "app", "progid": "Box"}, {"action": "call", "object": "app"}],
            "/actions/1",
            "'call' needs the field 'method'",
        ),
        ([{"action": "create", "progid": "Box"}], "/actions/0", "'create' needs the field 'var'"),
        ([{"action": "return", "object": "ghost"}], "/actions/0", "unknown variable 'ghost'"),
    ],
)
def test_a_sequence_that_cannot_run_fails_before_any_action_naming_the_tool_and_the_action(
    raw: list[dict[str, Any]], pointer: str, words: str
) -> None:
    backend = PythonObjectBackend({"Box": Box})
    with pytest.raises(ComScriptError) as caught:
        run_sequence(actions(*raw), {}, backend, CTX)
    assert caught.value.data["pointer"] == pointer
    assert words in caught.value.message and "com.example.app tool" in caught.value.message
    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert backend.created == []


def test_an_unregistered_prog_id_is_service_unavailable() -> None:
    with pytest.raises(AaiError) as caught:
        run_sequence(
            actions({"action": "create", "var": "a", "progid": "Nope.App"}), {}, PythonObjectBackend({}), CTX
        )
    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE and "Nope.App" in caught.value.message


def test_a_failing_method_is_reported_with_its_action_and_the_apps_message() -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("mailbox full")

    mail = MailItem(Journal(), "MailItem")
    object.__setattr__(mail, "Send", broken)
    sequence = actions(
        {"action": "create", "var": "mail", "progid": "Mail"},
        {"action": "call", "object": "mail", "method": "Send"},
    )
    with pytest.raises(ComScriptError) as caught:
        run_sequence(sequence, {}, PythonObjectBackend({"Mail": lambda: mail}), CTX)
    assert caught.value.data["pointer"] == "/actions/1"
    assert "call mail.Send failed: mailbox full" in caught.value.message


def test_a_result_that_is_an_object_and_not_a_value_is_refused() -> None:
    with pytest.raises(ComScriptError, match="not a value"):
        run_sequence(
            actions({"action": "create", "var": "b", "progid": "Box"}),
            {},
            PythonObjectBackend({"Box": Box}),
            CTX,
        )


ADVERSARIAL = st.one_of(
    st.text(),
    st.sampled_from(
        [
            '"; Remove-Item C:\\ -Recurse; "',
            "$(calc.exe)",
            "`whoami`",
            '" & CreateObject("WScript.Shell").Run("calc") & "',
            "%PATH%",
            "${other}",
            "$${other}}",
            "line1\r\nline2\x00end",
            "back\\slash\\\\",
            "'single' \"double\"",
        ]
    ),
)


@settings(max_examples=150, deadline=None)
@given(text=ADVERSARIAL, other=st.text())
def test_parameter_values_arrive_exactly_as_given_whatever_they_contain(text: str, other: str) -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "set", "object": "box", "property": "Value", "value": "${text}"},
        {"action": "call", "object": "box", "method": "Take", "args": ["${text}", "<${text}|${other}>"]},
        {"action": "return", "value": "${text}"},
    )
    backend = PythonObjectBackend({"Box": Box})
    result = run_sequence(sequence, {"text": text, "other": other}, backend, CTX)
    box = backend.created[0][1]
    assert box.Value == text
    assert box.received == [text, f"<{text}|{other}>"]
    assert result == text


@settings(max_examples=50, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c, max_size=3)
    )
)
def test_a_whole_placeholder_delivers_any_json_value_unchanged(value: Any) -> None:
    sequence = actions(
        {"action": "create", "var": "box", "progid": "Box"},
        {"action": "set", "object": "box", "property": "Value", "value": "${n}"},
        {"action": "get", "var": "v", "object": "box", "property": "Value"},
    )
    assert run_sequence(sequence, {"n": value}, PythonObjectBackend({"Box": Box}), CTX) == json.loads(
        json.dumps(value)
    )
