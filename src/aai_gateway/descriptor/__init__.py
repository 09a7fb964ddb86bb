"""Descriptor layer: canonical model, one normalizer per dialect, validation. Pure, no I/O."""

from .binding import Binding, app_reference, parse_binding
from .loader import LoadResult, detect_dialect, load_descriptor, load_document, load_text
from .model import AppDescriptor, Source, Tool
from .names import LocalizedName
from .platforms import ExecutionType, Platform, host_platform

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
