"""Golden outputs for the spec's own multi-platform example (Mail, spec 001/003): the exact
AppleScript, adb argv and iOS URL the gateway generates for it, with hostile values in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor, Platform, Source, load_text
from aai_gateway.descriptor.model import IntentCall, IntentChannel, UrlSchemeCall, UrlSchemeChannel
from aai_gateway.executors import Invocation
from aai_gateway.executors import android_command as cmd
from aai_gateway.executors.apple import AppleScriptExecutor
from aai_gateway.executors.ios import build_url

SPEC_MAIL = Path(__file__).resolve().parents[1] / "fixtures" / "spec" / "b_mail.json"
MAIL = {"to": "bob@example.com", "subject": 'Hi "there" & $(id)', "body": "Line 1\nLine 2"}


def mail_on(host: Platform) -> AppDescriptor:
    loaded = load_text(SPEC_MAIL.read_bytes(), Source(kind="file", location=str(SPEC_MAIL)), host)
    assert loaded.descriptor is not None, loaded.problems
    return loaded.descriptor


def script(tool: str, arguments: dict[str, Any]) -> tuple[list[str], str]:
    app = mail_on("macos")
    found = app.tool(tool)
    assert found is not None
    return AppleScriptExecutor.build(Invocation(app, found, arguments, "req-1"))


def test_send_email_on_macos_keeps_every_value_inside_its_applescript_literal() -> None:
    args, text = script("send_email", MAIL)
    assert args == ["-l", "AppleScript", "-"]
    assert text == (
        'tell application "Mail"\n'
        "  set newMessage to make new outgoing message with properties "
        '{subject:"Hi \\"there\\" & $(id)", content:"Line 1\\nLine 2", visible:false}\n'
        "  tell newMessage\n"
        "    make new to recipient at beginning of to recipients with properties "
        '{address:"bob@example.com"}\n'
        "    send\n  end tell\nend tell\n"
        'return "{\\"success\\":true, \\"message_id\\":\\"generated\\"}"'
    )


def test_search_emails_on_macos_cannot_be_broken_out_of_its_quotes() -> None:
    _, text = script("search_emails", {"query": 'report" & (do shell script "id") & "'})
    assert text == (
        'tell application "Mail"\n'
        '  set results to (messages whose subject contains "report\\" & (do shell script \\"id\\") & \\"")\n'
        "end tell\n"
        'return "{\\"emails\\":[\\"result1\\", \\"result2\\"]}"'
    )


def test_send_email_on_android_starts_the_intent_with_quoted_string_extras() -> None:
    tool = mail_on("android").tool("send_email")
    assert tool is not None
    assert isinstance(tool.channel, IntentChannel) and isinstance(tool.call, IntentCall)
    command = cmd.intent_command(tool.channel, tool.call, MAIL, serial=None)
    assert command.argv == (
        "adb", "shell", "am", "start", "-W", "-a", "com.example.MAIL_SEND", "-p", "com.example.mail",
        "--es", "to", "bob@example.com",
        "--es", "subject", "'Hi \"there\" & $(id)'",
        "--es", "body", "'Line 1\nLine 2'",
    )  # fmt: skip
    assert tool.call.result_type == "content_provider"
    assert cmd.content_query_command(tool.call.result_uri or "", serial="emulator-5554").argv == (
        "adb", "-s", "emulator-5554", "shell", "content", "query", "--uri", "content://com.example.mail/results",
    )  # fmt: skip


def test_send_email_on_ios_percent_encodes_every_value_of_its_url() -> None:
    tool = mail_on("ios").tool("send_email")
    assert tool is not None
    assert isinstance(tool.channel, UrlSchemeChannel) and isinstance(tool.call, UrlSchemeCall)
    assert build_url(tool.call.url_template, MAIL, tool.channel.scheme) == (
        "mailapp://send?to=bob%40example.com&subject=Hi%20%22there%22%20%26%20%24%28id%29"
        "&body=Line%201%0ALine%202"
    )
    assert (tool.call.result_type, tool.call.app_group_id) == ("app_group", "group.com.example.mail")
