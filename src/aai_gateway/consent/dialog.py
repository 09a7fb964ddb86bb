"""Asking for consent with a native dialog, when the MCP client cannot ask (no elicitation).

The gateway shows the question in the desktop session it runs in: `zenity` (preferred) or
`kdialog` on Linux and other X11/Wayland systems, `osascript` on macOS, Windows PowerShell (or
`pwsh`) with a WinForms window on Windows. `available_dialog(environ, platform)` finds one, or
says there is none (a headless machine, CI); `ask(question, backend)` shows it and waits.

What is shown is built in `prompt_text`; the exact argv and environment of each program, and
how its output is read, in `dialog_programs` (every shown string is passed as data, never
spliced into script text).

The dialog runs like every program the gateway starts (`executors.process.run_program`): in a
process group of its own, which is stopped (SIGTERM, then SIGKILL after `KILL_GRACE_SECONDS`;
on Windows CTRL_BREAK, then `taskkill`) when the answer is late or `ask` is cancelled. zenity
also gets `--timeout` one second past the deadline, so a dialog left behind by a killed gateway
still closes itself; the other programs have no native timeout for a dialog with this many
choices (`choose from list` has no `giving up after`), so theirs is only the one the gateway
enforces.

Environment: the child gets the backend's `environ`. `available_dialog` keeps from the given
environment only what a desktop dialog needs (the display and session variables, locale, PATH,
HOME, XDG, GTK/GDK/Qt/KDE and accessibility settings): a credential in the gateway's
environment never reaches the dialog. On Windows it is passed whole (PowerShell needs many
system variables), less any `AAI_CONSENT_*`. Nothing is added for GTK: in particular not
`NO_AT_BRIDGE=1`, which would cut screen readers off the dialog; tests on Xvfb set it
themselves (see tests/consent/display.py).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Mapping

from ..executors.process import run_program
from ..executors.programs import find_program
from .dialog_programs import POWERSHELL_ENV_PREFIX, DialogBackend, dialog_command, interpret
from .prompt_text import DENY, Answer, ConsentQuestion, build_prompt

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 120.0
KILL_GRACE_SECONDS = 2.0
OUTPUT_LIMIT = 64 * 1024


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


def find_dialog_program(names: Iterable[str], environ: Mapping[str, str], platform: str) -> str | None:
    """The first of `names` on environ's PATH (absolute folders only), as an absolute path."""
    for name in names:
        found, _ = find_program(name, environ, platform=platform)
        if found is not None:
            return found
    return None


def available_dialog(environ: Mapping[str, str], platform: str = sys.platform) -> DialogBackend | None:
    """The native dialog this session can show, or None (no desktop session, no program)."""
    child = dialog_environ(environ, platform)
    if platform == "darwin":
        program = find_dialog_program(["osascript"], environ, platform)
        return DialogBackend("osascript", program, child) if program else None
    if _is_windows(platform):
        program = find_dialog_program(["powershell", "pwsh"], environ, platform)
        return DialogBackend("powershell", program, child) if program else None
    if not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        return None
    for kind in ("zenity", "kdialog"):
        program = find_dialog_program([kind], environ, platform)
        if program:
            return DialogBackend("zenity" if kind == "zenity" else "kdialog", program, child)
    return None


# --------------------------------------------------------------------------- asking


async def ask(
    question: ConsentQuestion, backend: DialogBackend, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> Answer:
    """Show the question and wait for the user, at most `timeout_seconds`; see the module doc."""
    prompt = build_prompt(question)
    command = dialog_command(prompt, backend, timeout_seconds)
    try:
        run = await run_program(
            command.argv,
            env=command.env,
            timeout=timeout_seconds,
            max_stdout=OUTPUT_LIMIT,
            keep_stderr=0,
            grace=KILL_GRACE_SECONDS,
        )
    except (OSError, ValueError) as exc:
        logger.warning("consent dialog %s could not start: %s", backend.kind, exc)
        return DENY
    except Exception:
        logger.exception("consent dialog %s failed: denied", backend.kind)
        return DENY
    if run.timed_out:
        logger.info("consent dialog unanswered after %ss: denied", timeout_seconds)
        return DENY
    if run.returncode is None:
        logger.warning("consent dialog %s printed more than %d bytes: denied", backend.kind, OUTPUT_LIMIT)
        return DENY
    return interpret(backend.kind, prompt, run.returncode, run.stdout_text)


__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "KILL_GRACE_SECONDS",
    "ask",
    "available_dialog",
    "dialog_environ",
    "find_dialog_program",
]
