"""Limits of the stdio transport, apart from it so that the CLI can show them without importing
the MCP SDK (slow to import)."""

from __future__ import annotations

from typing import Final

# The SDK's own limit for one Streamable HTTP request body: a client can send nothing larger to
# an MCP server over HTTP either, and requests (tool arguments) are far smaller in practice.
DEFAULT_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
# Below this, ordinary requests (an initialize, a tools/call with some text) would not fit.
SMALLEST_MAX_MESSAGE_BYTES: Final = 64 * 1024
