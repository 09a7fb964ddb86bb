"""Builds the running gateway (catalog, executors, service) from command-line options."""

from __future__ import annotations

import argparse
import dataclasses
import os

from ..descriptor.platforms import host_platform
from ..discovery import Layout, discovery_sources
from ..discovery.watch import CatalogWatcher
from ..executors.defaults import default_registry
from ..service import Gateway
from .common import discovery_options, user_locale


def build_watcher(args: argparse.Namespace) -> CatalogWatcher:
    layout = Layout.for_host()
    platform = host_platform()
    if platform in ("linux", "macos", "windows"):
        layout = dataclasses.replace(layout, os=platform)
    return CatalogWatcher(discovery_sources(layout, discovery_options(args)), platform)


def build_gateway(args: argparse.Namespace, watcher: CatalogWatcher) -> Gateway:
    return Gateway(
        watcher.catalog,
        default_registry(os.environ),
        tool_names=getattr(args, "tool_names", "portable"),
        locale=user_locale(getattr(args, "locale", None)),
    )
