"""Service layer: the gateway's operations, shared by the MCP server and the CLI."""

from .app_entries import AppEntry, Listing
from .gateway import Caller, Gateway

__all__ = ["AppEntry", "Caller", "Gateway", "Listing"]
