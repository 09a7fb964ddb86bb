"""Discovery layer: where descriptors live, reading them, and the catalog of usable apps."""

from .catalog import Catalog, CatalogEntry, Skipped, SourceReport, build_catalog, load_file
from .sources import DiscoveryOptions, Layout, SourceSpec, discovery_sources, paths_from_env

__all__ = [
    "Catalog",
    "CatalogEntry",
    "DiscoveryOptions",
    "Layout",
    "Skipped",
    "SourceReport",
    "SourceSpec",
    "build_catalog",
    "discovery_sources",
    "load_file",
    "paths_from_env",
]
