"""Service layer: the gateway's operations, shared by the MCP server and the CLI."""

from .gateway import AppEntry, Caller, Gateway

__all__ = ["AppEntry", "Caller", "Gateway"]
