"""AAI Gateway: an MCP server that exposes aai.json-described applications to agents."""

__version__ = "0.1.0"
