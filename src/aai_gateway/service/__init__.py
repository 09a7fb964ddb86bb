"""Service layer: the gateway's operations, shared by the MCP server and the CLI."""

from .gateway import UNKNOWN_CLIENT, AppEntry, Caller, Gateway

__all__ = ["UNKNOWN_CLIENT", "AppEntry", "Caller", "Gateway"]
