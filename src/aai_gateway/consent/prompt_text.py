"""What a consent question shows, whatever asks it (a native dialog, the terminal).

What is shown (`build_prompt`): the caller, the app's name, id and source (web origin,
`bundled`, `file:…`), the tool, its description and the call's arguments as indented JSON.
One-line fields show control, format (bidi overrides, zero-width, tag characters), surrogate
and line/paragraph-separator characters as visible escapes (`\\n`, `\\u202e`, …), so a value
cannot fake a line of the prompt or reorder it; the description and the JSON keep their line
breaks but every line of them is indented by two spaces. The gateway wraps every line itself at
`WRAP_WIDTH` columns (continuations indented too) and zenity gets `--no-wrap`: a toolkit that
wrapped a long line at a space would start its rest at the left edge, where only the gateway's
own labels may stand. Lines break only at spaces (or next to Chinese/Japanese characters): a
word or a path is never broken in the middle; one longer than a line stands whole on a line of
its own. Long names are cut with `…` (the source, a path or an origin, is shown whole); at
most `DESCRIPTION_LINES` and
`ARGUMENT_LINES` lines are shown, then how much was left out; the arguments' full size in bytes
is always shown.

An answer is `(decision, remember)`: decision one of `allow_once`, `allow_tool`, `allow_app`,
`deny`; remember is True for the "always" choices (allow this tool, allow every tool of the app,
deny this tool) and False otherwise. A timeout, a closed window, a dialog that cannot start,
any output that is not one of the offered choices, or an error → `("deny", False)`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

Decision = Literal["allow_once", "allow_tool", "allow_app", "deny"]
Answer = tuple[Decision, bool]
# Gets an answer given after the call that asked has ended (the consent page); may return a note
# for the user, e.g. that the OS keyring could not keep it.
Answered = Callable[[Answer], Awaitable[str | None]]
ChoiceKey = Literal["allow_once", "allow_tool", "allow_app", "deny", "deny_remember"]

DENY: Answer = ("deny", False)
EVERY_DECISION: tuple[Decision, ...] = get_args(Decision)

PROMPT_HEADLINE = "An AI agent asks to use a tool through AAI Gateway."
TITLE_PREFIX = "AAI Gateway: "
FIELD_LIMIT = 80
LONG_FIELD_LIMIT = 160
SOURCE_LIMIT = 4096  # a descriptor's path or origin is shown whole (paths are at most PATH_MAX)
TITLE_FIELD_LIMIT = 40
LABEL_APP_LIMIT = 24
WRAP_WIDTH = 70
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
# Buttons, left to right (zenity's own Cancel and OK come last: Deny, then Allow once); lists
# (kdialog, osascript) read top down.
_ORDER: tuple[ChoiceKey, ...] = ("allow_app", "allow_tool", "deny_remember", "deny", "allow_once")
_LIST_ORDER: tuple[ChoiceKey, ...] = ("allow_once", "allow_tool", "allow_app", "deny", "deny_remember")


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
    tool_hints: tuple[str, ...] = ()
    """What the app declares about the tool (MCP annotations, `descriptor.annotations.annotation_hints`)."""


@dataclass(frozen=True)
class Choice:
    key: ChoiceKey
    label: str  # as shown (one line, no control characters)

    @property
    def answer(self) -> Answer:
        return _ANSWERS[self.key]


@dataclass(frozen=True)
class Prompt:
    """What every dialog shows: a title, a text and the choices (as buttons, in `_ORDER`)."""

    title: str
    text: str
    choices: tuple[Choice, ...]

    def choice(self, key: str) -> Choice | None:
        return next((choice for choice in self.choices if choice.key == key), None)

    @property
    def listed(self) -> tuple[Choice, ...]:
        """The choices in the order a list shows them: allows first, then denials."""
        return tuple(sorted(self.choices, key=lambda choice: _LIST_ORDER.index(choice.key)))


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


def columns(char: str) -> int:
    """Columns a character takes: 2 for East Asian wide and fullwidth ones, else 1."""
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _may_break_between(before: str, after: str) -> bool:
    """Whether a line may end between two characters with no space between them: next to a wide
    (Chinese, Japanese) character, as Unicode line breaking allows in text without spaces."""
    return columns(before) == 2 or columns(after) == 2


def wrap_words(text: str, first: int, width: int) -> list[str]:
    """`text` in lines of at most `first` columns (the first line) and `width` columns (the
    others), broken only where a line may break: at spaces (a break swallows them) and next to
    wide characters. A word or a path longer than a line is never cut: it stands whole on a
    line of its own. Leading spaces (indentation) stay on the first line; an empty text is one
    empty line."""
    lines: list[str] = []
    line, used, room = "", 0, first
    gap = ""  # spaces seen since the last word: written only if the next word fits after them
    word, word_used = "", 0

    def place() -> None:
        nonlocal line, used, room, gap, word, word_used
        if not word:
            return
        needed = sum(map(columns, gap)) + word_used
        if line.strip() and used + needed > room:
            lines.append(line)
            line, used, room, gap = "", 0, width, ""
            needed = word_used
        line, used = line + gap + word, used + needed
        gap, word, word_used = "", "", 0

    indent = len(text) - len(text.lstrip(" "))
    line, used = text[:indent], indent
    previous = ""
    for char in text[indent:]:
        if char == " ":
            place()
            gap += char
        else:
            if word and _may_break_between(previous, char):
                place()
            word, word_used = word + char, word_used + columns(char)
        previous = char
    place()
    lines.append(line)
    return lines


def shown_block(value: str, max_lines: int, width: int = WRAP_WIDTH) -> tuple[list[str], int]:
    """A multi-line value as shown: its lines (escaped like `shown_line`, hard-wrapped at
    `width - 2` columns, each indented by two spaces), at most `max_lines` of them; and how
    many of the value's own lines were not shown in full."""
    chunk = width - len(BLOCK_INDENT)
    raw_lines = value.replace("\r\n", "\n").split("\n")
    lines: list[str] = []
    for index, raw in enumerate(raw_lines):
        room = max_lines - len(lines)
        if room <= 0:
            return lines, len(raw_lines) - index
        # Only what can be shown is escaped: a huge value costs no more than a small one.
        pieces = wrap_words(_escape(raw[: room * chunk]), chunk, chunk)
        lines += [BLOCK_INDENT + piece for piece in pieces[:room]]
        if len(pieces) > room or len(raw) > room * chunk:
            return lines, len(raw_lines) - index
    return lines, 0


def field_lines(name: str, value: str, limit: int = FIELD_LIMIT, width: int = WRAP_WIDTH) -> list[str]:
    """`name: value` as shown: the value as `shown_line` shows it, wrapped at spaces so that no
    line is wider than `width` columns unless one word alone is; continuation lines are
    indented by two spaces."""
    prefix = f"{name}: "
    first, *rest = wrap_words(shown_line(value, limit), width - len(prefix), width - len(BLOCK_INDENT))
    return [prefix + first, *(BLOCK_INDENT + piece for piece in rest)]


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

    lines = [
        PROMPT_HEADLINE,
        "",
        *field_lines("Agent", question.caller),
        *field_lines("App", question.app_name),
        *field_lines("App id", question.app_id, LONG_FIELD_LIMIT),
        *field_lines("Described by", question.source, SOURCE_LIMIT),
        *field_lines("Tool", question.tool),
        "What the tool does:",
    ]
    description, hidden = shown_block(question.tool_description, DESCRIPTION_LINES)
    lines += description
    if hidden:
        lines.append(f"{BLOCK_INDENT}… ({hidden} more line{'s' if hidden != 1 else ''})")
    if question.tool_hints:
        lines.append("The app declares (hints, not guarantees):")
        lines += [f"{BLOCK_INDENT}{hint}" for hint in question.tool_hints]
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
