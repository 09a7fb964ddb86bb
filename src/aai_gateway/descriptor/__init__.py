"""Descriptor layer: canonical model, one normalizer per dialect, validation. Pure, no I/O.

The loader (`loader.py`, with the dialects' models) is imported when first used: a start whose
descriptors all come from the card cache never needs it."""

from typing import TYPE_CHECKING, Any

from .binding import Binding, app_reference, parse_binding
from .model import AppDescriptor, Source, Tool
from .names import LocalizedName
from .platforms import ExecutionType, Platform, host_platform

if TYPE_CHECKING:
    from .loader import LoadResult, detect_dialect, load_descriptor, load_document, load_text

_FROM_LOADER = frozenset({"LoadResult", "detect_dialect", "load_descriptor", "load_document", "load_text"})


def __getattr__(name: str) -> Any:
    if name in _FROM_LOADER:
        from . import loader  # noqa: PLC0415

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AppDescriptor",
    "Binding",
    "ExecutionType",
    "LoadResult",
    "LocalizedName",
    "Platform",
    "Source",
    "Tool",
    "app_reference",
    "detect_dialect",
    "host_platform",
    "load_descriptor",
    "load_document",
    "load_text",
    "parse_binding",
]
