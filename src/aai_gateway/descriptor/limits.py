"""Limits on what a descriptor file may be, shared by the loader and by what reads files or
wire values without loading them (the scanner, MCP tool lists)."""

from typing import Final

MAX_DESCRIPTOR_BYTES: Final = 4 * 1024 * 1024
MAX_NESTING: Final = 64
"""How deep JSON values may nest in a descriptor or in what an MCP server lists."""
