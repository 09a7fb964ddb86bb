"""Catalogs of HTTP apps (runnable on every host) for in-process gateway tests."""

from __future__ import annotations

import json
from typing import Any

from aai_gateway.consent.listing_config import ListingConfig
from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.discovery import Catalog, CatalogEntry
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.service import Gateway
from tests.builders import c_descriptor, trusting_gate


def http_app(
    app_id: str,
    *,
    name: str = "Test App",
    description: str | None = None,
    aliases: tuple[str, ...] = (),
    tools: list[dict[str, Any]] | None = None,
) -> AppDescriptor:
    """A loaded descriptor of an HTTP app on 127.0.0.1 (never called)."""
    document = c_descriptor(app_id, name=name, type="http", baseUrl="http://127.0.0.1:9")
    if description is not None:
        document["app"]["description"] = description
    if aliases:
        document["app"]["aliases"] = list(aliases)
    if tools is not None:
        document["tools"] = tools
    loaded = load_text(json.dumps(document), Source(kind="file", location=f"/apps/{app_id}.json"), "linux")
    assert loaded.descriptor is not None, [p.render() for p in loaded.problems]
    return loaded.descriptor


def operation(name: str, description: str, **properties: str) -> dict[str, Any]:
    """A tool with string parameters named by `properties` (name → description)."""
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {key: {"type": "string", "description": text} for key, text in properties.items()},
            "required": list(properties)[:1],
        },
    }


def many_apps(count: int) -> list[AppDescriptor]:
    """`count` apps with one operation each (copies of one loaded app under new ids: loading
    thousands of files would only slow the test)."""
    first = http_app("dev.test.app00000", name="App", description="One of many apps")
    return [first, *(first.model_copy(update={"id": f"dev.test.app{i:05d}"}) for i in range(1, count))]


def catalog_of(apps: list[AppDescriptor]) -> Catalog:
    return Catalog(entries=[CatalogEntry.of(app, "test") for app in apps])


def gateway_of(apps: list[AppDescriptor], listing: ListingConfig | None = None, **options: Any) -> Gateway:
    registry = default_registry(ExecutorSettings(environ={"PATH": "/usr/bin:/bin"}))
    return Gateway(catalog_of(apps), registry, consent=trusting_gate(), listing=listing, **options)
