"""The exact program invocations of every native consent dialog, and how their output is read.

Every shown string is passed as data, never spliced into script text:

- zenity and kdialog get each string as its own argv item; no shell is involved anywhere (the
  program is started with `executors.process.run_program(argv)`).
- zenity shows the prompt with `--question --no-markup`, so GTK sets the text as plain text
  (no Pango markup, no backslash escapes; checked with a real zenity). Its buttons do have
  mnemonics, so `_` in a button label is doubled to show literally; zenity prints a pressed
  extra button's label exactly as it was passed, and the answer is matched against that.
- kdialog's label decides plain text or rich text from the first line of the text
  (`Qt::mightBeRichText` looks no further than the first line break): the first line of every
  prompt is constant (`PROMPT_HEADLINE`), so the text is plain.
- osascript runs the constant `OSASCRIPT_LINES` (`on run argv … end run`); the title, the text
  and the choice labels are its arguments, read as `item n of argv`, and the answer is an index.
- PowerShell runs the constant `POWERSHELL_SCRIPT` (`-EncodedCommand`, UTF-16LE base64 of the
  constant); the strings reach it in environment variables set for that child only
  (`AAI_CONSENT_*`), and the answer is one of the constant choice keys.

Every argv item starts with a constant character (the prompt text with `PROMPT_HEADLINE`, the
title with `AAI Gateway`, every label with a constant word), so no shown string can ever be
read as an option; zenity's take `--name=value` form.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .prompt_text import DENY, Answer, Prompt

BackendKind = Literal["zenity", "kdialog", "osascript", "powershell"]


@dataclass(frozen=True)
class DialogBackend:
    """A dialog program found on this machine, and the environment its child gets."""

    kind: BackendKind
    program: str  # an absolute path, or a bare name in tests
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DialogCommand:
    """Exactly what is started: argv (no shell) and the child's whole environment."""

    argv: tuple[str, ...]
    env: Mapping[str, str]


def zenity_button(label: str) -> str:
    """A label for a GTK button, where `_` marks a mnemonic: doubled to show literally."""
    return label.replace("_", "__")


def zenity_argv(program: str, prompt: Prompt, timeout_seconds: float) -> list[str]:
    """`zenity --question` with plain text, Deny focused (Return denies), one extra button per
    remembered choice. OK is Allow once, Cancel is Deny."""
    argv = [
        program,
        "--question",
        "--no-markup",
        "--no-wrap",
        "--default-cancel",
        "--icon-name=dialog-question",
        f"--title={prompt.title}",
        f"--text={prompt.text}",
        f"--timeout={math.ceil(timeout_seconds) + 1}",
        "--ok-label=Allow once",
        "--cancel-label=Deny",
    ]
    argv += [
        f"--extra-button={zenity_button(choice.label)}"
        for choice in prompt.choices
        if choice.key not in ("allow_once", "deny")
    ]
    return argv


def kdialog_argv(program: str, prompt: Prompt) -> list[str]:
    """`kdialog --radiolist`: one row per choice, tagged with its constant key, Deny selected."""
    argv = [program, "--title", prompt.title, "--radiolist", prompt.text]
    for choice in prompt.listed:
        argv += [choice.key, choice.label, "on" if choice.key == "deny" else "off"]
    return argv


OSASCRIPT_LINES: tuple[str, ...] = (
    "on run argv",
    "set theTitle to item 1 of argv",
    "set thePrompt to item 2 of argv",
    "set theChoices to items 3 thru -1 of argv",
    "activate",
    "set picked to choose from list theChoices with title theTitle with prompt thePrompt "
    'default items {"Deny"} OK button name "OK" cancel button name "Deny" '
    "without multiple selections allowed and empty selection allowed",
    'if picked is false then return "0"',
    "set pickedText to item 1 of picked",
    "considering case, diacriticals, hyphens, punctuation and white space",
    "repeat with i from 1 to count of theChoices",
    "if item i of theChoices is pickedText then return (i as text)",
    "end repeat",
    "end considering",
    'return "0"',
    "end run",
)


def osascript_argv(program: str, prompt: Prompt) -> list[str]:
    """`osascript -e <constant line>… <title> <text> <label>…`: the script reads its arguments;
    it prints the 1-based index of the chosen label, `0` for Deny or a closed dialog."""
    argv = [program]
    for line in OSASCRIPT_LINES:
        argv += ["-e", line]
    argv += [prompt.title, prompt.text]
    argv += [choice.label for choice in prompt.listed]
    return argv


POWERSHELL_SCRIPT = r"""
$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Windows.Forms
Add-Type -AssemblyName System.Drawing
[System.Windows.Forms.Application]::EnableVisualStyles()
$script:answer = 'deny'
$script:denyButton = $null
$form = New-Object System.Windows.Forms.Form
$form.Text = $env:AAI_CONSENT_TITLE
$form.StartPosition = [System.Windows.Forms.FormStartPosition]::CenterScreen
$form.Size = New-Object System.Drawing.Size(820, 600)
$form.MinimizeBox = $false
$form.MaximizeBox = $false
$form.TopMost = $true
$box = New-Object System.Windows.Forms.TextBox
$box.Multiline = $true
$box.ReadOnly = $true
$box.WordWrap = $false
$box.TabStop = $false
$box.ScrollBars = [System.Windows.Forms.ScrollBars]::Both
$box.Dock = [System.Windows.Forms.DockStyle]::Fill
$box.Font = New-Object System.Drawing.Font('Consolas', 10)
$box.Text = $env:AAI_CONSENT_TEXT
$panel = New-Object System.Windows.Forms.FlowLayoutPanel
$panel.Dock = [System.Windows.Forms.DockStyle]::Bottom
$panel.AutoSize = $true
$panel.Padding = New-Object System.Windows.Forms.Padding(6)
$count = [int]$env:AAI_CONSENT_CHOICES
for ($i = 1; $i -le $count; $i++) {
    $button = New-Object System.Windows.Forms.Button
    $button.Text = [Environment]::GetEnvironmentVariable("AAI_CONSENT_LABEL_$i")
    $button.Tag = [Environment]::GetEnvironmentVariable("AAI_CONSENT_KEY_$i")
    $button.UseMnemonic = $false
    $button.AutoSize = $true
    $button.Add_Click({
        param($clicked, $unused)
        $script:answer = [string]$clicked.Tag
        $clicked.FindForm().Close()
    })
    $panel.Controls.Add($button)
    if ([string]$button.Tag -eq 'deny') { $script:denyButton = $button; $form.CancelButton = $button }
}
$form.Controls.Add($box)
$form.Controls.Add($panel)
$timer = New-Object System.Windows.Forms.Timer
$timer.Interval = [Math]::Max(1000, [int]$env:AAI_CONSENT_TIMEOUT_MS)
$timer.Add_Tick({ $timer.Stop(); $script:answer = 'deny'; $form.Close() })
$form.Add_Shown({
    $form.Activate()
    if ($null -ne $script:denyButton) { [void]$script:denyButton.Focus() }
    $timer.Start()
})
[void]$form.ShowDialog()
$timer.Stop()
[Console]::Out.WriteLine($script:answer)
""".strip()

POWERSHELL_ENV_PREFIX = "AAI_CONSENT_"


def powershell_argv(program: str) -> list[str]:
    """The same for every question: the constant script, UTF-16LE base64 as PowerShell wants."""
    encoded = base64.b64encode(POWERSHELL_SCRIPT.encode("utf-16-le")).decode("ascii")
    return [program, "-NoLogo", "-NoProfile", "-NonInteractive", "-Sta", "-EncodedCommand", encoded]


def powershell_env(prompt: Prompt, timeout_seconds: float) -> dict[str, str]:
    """The strings, for the PowerShell child only. A TextBox breaks lines at CRLF only."""
    env = {
        "AAI_CONSENT_TITLE": prompt.title,
        "AAI_CONSENT_TEXT": prompt.text.replace("\n", "\r\n"),
        "AAI_CONSENT_CHOICES": str(len(prompt.choices)),
        "AAI_CONSENT_TIMEOUT_MS": str(max(1000, math.ceil(timeout_seconds * 1000))),
    }
    for index, choice in enumerate(prompt.choices, start=1):
        env[f"AAI_CONSENT_LABEL_{index}"] = choice.label
        env[f"AAI_CONSENT_KEY_{index}"] = choice.key
    return env


def dialog_command(prompt: Prompt, backend: DialogBackend, timeout_seconds: float) -> DialogCommand:
    env = {
        name: value
        for name, value in backend.environ.items()
        if not name.upper().startswith(POWERSHELL_ENV_PREFIX)
    }
    if backend.kind == "zenity":
        argv = zenity_argv(backend.program, prompt, timeout_seconds)
        with_utf8_ctype(env)
    elif backend.kind == "kdialog":
        argv = kdialog_argv(backend.program, prompt)
        with_utf8_ctype(env)
    elif backend.kind == "osascript":
        argv = osascript_argv(backend.program, prompt)
    else:
        argv = powershell_argv(backend.program)
        env.update(powershell_env(prompt, timeout_seconds))
    return DialogCommand(argv=tuple(argv), env=env)


def with_utf8_ctype(env: dict[str, str]) -> None:
    """GLib reads argv in the locale's encoding: under the C locale zenity refuses every
    non-ASCII argument ("This option is not available"). Where the character type is C, POSIX
    or unset, it becomes C.UTF-8; the language of messages is left alone."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = env.get(name)
        if value:
            if value in ("C", "POSIX"):
                env[name] = "C.UTF-8"
            return
    env["LC_CTYPE"] = "C.UTF-8"


def interpret(kind: BackendKind, prompt: Prompt, returncode: int | None, stdout: str) -> Answer:
    """The answer from how the dialog ended; anything unexpected is a denial."""
    out = stdout.removesuffix("\n").removesuffix("\r")
    if kind == "zenity":
        if returncode == 0 and out == "":
            return _answer_of(prompt, "allow_once")
        if returncode == 1 and out:
            for choice in prompt.choices:
                if choice.key not in ("allow_once", "deny") and out == zenity_button(choice.label):
                    return choice.answer
        return DENY  # 1 without output: Deny or closed; 5: zenity's own timeout; else an error
    if returncode != 0:
        return DENY
    if kind == "osascript":
        if out.isascii() and out.isdecimal() and 1 <= int(out) <= len(prompt.listed):
            return prompt.listed[int(out) - 1].answer
        return DENY
    return _answer_of(prompt, out)  # kdialog and PowerShell print the chosen key


def _answer_of(prompt: Prompt, key: str) -> Answer:
    choice = prompt.choice(key)
    return choice.answer if choice is not None else DENY
