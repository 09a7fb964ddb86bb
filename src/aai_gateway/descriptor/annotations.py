"""What a tool's MCP annotations say, in words for people: one wording for guides and consent
questions. Fixed text only, nothing of the descriptor's own words."""

from __future__ import annotations

from .model import ToolAnnotations


def annotation_hints(annotations: ToolAnnotations) -> list[str]:
    """The declared hints in words, for guides and consent questions (fixed text: nothing of
    the descriptor's own words). Destructive and idempotent only mean something for a tool
    that is not read-only."""
    hints = []
    if annotations.read_only_hint is not None:
        hints.append("read-only" if annotations.read_only_hint else "changes data")
    if not annotations.read_only_hint and annotations.destructive_hint is not None:
        hints.append(
            "destructive: may delete or overwrite data"
            if annotations.destructive_hint
            else "not destructive: only adds data"
        )
    if not annotations.read_only_hint and annotations.idempotent_hint is not None:
        hints.append(
            "idempotent: repeating a call with the same arguments changes nothing more"
            if annotations.idempotent_hint
            else "not idempotent: repeating a call repeats its effect"
        )
    if annotations.open_world_hint is not None:
        hints.append(
            "open world: reaches outside systems such as the web"
            if annotations.open_world_hint
            else "closed world: works only on its own data"
        )
    return hints
