"""The exact command of every native dialog: shown strings travel as data (argv items or
environment variables of the child), scripts are constants, and only offered answers count."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.consent.dialog_programs import (
    OSASCRIPT_LINES,
    POWERSHELL_SCRIPT,
    DialogBackend,
    dialog_command,
    interpret,
    kdialog_argv,
    osascript_argv,
    powershell_argv,
    with_utf8_ctype,
    zenity_argv,
)
from aai_gateway.consent.prompt_text import DENY, ConsentQuestion, Prompt, build_prompt

HOSTILE = '" & do shell script "touch /tmp/PWNED" & "\n$(touch PWNED) `id` \\\' ; rm -rf ~ #'


def prompt_for(text: str = "Notes", offered: tuple[str, ...] | None = None) -> Prompt:
    question = ConsentQuestion(
        caller=text,
        app_name=text,
        app_id="dev.notes",
        source="bundled",
        tool=text,
        tool_description=text,
        arguments={"value": text},
        **({"offered": offered} if offered else {}),  # type: ignore[arg-type]
    )
    return build_prompt(question)


def test_zenity_gets_plain_text_each_string_as_one_argv_item_and_deny_focused() -> None:
    prompt = prompt_for(HOSTILE)
    argv = zenity_argv("/usr/bin/zenity", prompt, 30)
    assert argv[:5] == ["/usr/bin/zenity", "--question", "--no-markup", "--no-wrap", "--default-cancel"]
    assert f"--text={prompt.text}" in argv
    assert f"--title={prompt.title}" in argv
    assert "--timeout=31" in argv
    assert [a for a in argv if "-label=" in a] == ["--ok-label=Allow once", "--cancel-label=Deny"]


def test_zenity_button_labels_double_underscores_so_they_are_not_mnemonics() -> None:
    argv = zenity_argv("zenity", prompt_for("my_app"), 10)
    assert "--extra-button=Always allow all tools of my__app" in argv


def test_kdialog_text_starts_with_the_constant_headline_so_it_is_never_rich_text() -> None:
    prompt = prompt_for("<b>bold</b>")
    argv = kdialog_argv("kdialog", prompt)
    assert argv[:5] == ["kdialog", "--title", prompt.title, "--radiolist", prompt.text]
    assert prompt.text.startswith("An AI agent asks")
    assert argv[5:8] == ["allow_once", "Allow once", "off"]
    assert argv[argv.index("deny") : argv.index("deny") + 3] == ["deny", "Deny", "on"]


@given(st.text(max_size=200))
def test_the_osascript_program_is_constant_and_every_shown_string_is_an_argument(value: str) -> None:
    prompt = prompt_for(value)
    argv = osascript_argv("/usr/bin/osascript", prompt)
    script = argv[1 : 1 + 2 * len(OSASCRIPT_LINES)]
    assert script[0::2] == ["-e"] * len(OSASCRIPT_LINES)
    assert tuple(script[1::2]) == OSASCRIPT_LINES
    assert argv[1 + 2 * len(OSASCRIPT_LINES) :] == [
        prompt.title,
        prompt.text,
        *(choice.label for choice in prompt.listed),
    ]


@given(st.text(max_size=200))
def test_powershell_runs_one_constant_script_and_reads_the_strings_from_its_environment(value: str) -> None:
    prompt = prompt_for(value)
    parent = {"Path": "C:\\Windows", "AAI_CONSENT_TEXT": "forged"}
    backend = DialogBackend("powershell", "powershell.exe", parent)
    command = dialog_command(prompt, backend, 60)
    assert list(command.argv) == powershell_argv("powershell.exe")
    assert command.env["AAI_CONSENT_TEXT"] == prompt.text.replace("\n", "\r\n")
    assert command.env["AAI_CONSENT_TITLE"] == prompt.title
    assert command.env["AAI_CONSENT_TIMEOUT_MS"] == "60000"
    labels = [command.env[f"AAI_CONSENT_LABEL_{n}"] for n in range(1, len(prompt.choices) + 1)]
    assert labels == [choice.label for choice in prompt.choices]
    assert "$env:AAI_CONSENT_TEXT" in POWERSHELL_SCRIPT and "UseMnemonic = $false" in POWERSHELL_SCRIPT


def test_a_forged_answer_variable_in_the_gateways_environment_never_reaches_the_dialog() -> None:
    backend = DialogBackend("zenity", "zenity", {"DISPLAY": ":1", "AAI_CONSENT_KEY_1": "allow_app"})
    command = dialog_command(prompt_for(), backend, 10)
    assert "AAI_CONSENT_KEY_1" not in command.env


def test_zenity_and_kdialog_get_a_utf8_character_type_under_the_c_locale() -> None:
    env = {"LANG": "C"}
    with_utf8_ctype(env)
    assert env == {"LANG": "C.UTF-8"}
    unset: dict[str, str] = {}
    with_utf8_ctype(unset)
    assert unset == {"LC_CTYPE": "C.UTF-8"}
    german = {"LC_ALL": "de_DE.UTF-8"}
    with_utf8_ctype(german)
    assert german == {"LC_ALL": "de_DE.UTF-8"}


def test_zenity_answers_are_read_from_its_exit_status_and_the_pressed_extra_button() -> None:
    prompt = prompt_for("my_app")
    assert interpret("zenity", prompt, 0, "") == ("allow_once", False)
    assert interpret("zenity", prompt, 1, "") == DENY
    assert interpret("zenity", prompt, 1, "Always allow this tool\n") == ("allow_tool", True)
    assert interpret("zenity", prompt, 1, "Always allow all tools of my__app\n") == ("allow_app", True)
    assert interpret("zenity", prompt, 1, "Always deny this tool\n") == ("deny", True)
    assert interpret("zenity", prompt, 5, "") == DENY  # zenity's own timeout
    assert interpret("zenity", prompt, 1, "Always allow all tools of my_app\n") == DENY  # not a label we set


def test_a_choice_that_was_not_offered_is_a_denial_even_if_the_dialog_says_it() -> None:
    prompt = prompt_for(offered=("allow_once", "deny"))
    assert interpret("zenity", prompt, 1, "Always allow this tool\n") == DENY
    assert interpret("kdialog", prompt, 0, "allow_app\n") == DENY
    assert interpret("powershell", prompt, 0, "allow_tool\r\n") == DENY


def test_osascript_answers_are_indexes_into_the_listed_choices() -> None:
    prompt = prompt_for()
    assert interpret("osascript", prompt, 0, "1\n") == ("allow_once", False)
    assert interpret("osascript", prompt, 0, "3\n") == ("allow_app", True)
    for garbage in ("0\n", "9\n", "-1\n", "١\n", "allow_app\n", ""):
        assert interpret("osascript", prompt, 0, garbage) == DENY
    assert interpret("osascript", prompt, 1, "1\n") == DENY


def test_kdialog_and_powershell_print_the_chosen_key() -> None:
    prompt = prompt_for()
    assert interpret("kdialog", prompt, 0, "allow_tool\n") == ("allow_tool", True)
    assert interpret("powershell", prompt, 0, "deny_remember\r\n") == ("deny", True)
    assert interpret("kdialog", prompt, 1, "allow_tool\n") == DENY
