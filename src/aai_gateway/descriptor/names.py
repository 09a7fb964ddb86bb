"""Localized app names: one map from BCP 47 tag to name, whatever the dialect wrote.

Dialect A and B write `"Reminders|提醒事项|Rappels"`; dialect C writes `{"en": ..., "zh-CN": ...}`
with a `defaultLang`. Lookup order (docs/aai-json.md §5): exact tag, then any tag of the same language
(`zh-TW` finds `zh-CN`), then the default language, then the first name.
"""

from __future__ import annotations

import unicodedata

from pydantic import BaseModel, ConfigDict

from .shown_text import OneLine

UNDETERMINED = "und"


class LocalizedName(BaseModel):
    model_config = ConfigDict(frozen=True)

    names: dict[str, OneLine]
    """Each name as shown: on one line, without what a reader cannot see (`shown_text.py`)."""
    default_lang: str

    def lookup(self, locale: str | None = None) -> str:
        if locale:
            wanted = normalize_tag(locale)
            for tag, name in self.names.items():
                if tag.lower() == wanted.lower():
                    return name
            language = primary_language(wanted)
            same_language = [
                (tag, name) for tag, name in self.names.items() if primary_language(tag) == language
            ]
            script = chinese_script(wanted)
            for tag, name in same_language:  # zh-HK reads zh-TW before zh-CN
                if script is not None and chinese_script(tag) == script:
                    return name
            if same_language:
                return same_language[0][1]
        if self.default_lang in self.names:
            return self.names[self.default_lang]
        return next(iter(self.names.values()))

    @property
    def primary(self) -> str:
        return self.lookup(None)

    def all_names(self) -> list[str]:
        """Every distinct name, the default first, then in the order the file gave them."""
        ordered = [self.primary, *self.names.values()]
        return list(dict.fromkeys(n for n in ordered if n))


def normalize_tag(tag: str) -> str:
    """`zh_cn.UTF-8` / `zh-cn` → `zh-CN`; POSIX locale names become BCP 47 tags."""
    base = tag.split(".", 1)[0].split("@", 1)[0].replace("_", "-")
    parts = [p for p in base.split("-") if p]
    if not parts:
        return UNDETERMINED
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 2 and part.isalpha():
            out.append(part.upper())
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())
        else:
            out.append(part)
    return "-".join(out)


_TRADITIONAL = frozenset({"HANT", "TW", "HK", "MO"})
_SIMPLIFIED = frozenset({"HANS", "CN", "SG", "MY"})


def chinese_script(tag: str) -> str | None:
    """`Hant` or `Hans` for a Chinese tag whose script or region says which; else None."""
    parts = normalize_tag(tag).split("-")
    if parts[0] != "zh":
        return None
    for part in (p.upper() for p in parts[1:]):
        if part in _TRADITIONAL:
            return "Hant"
        if part in _SIMPLIFIED:
            return "Hans"
    return None


def primary_language(tag: str) -> str:
    return normalize_tag(tag).split("-", 1)[0]


def from_tag_map(names: dict[str, str], default_lang: str) -> LocalizedName:
    return LocalizedName(names=dict(names), default_lang=default_lang)


def from_pipe_string(value: str) -> LocalizedName:
    """`"Reminders|提醒事项|Rappels"`: the first name is primary; tags are guessed from the script.

    Latin-script names after the first cannot be told apart by script alone (French or German?),
    so they get private-use tags (`und-x-alt2`); lookups by locale then fall back to the primary.
    """
    parts = [p.strip() for p in value.split("|")]
    parts = [p for p in parts if p] or [value.strip()]
    names: dict[str, str] = {}
    for position, part in enumerate(parts, start=1):
        tag = guess_tag(part, first=position == 1)
        if tag == UNDETERMINED or tag in names:
            tag = f"{UNDETERMINED}-x-alt{position}"
        names[tag] = part
    return LocalizedName(names=names, default_lang=next(iter(names)))


_SCRIPT_TAGS: tuple[tuple[str, str], ...] = (
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("HANGUL", "ko"),
    ("CJK", "zh"),
    ("CYRILLIC", "ru"),
    ("GREEK", "el"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
    ("THAI", "th"),
    ("DEVANAGARI", "hi"),
)


def guess_tag(name: str, *, first: bool) -> str:
    """A language tag from the name's script; Japanese wins over Chinese when kana appear."""
    found: set[str] = set()
    for char in name:
        if char.isascii() or not char.isalpha():  # Latin letters tell nothing (nor are looked up)
            continue
        char_name = unicodedata.name(char, "")
        for marker, tag in _SCRIPT_TAGS:
            if char_name.startswith(marker):
                found.add(tag)
                break
    for _, tag in _SCRIPT_TAGS:
        if tag in found:
            return tag
    return "en" if first else UNDETERMINED
