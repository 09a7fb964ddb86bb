"""Asking for consent with a native dialog, when the MCP client cannot ask (no elicitation).

The gateway shows the question in the desktop session it runs in: `zenity` (preferred) or
`kdialog` on Linux and other X11/Wayland systems, `osascript` on macOS, Windows PowerShell (or
`pwsh`) with a WinForms window on Windows. `available_dialog(environ, platform)` finds one, or
says there is none (a headless machine, CI); `ask(question, backend)` shows it and waits.

Every shown string is passed as data, never spliced into script text:

- zenity and kdialog get each string as its own argv item; no shell is involved anywhere (the
  program is started with `anyio.open_process(argv)`).
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

What is shown (`build_prompt`): the caller, the app's name, id and source (web origin,
`bundled`, `file:…`), the tool, its description and the call's arguments as indented JSON.
One-line fields show control, format (bidi overrides, zero-width, tag characters), surrogate
and line/paragraph-separator characters as visible escapes (`\\n`, `\\u202e`, …), so a value
cannot fake a line of the prompt or reorder it; the description and the JSON keep their line
breaks but every line of them is indented by two spaces, so only the gateway's own labels start
at the left edge. Long values are cut with `…`; long lines are hard-wrapped (a dialog wider than
the screen would hide its buttons); at most `DESCRIPTION_LINES` and `ARGUMENT_LINES` lines are
shown, followed by how much was left out and the arguments' full size in bytes.

An answer is `(decision, remember)`: decision one of `allow_once`, `allow_tool`, `allow_app`,
`deny`; remember is True for the "always" choices (allow this tool, allow every tool of the app,
deny this tool) and False otherwise. A timeout, a closed window, a dialog that cannot start,
any output that is not one of the offered choices, or an error → `("deny", False)`.

The dialog is stopped when the answer is late or `ask` is cancelled: it runs in a session (and
so a process group) of its own, which gets SIGTERM, then SIGKILL after `KILL_GRACE_SECONDS`
(on Windows the process is terminated). zenity also gets `--timeout` one second past the
deadline, so a dialog left behind by a killed gateway still closes itself; the other programs
have no native timeout for a dialog with this many choices (`choose from list` has no
`giving up after`), so theirs is only the one the gateway enforces.

Environment: the child gets the backend's `environ`. `available_dialog` keeps from the given
environment only what a desktop dialog needs (the display and session variables, locale, PATH,
HOME, XDG, GTK/GDK/Qt/KDE and accessibility settings): a credential in the gateway's
environment never reaches the dialog. On Windows it is passed whole (PowerShell needs many
system variables), less any `AAI_CONSENT_*`. Nothing is added for GTK: in particular not
`NO_AT_BRIDGE=1`, which would cut screen readers off the dialog; tests on Xvfb set it
themselves (see tests/consent/display.py).
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import signal
import subprocess
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

import anyio
import anyio.abc

logger = logging.getLogger(__name__)

Decision = Literal["allow_once", "allow_tool", "allow_app", "deny"]
Answer = tuple[Decision, bool]
ChoiceKey = Literal["allow_once", "allow_tool", "allow_app", "deny", "deny_remember"]
BackendKind = Literal["zenity", "kdialog", "osascript", "powershell"]

DENY: Answer = ("deny", False)
EVERY_DECISION: tuple[Decision, ...] = get_args(Decision)

DEFAULT_TIMEOUT_SECONDS = 120.0
KILL_GRACE_SECONDS = 2.0
OUTPUT_LIMIT = 64 * 1024

PROMPT_HEADLINE = "An AI agent asks to use a tool through AAI Gateway."
TITLE_PREFIX = "AAI Gateway: "
FIELD_LIMIT = 80
LONG_FIELD_LIMIT = 160
TITLE_FIELD_LIMIT = 40
LABEL_APP_LIMIT = 30
WRAP_WIDTH = 96
BLOCK_INDENT = "  "
DESCRIPTION_LINES = 6
ARGUMENT_LINES = 16

_ANSWERS: dict[ChoiceKey, Answer] = {
    "allow_once": ("allow_once", False),
    "allow_tool": ("allow_tool", True),
    "allow_app": ("allow_app", True),
    "deny": ("deny", False),
    "deny_remember": ("deny", True),
}
# Left to right in zenity (whose own OK and Cancel buttons come last: Deny, then Allow once) and
# the order the other dialogs list them in.
_ORDER: tuple[ChoiceKey, ...] = ("allow_app", "allow_tool", "deny_remember", "deny", "allow_once")


@dataclass(frozen=True)
class ConsentQuestion:
    """One question: may `caller` run `tool` of an app, with these arguments?

    `offered` is what the user may answer (always including `allow_once` and `deny`: the
    consent policy's `ONCE_ONLY` or every decision); `offer_remember_deny` adds "Always deny
    this tool"."""

    caller: str
    app_name: str
    app_id: str
    source: str
    tool: str
    tool_description: str
    arguments: Mapping[str, object]
    offered: tuple[str, ...] = EVERY_DECISION
    offer_remember_deny: bool = True


@dataclass(frozen=True)
class Choice:
    key: ChoiceKey
    label: str  # as shown (one line, no control characters)

    @property
    def answer(self) -> Answer:
        return _ANSWERS[self.key]


@dataclass(frozen=True)
class Prompt:
    """What every dialog shows: a title, a text and the choices, in `_ORDER`."""

    title: str
    text: str
    choices: tuple[Choice, ...]

    def choice(self, key: str) -> Choice | None:
        return next((choice for choice in self.choices if choice.key == key), None)


@dataclass(frozen=True)
class DialogBackend:
    """A dialog program found on this machine, and the environment its child gets."""

    kind: BackendKind
    program: str  # an absolute path, or a bare name in tests
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Invocation:
    """Exactly what is started: argv (no shell) and the child's whole environment."""

    argv: tuple[str, ...]
    env: Mapping[str, str]


# --------------------------------------------------------------------------- what is shown


def _visible(char: str) -> str:
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _needs_escape(char: str) -> bool:
    return unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"}


def _escape(text: str) -> str:
    return "".join(_visible(char) if _needs_escape(char) else char for char in text)


def shown_line(value: str, limit: int = FIELD_LIMIT) -> str:
    """A one-line field as shown: invisible and line-breaking characters as escapes, at most
    `limit` characters (cut with `…`). A plain value within the limit is shown exactly."""
    escaped = _escape(value[:limit])
    if len(value) > limit or len(escaped) > limit:
        return escaped[: limit - 1] + "…"
    return escaped


def shown_block(value: str, max_lines: int, width: int = WRAP_WIDTH) -> tuple[list[str], int]:
    """A multi-line value as shown: its lines (escaped like `shown_line`, hard-wrapped at
    `width - 2` characters, each indented by two spaces), at most `max_lines` of them; and how
    many of the value's own lines were not shown in full."""
    chunk = width - len(BLOCK_INDENT)
    raw_lines = value.replace("\r\n", "\n").split("\n")
    lines: list[str] = []
    for index, raw in enumerate(raw_lines):
        room = max_lines - len(lines)
        if room <= 0:
            return lines, len(raw_lines) - index
        # Only what can be shown is escaped: a huge value costs no more than a small one.
        escaped = _escape(raw[: room * chunk])
        pieces = [escaped[start : start + chunk] for start in range(0, len(escaped), chunk)] or [""]
        lines += [BLOCK_INDENT + piece for piece in pieces[:room]]
        if len(pieces) > room or len(raw) > room * chunk:
            return lines, len(raw_lines) - index
    return lines, 0


def arguments_json(arguments: Mapping[str, object]) -> str:
    """The arguments as indented JSON (non-ASCII kept; `shown_block` escapes what must be)."""
    try:
        return json.dumps(dict(arguments), indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"(the arguments cannot be shown: {type(exc).__name__})"


def _byte_count(text: str) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{size:,} byte" + ("" if size == 1 else "s")


def build_prompt(question: ConsentQuestion) -> Prompt:
    offered = set(question.offered)
    unknown = offered - set(EVERY_DECISION)
    if unknown:
        raise ValueError(f"unknown decisions offered: {sorted(unknown)}")
    if not {"allow_once", "deny"} <= offered:
        raise ValueError("a consent question always offers allow_once and deny")
    keys: set[str] = set(offered)
    if question.offer_remember_deny:
        keys.add("deny_remember")

    app = shown_line(question.app_name)
    lines = [
        PROMPT_HEADLINE,
        "",
        f"Agent: {shown_line(question.caller)}",
        f"App: {app}",
        f"App id: {shown_line(question.app_id, LONG_FIELD_LIMIT)}",
        f"Described by: {shown_line(question.source, LONG_FIELD_LIMIT)}",
        f"Tool: {shown_line(question.tool)}",
        "What the tool does:",
    ]
    description, hidden = shown_block(question.tool_description, DESCRIPTION_LINES)
    lines += description
    if hidden:
        lines.append(f"{BLOCK_INDENT}… ({hidden} more line{'s' if hidden != 1 else ''})")
    encoded = arguments_json(question.arguments)
    arguments, hidden = shown_block(encoded, ARGUMENT_LINES)
    lines.append(f"Arguments ({_byte_count(encoded)} of JSON):")
    lines += arguments
    if hidden:
        lines.append(f"{BLOCK_INDENT}… ({hidden} more line{'s' if hidden != 1 else ''} not shown)")

    labels: dict[ChoiceKey, str] = {
        "allow_once": "Allow once",
        "allow_tool": "Always allow this tool",
        "allow_app": f"Always allow all tools of {shown_line(question.app_name, LABEL_APP_LIMIT)}",
        "deny": "Deny",
        "deny_remember": "Always deny this tool",
    }
    title = (
        f"{TITLE_PREFIX}allow {shown_line(question.tool, TITLE_FIELD_LIMIT)}"
        f" of {shown_line(question.app_name, TITLE_FIELD_LIMIT)}?"
    )
    choices = tuple(Choice(key, labels[key]) for key in _ORDER if key in keys)
    return Prompt(title=title, text="\n".join(lines), choices=choices)


# --------------------------------------------------------------------------- argv builders


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
    for choice in prompt.choices:
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
    argv += [choice.label for choice in prompt.choices]
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
$box.WordWrap = $true
$box.TabStop = $false
$box.ScrollBars = [System.Windows.Forms.ScrollBars]::Vertical
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


def build_invocation(prompt: Prompt, backend: DialogBackend, timeout_seconds: float) -> Invocation:
    env = {
        name: value
        for name, value in backend.environ.items()
        if not name.upper().startswith(POWERSHELL_ENV_PREFIX)
    }
    if backend.kind == "zenity":
        argv = zenity_argv(backend.program, prompt, timeout_seconds)
    elif backend.kind == "kdialog":
        argv = kdialog_argv(backend.program, prompt)
    elif backend.kind == "osascript":
        argv = osascript_argv(backend.program, prompt)
    else:
        argv = powershell_argv(backend.program)
        env.update(powershell_env(prompt, timeout_seconds))
    return Invocation(argv=tuple(argv), env=env)


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
        if out.isdecimal() and 1 <= int(out) <= len(prompt.choices):
            return prompt.choices[int(out) - 1].answer
        return DENY
    return _answer_of(prompt, out)  # kdialog and PowerShell print the chosen key


def _answer_of(prompt: Prompt, key: str) -> Answer:
    choice = prompt.choice(key)
    return choice.answer if choice is not None else DENY


# --------------------------------------------------------------------------- finding a dialog

_DESKTOP_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "XAUTHLOCALHOSTNAME",
        "XMODIFIERS",
        "DBUS_SESSION_BUS_ADDRESS",
        "DESKTOP_SESSION",
        "NO_AT_BRIDGE",
        "ACCESSIBILITY_ENABLED",
    }
)
_DESKTOP_PREFIXES = (
    "LC_",
    "XDG_",
    "GDK_",
    "GTK_",
    "GIO_",
    "GSETTINGS_",
    "QT_",
    "KDE_",
    "AT_SPI_",
    "FONTCONFIG_",
    "XCURSOR_",
    "__CF_",
)


def dialog_environ(environ: Mapping[str, str], platform: str) -> dict[str, str]:
    """What the dialog child inherits: on Windows everything, elsewhere the desktop's variables."""
    if _is_windows(platform):
        return {k: v for k, v in environ.items() if not k.upper().startswith(POWERSHELL_ENV_PREFIX)}
    return {k: v for k, v in environ.items() if k in _DESKTOP_NAMES or k.startswith(_DESKTOP_PREFIXES)}


def _is_windows(platform: str) -> bool:
    return platform in ("win32", "cygwin")


def find_program(names: Iterable[str], environ: Mapping[str, str], platform: str) -> str | None:
    """The first of `names` in the absolute directories of environ's PATH (never the current
    directory, nor a relative PATH entry), as an absolute path."""
    windows = _is_windows(platform)
    separator = ";" if windows else ":"
    path = environ.get("PATH") or environ.get("Path") or ("" if windows else os.defpath)
    extensions = [""]
    if windows:
        pathext = environ.get("PATHEXT") or ".COM;.EXE;.BAT;.CMD"
        extensions = [ext for ext in pathext.split(";") if ext] + [""]
    directories = [entry for entry in path.split(separator) if entry and os.path.isabs(entry)]
    for name in names:
        for directory in directories:
            for ext in extensions:
                candidate = os.path.join(directory, name + ext)
                if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                    return candidate
    return None


def available_dialog(environ: Mapping[str, str], platform: str = sys.platform) -> DialogBackend | None:
    """The native dialog this session can show, or None (no desktop session, no program)."""
    child = dialog_environ(environ, platform)
    if platform == "darwin":
        program = find_program(["osascript"], environ, platform)
        return DialogBackend("osascript", program, child) if program else None
    if _is_windows(platform):
        program = find_program(["powershell", "pwsh"], environ, platform)
        return DialogBackend("powershell", program, child) if program else None
    if not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        return None
    for kind in ("zenity", "kdialog"):
        program = find_program([kind], environ, platform)
        if program:
            return DialogBackend("zenity" if kind == "zenity" else "kdialog", program, child)
    return None


# --------------------------------------------------------------------------- asking


async def ask(
    question: ConsentQuestion, backend: DialogBackend, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> Answer:
    """Show the question and wait for the user, at most `timeout_seconds`; see the module doc."""
    prompt = build_prompt(question)
    invocation = build_invocation(prompt, backend, timeout_seconds)
    try:
        process = await anyio.open_process(
            list(invocation.argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(invocation.env),
            start_new_session=sys.platform != "win32",
        )
    except (OSError, ValueError) as exc:
        logger.warning("consent dialog %s could not start: %s", backend.kind, exc)
        return DENY
    try:
        stdout = b""
        with anyio.move_on_after(timeout_seconds):
            stdout = await _read_all(process)
            await process.wait()
        if process.returncode is None:
            logger.info("consent dialog unanswered after %ss: denied", timeout_seconds)
            return DENY
        return interpret(backend.kind, prompt, process.returncode, stdout.decode("utf-8", "replace"))
    except Exception:
        logger.exception("consent dialog %s failed: denied", backend.kind)
        return DENY
    finally:
        with anyio.CancelScope(shield=True):
            await stop_dialog(process)


async def _read_all(process: anyio.abc.Process) -> bytes:
    chunks: list[bytes] = []
    size = 0
    stream = process.stdout
    if stream is None:
        return b""
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        if size < OUTPUT_LIMIT:
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)[:OUTPUT_LIMIT]


async def stop_dialog(process: anyio.abc.Process, grace_seconds: float = KILL_GRACE_SECONDS) -> None:
    """End the dialog (its whole process group on POSIX) unless it has already exited."""
    if process.returncode is None:
        _signal(process, kill=False)
        with anyio.move_on_after(grace_seconds):
            await process.wait()
        if process.returncode is None:
            _signal(process, kill=True)
            await process.wait()
    await process.aclose()


def _signal(process: anyio.abc.Process, *, kill: bool) -> None:
    try:
        if sys.platform == "win32":
            process.kill() if kill else process.terminate()
        else:
            # The dialog leads its own session: its pid is its process group's id, and the
            # group outlives the leader only while the leader is not yet reaped (it is not).
            os.killpg(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
    except ProcessLookupError:
        pass


__all__ = [
    "ARGUMENT_LINES",
    "DEFAULT_TIMEOUT_SECONDS",
    "DENY",
    "DESCRIPTION_LINES",
    "EVERY_DECISION",
    "OSASCRIPT_LINES",
    "POWERSHELL_SCRIPT",
    "PROMPT_HEADLINE",
    "Answer",
    "BackendKind",
    "Choice",
    "ChoiceKey",
    "ConsentQuestion",
    "Decision",
    "DialogBackend",
    "Invocation",
    "Prompt",
    "arguments_json",
    "ask",
    "available_dialog",
    "build_invocation",
    "build_prompt",
    "dialog_environ",
    "find_program",
    "interpret",
    "kdialog_argv",
    "osascript_argv",
    "powershell_argv",
    "powershell_env",
    "shown_block",
    "shown_line",
    "stop_dialog",
    "zenity_argv",
    "zenity_button",
]
