"""How config.toml problems describe the value they found (shared by its table readers)."""

from __future__ import annotations

from typing import Any


def shown(value: Any) -> str:
    """`value` as written in a problem: its start, if it is long (or too large to write at all)."""
    try:
        text = repr(value)
    except ValueError:  # an integer of more digits than Python writes out
        return "(too large to show)"
    return text if len(text) <= 60 else text[:60] + "…"


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"
