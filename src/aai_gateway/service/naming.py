"""How apps appear in tools/list: tool names and one-line descriptions.

See docs/architecture.md, "The MCP surface".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Literal

from ..descriptor.card import AppIdentity

ToolNameStyle = Literal["portable", "colon"]
MAX_TOOL_NAME = 64
_NOT_PORTABLE = re.compile(r"[^A-Za-z0-9_-]")

WEB_DISCOVER = {"portable": "web_discover", "colon": "web:discover"}
AAI_EXEC = {"portable": "aai_exec", "colon": "aai:exec"}
AAI_SEARCH = {"portable": "aai_search", "colon": "aai:search"}
MAX_ENTRY_DESCRIPTION = 300
"""Characters of an app entry's description in tools/list. The 99 apps of the search catalog
need at most 245 (median 131); a descriptor's 100 KB description must not fill the list."""
_ENTRY_END = " Call to get guide."


def app_tool_name(app_id: str, style: ToolNameStyle = "portable") -> str:
    """`app_<id>` with characters MCP clients reject replaced by `_`, at most 64 characters
    (a long id keeps its start and gains a short hash so it stays unique)."""
    name = f"app:{app_id}" if style == "colon" else "app_" + _NOT_PORTABLE.sub("_", app_id)
    if len(name) > MAX_TOOL_NAME:
        name = name[: MAX_TOOL_NAME - 9] + "_" + _short_hash(app_id)
    return name


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def app_tool_names(app_ids: Iterable[str], style: ToolNameStyle = "portable") -> dict[str, str]:
    """Tool name per app id; ids that collide after sanitizing (`a.b` / `a_b`) all get a hash."""
    ids = list(app_ids)
    names = {app_id: app_tool_name(app_id, style) for app_id in ids}
    seen: dict[str, int] = {}
    for name in names.values():
        seen[name] = seen.get(name, 0) + 1
    for app_id, name in names.items():
        if seen[name] > 1:
            names[app_id] = name[: MAX_TOOL_NAME - 9] + "_" + _short_hash(app_id)
    return names


def app_entry_description(app: AppIdentity) -> str:
    """`【Reminders|提醒事项】Task and reminder management. Aliases: todo, 待办. Call to get guide.`

    At most `MAX_ENTRY_DESCRIPTION` characters: a longer one is cut before its last sentence,
    with `…`, and keeps that sentence."""
    names = "|".join(app.all_names)
    description = app.description.strip()
    if description and not description.endswith((".", "。", "!", "?", "！", "？")):
        description += "."
    aliases = list(dict.fromkeys(a.strip() for a in app.aliases if a.strip()))
    alias_part = f" Aliases: {', '.join(aliases)}." if aliases else ""
    text = f"【{names}】{description}{alias_part}"
    room = MAX_ENTRY_DESCRIPTION - len(_ENTRY_END)
    if len(text) > room:
        text = text[: room - 1].rstrip() + "…"
    return text + _ENTRY_END
