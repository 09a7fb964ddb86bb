"""The native consent dialog for real: zenity on a private Xvfb display, answered by xdotool.

What the dialog shows is read back from the screen's own widget (its label text copied to the X
clipboard and pasted into a second zenity), so "shown literally" is checked on what GTK displays,
not on what we meant to pass. Hostile strings carry commands that would leave marker files;
none may appear.
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from aai_gateway.consent.dialog import ask
from aai_gateway.consent.dialog_programs import DialogBackend, dialog_command
from aai_gateway.consent.prompt_text import DENY, Answer, ConsentQuestion, build_prompt
from tests.builders import write_json
from tests.consent.display import (
    MISSING_REASON,
    VirtualDisplay,
    children_running,
    missing_programs,
    process_argv,
)
from tests.keyring_session import PrivateKeyring
from tests.server.conftest import adapter_app

pytestmark = pytest.mark.anyio

# Tab presses from the focused Deny button to each choice (Deny, OK, the text, then the extras).
KEYS_FOR = {
    "deny": ["space"],
    "allow_once": ["Tab", "space"],
    "allow_app": ["Tab"] * 3 + ["space"],
    "allow_tool": ["Tab"] * 4 + ["space"],
    "deny_remember": ["Tab"] * 5 + ["space"],
}
TO_THE_TEXT = ["Tab", "Tab"]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def screen() -> Iterator[VirtualDisplay]:
    missing = missing_programs()
    if missing:
        raise RuntimeError(f"{', '.join(missing)} missing: {MISSING_REASON}")
    with VirtualDisplay() as display:
        yield display


def hostile_lines(marker: Path) -> list[str]:
    return [
        f'"Notes" \\ $(touch {marker})',
        f"`touch {marker}` ; touch {marker}",
        f'" & do shell script "touch {marker}" & "',
        "<b>not bold</b> &amp; %s {} ${HOME} 日本語 😀",
        "\u202etxet\u202c",
    ]


def question_for(marker: Path, **changes: Any) -> ConsentQuestion:
    text = "\n".join(hostile_lines(marker))
    fields: dict[str, Any] = {
        "caller": hostile_lines(marker)[0],
        "app_name": hostile_lines(marker)[2],
        "app_id": "dev.test.hostile",
        "source": "file:/tmp/apps/hostile.json",
        "tool": "add_note",
        "tool_description": text,
        "arguments": {"title": text, "count": 3, "nested": {"cmd": f"; touch {marker}"}},
    }
    fields.update(changes)
    return ConsentQuestion(**fields)


@pytest.fixture
def marker() -> Iterator[Path]:
    """A short path (so hostile lines stay unwrapped) that a command, if one ran, would create."""
    path = Path(tempfile.gettempdir()) / f"aai-{secrets.token_hex(4)}"
    yield path
    assert not path.exists(), "a shown string ran as a command"


def backend(screen: VirtualDisplay) -> DialogBackend:
    return DialogBackend("zenity", "/usr/bin/zenity", screen.environ())


async def answered(
    question: ConsentQuestion, screen: VirtualDisplay, choice: str, *, look: bool = False
) -> tuple[Answer, dict[str, Any]]:
    """Run `ask` while a thread plays the user: find the window, (look at it,) choose."""
    seen: dict[str, Any] = {}
    answer: Answer = DENY

    def user() -> None:
        window = screen.wait_for_window("^AAI Gateway: ")
        if look:
            seen["title"] = screen.window_name(window)
            [pid] = children_running("zenity")
            seen["argv"] = process_argv(pid)
            screen.press(window, *TO_THE_TEXT, "ctrl+a", "ctrl+c")
            seen["text"] = screen.clipboard_text()
            screen.press(window, "shift+Tab", "shift+Tab")  # from the text back to Deny
        screen.press(window, *KEYS_FOR[choice])

    async def run() -> None:
        nonlocal answer
        answer = await ask(question, backend(screen), timeout_seconds=30)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await anyio.to_thread.run_sync(user)
    return answer, seen


async def test_the_dialog_shows_hostile_strings_exactly_and_runs_nothing(
    screen: VirtualDisplay, marker: Path
) -> None:
    question = question_for(marker)
    prompt = build_prompt(question)
    answer, seen = await answered(question, screen, "deny", look=True)
    assert answer == DENY
    assert seen["text"] == prompt.text  # what GTK shows, read back from the widget
    assert seen["title"] == prompt.title
    assert seen["argv"] == list(dialog_command(prompt, backend(screen), 30).argv)
    shown = seen["text"]
    lines = hostile_lines(marker)
    assert f"\nAgent: {lines[0]}\n" in shown
    assert f"\nApp: {lines[2]}\n" in shown
    for line in lines[:4]:
        assert f"\n  {line}\n" in shown
    assert "\n  \\u202etxet\\u202c\n" in shown  # a bidi override is shown as an escape, not obeyed


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("deny", ("deny", False)),
        ("allow_once", ("allow_once", False)),
        ("allow_app", ("allow_app", True)),
        ("allow_tool", ("allow_tool", True)),
        ("deny_remember", ("deny", True)),
    ],
)
async def test_each_button_gives_the_answer_it_names(
    screen: VirtualDisplay, marker: Path, choice: str, expected: Answer
) -> None:
    answer, _ = await answered(question_for(marker, app_name="my_notes"), screen, choice)
    assert answer == expected


async def test_an_unanswered_dialog_is_a_denial_and_is_closed(screen: VirtualDisplay, marker: Path) -> None:
    started = time.monotonic()
    answer = await ask(question_for(marker), backend(screen), timeout_seconds=2)
    assert answer == DENY
    assert time.monotonic() - started < 15
    assert children_running("zenity") == []
    assert screen.xdotool_search("^AAI Gateway: ") == []


async def test_a_cancelled_question_closes_its_dialog(screen: VirtualDisplay, marker: Path) -> None:
    with anyio.move_on_after(3):
        await ask(question_for(marker), backend(screen), timeout_seconds=60)
    assert children_running("zenity") == []
    assert screen.xdotool_search("^AAI Gateway: ") == []


async def test_the_gateway_asks_with_the_dialog_when_the_client_cannot_and_remembers_the_answer(
    screen: VirtualDisplay, marker: Path, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    document = adapter_app()
    document["app"]["name"] = {"en": hostile_lines(marker)[2]}
    write_json(apps / "adapter.json", document)
    with PrivateKeyring() as keyring:
        env = keyring.child_env()
        env.update({name: screen.environ()[name] for name in ("DISPLAY", "NO_AT_BRIDGE")})
        env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
            env=env,
        )
        arguments = {"app": "dev.test.adapter", "tool": "echo", "args": {"text": f"$(touch {marker})"}}
        async with Client(server, mode="legacy") as client:  # no elicitation callback: cannot ask
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    results: list[Any] = []

                    async def call() -> None:
                        results.append(await client.call_tool("aai_exec", arguments))

                    group.start_soon(call)
                    await anyio.to_thread.run_sync(lambda: choose(screen, "allow_tool"))
            assert not results[0].is_error, results[0]
            with anyio.fail_after(20):  # remembered: no second dialog to wait for
                again = await client.call_tool("aai_exec", arguments)
            assert not again.is_error
            echoed = json.loads(again.content[0].text)  # type: ignore[union-attr]
            assert f"$(touch {marker})" in json.dumps(echoed)


def choose(screen: VirtualDisplay, choice: str) -> None:
    screen.press(screen.wait_for_window("^AAI Gateway: ", timeout=30), *KEYS_FOR[choice])
