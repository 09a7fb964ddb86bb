"""Builds the running gateway (catalog, executors, credentials, web discovery) from options.

This and the rest of `cli/` are the only code that reads environment variables.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

from ..auth.credentials import CredentialStore
from ..auth.provider import AuthProvider
from ..auth.secrets import KeyringSecretStore, LazySecretStore
from ..descriptor.platforms import host_platform
from ..discovery import Layout, discovery_sources
from ..discovery.watch import CatalogWatcher
from ..discovery.web import WebFetchPolicy
from ..discovery.web_cache import WebCache
from ..discovery.web_discovery import WebDiscovery
from ..executors.defaults import default_registry
from ..service import Gateway
from .cache import cache_root
from .common import discovery_options, user_locale

ENV_ALLOW_PRIVATE_WEB = "AAI_GATEWAY_ALLOW_PRIVATE_WEB"
ENV_CA_FILE = "AAI_GATEWAY_CA_FILE"


def build_watcher(args: argparse.Namespace) -> CatalogWatcher:
    layout = Layout.for_host()
    platform = host_platform()
    if platform in ("linux", "macos", "windows"):
        layout = dataclasses.replace(layout, os=platform)
    return CatalogWatcher(discovery_sources(layout, discovery_options(args)), platform)


def credential_store() -> CredentialStore:
    return CredentialStore(LazySecretStore(KeyringSecretStore))


def web_discovery(args: argparse.Namespace) -> WebDiscovery:
    policy = WebFetchPolicy(
        allow_private=os.environ.get(ENV_ALLOW_PRIVATE_WEB) == "1",
        ca_file=os.environ.get(ENV_CA_FILE) or None,
    )
    return WebDiscovery(WebCache(cache_root(args)), policy, host_platform())


def build_gateway(args: argparse.Namespace, watcher: CatalogWatcher) -> Gateway:
    locale = user_locale(getattr(args, "locale", None))
    return Gateway(
        watcher.catalog,
        default_registry(os.environ, ca_file=os.environ.get(ENV_CA_FILE) or None),
        tool_names=getattr(args, "tool_names", "portable"),
        locale=locale,
        auth=AuthProvider(credential_store(), environ=os.environ, locale=locale),
        web=web_discovery(args),
    )
