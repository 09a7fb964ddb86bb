"""Builds the running gateway (catalog, executors, credentials, web discovery) from options.

This and the rest of `cli/` are the only code that reads environment variables.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from functools import cache
from pathlib import Path

import anyio
import platformdirs

from ..auth.credentials import CredentialStore
from ..auth.provider import AuthProvider
from ..auth.secrets import KeyringSecretStore, LazySecretStore, SecretStore
from ..consent.config import CONFIG_FILE_NAME, LoadedConfig, load_config
from ..consent.decision_file import FILE_NAME as DECISION_FILE_NAME
from ..consent.decision_file import DecisionFile, DecisionRecords
from ..consent.dialog import available_dialog
from ..consent.gate import ConsentGate
from ..consent.store import ConsentStore
from ..descriptor import AppDescriptor
from ..descriptor.binding import FILE_PREFIX
from ..descriptor.origin import normalize_origin
from ..discovery.card_cache import CardCache
from ..discovery.catalog import Skipped, load_file
from ..discovery.watch import CatalogWatcher
from ..discovery.web import WebFetchPolicy
from ..discovery.web_cache import WebCache
from ..discovery.web_discovery import WebDiscovery
from ..errors import UnknownAppError, UsageError
from ..executors.base import ExecutorSettings
from ..executors.defaults import default_registry
from ..service import Gateway
from .cache import cache_root, snapshot_store
from .common import chosen_platform, chosen_sources, reading_notice, user_locale

ENV_ALLOW_PRIVATE_WEB = "AAI_GATEWAY_ALLOW_PRIVATE_WEB"
ENV_CA_FILE = "AAI_GATEWAY_CA_FILE"
ENV_CONFIG = "AAI_GATEWAY_CONFIG"

logger = logging.getLogger(__name__)


def build_watcher(args: argparse.Namespace) -> CatalogWatcher:
    """The catalog and its watcher, with the descriptor cache of the cache directory: a command
    or a server start reads and checks only the descriptor files that changed since the last."""
    sources, platform = chosen_sources(args)
    cache = CardCache(cache_root(args), platform)
    return CatalogWatcher(sources, platform, snapshot_store(args), cache, on_reading=reading_notice)


@cache
def secret_store() -> SecretStore:
    """The OS keyring, opened on first use (one per process: credentials and consent share it)."""
    return LazySecretStore(KeyringSecretStore)


def credential_store() -> CredentialStore:
    return CredentialStore(secret_store())


def state_dir() -> Path:
    """The user state directory (`~/.local/state/aai-gateway` on Linux; `XDG_STATE_HOME` counts)."""
    return Path(platformdirs.user_state_dir("aai-gateway"))


def consent_store() -> ConsentStore:
    """Consent decisions: in the OS keyring, or, where none is usable, in an owner-only file in
    the user state directory (decisions are not secrets; credentials never go to a file)."""
    return ConsentStore(DecisionRecords(KeyringSecretStore, DecisionFile(state_dir() / DECISION_FILE_NAME)))


def config_path() -> Path:
    chosen = os.environ.get(ENV_CONFIG)
    return Path(chosen) if chosen else Path(platformdirs.user_config_dir("aai-gateway")) / CONFIG_FILE_NAME


def user_config() -> LoadedConfig:
    loaded = load_config(config_path())
    for problem in loaded.problems:
        logger.warning("%s", problem.render())
    return loaded


def consent_gate(loaded: LoadedConfig | None = None) -> ConsentGate:
    """The consent gate of `loaded` settings (read from config.toml when not given)."""
    return ConsentGate(
        consent_store(),
        (loaded or user_config()).config,
        dialog_backend=available_dialog(os.environ, sys.platform),
        config_path=config_path(),
    )


def web_policy() -> WebFetchPolicy:
    """The web network rules, for web discovery and for every request made for a web app (its
    API, redirects, token endpoints), and the extra CA file every HTTPS client trusts."""
    return WebFetchPolicy(
        allow_private=os.environ.get(ENV_ALLOW_PRIVATE_WEB) == "1",
        ca_file=os.environ.get(ENV_CA_FILE) or None,
    )


def web_discovery(args: argparse.Namespace, policy: WebFetchPolicy | None = None) -> WebDiscovery:
    return WebDiscovery(WebCache(cache_root(args)), policy or web_policy(), chosen_platform(args))


def executor_settings(policy: WebFetchPolicy, cache_dir: Path | None = None) -> ExecutorSettings:
    """What executors get from the environment: all of it, to find programs, buses and devices
    in; each child process gets an allow-listed few variables (`executors/programs.py`). With
    `cache_dir`, they keep there what `scan` shows of them (MCP servers' state)."""
    return ExecutorSettings(
        environ=os.environ,
        platform=sys.platform,
        ca_file=policy.ca_file,
        web_policy=policy,
        cache_dir=cache_dir,
    )


def build_gateway(args: argparse.Namespace, watcher: CatalogWatcher, *, serving: bool = False) -> Gateway:
    """The gateway of `args`; `serving`: the MCP server's, which warns of `[listing]` pins it
    cannot show (other commands leave that to `scan`, not to lines among their own output)."""
    locale = user_locale(getattr(args, "locale", None))
    policy = web_policy()
    settings = user_config()  # read once: [consent] and [listing]
    return Gateway(
        watcher.catalog,
        default_registry(executor_settings(policy, cache_root(args))),
        tool_names=getattr(args, "tool_names", "portable"),
        locale=locale,
        auth=AuthProvider(credential_store(), environ=os.environ, web_policy=policy, locale=locale),
        web=web_discovery(args, policy),
        consent=consent_gate(settings),
        snapshots=watcher.snapshots,
        listing=settings.listing,
        log_pins=serving,
    )


def app_named_by_user(gateway: Gateway, reference: str, args: argparse.Namespace) -> AppDescriptor:
    """The app a command-line reference names. Beyond what the gateway resolves, the user may
    name a descriptor file (`file:/…`) that this command's discovery does not search, or a web
    app's origin that is not cached: the commands that AUTH_REQUIRED and CONSENT_REQUIRED print
    then work as printed, whatever folders the gateway that printed them searched. (Only here:
    an agent can never make the gateway load a file or a site it names.)"""
    try:
        return gateway.resolve(reference)
    except UnknownAppError:
        wanted = reference.strip()
        if wanted.startswith(FILE_PREFIX) and os.path.isabs(path := wanted.removeprefix(FILE_PREFIX)):
            loaded = load_file(Path(path), "named on the command line", chosen_platform(args))
            if isinstance(loaded, Skipped):
                raise UsageError(f"{path} cannot be used: {loaded.reason}") from None
            return loaded.descriptor
        if not wanted.lower().startswith("https://"):
            raise
    anyio.run(gateway.web_discover, wanted)
    return gateway.resolve(normalize_origin(wanted))
