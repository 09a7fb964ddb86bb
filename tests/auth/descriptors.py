"""Dialect-C web descriptors for the credential tests, loaded the way discovery loads them."""

from __future__ import annotations

import json
from typing import Any

from aai_gateway.auth.credentials import CredentialKind
from aai_gateway.descriptor import AppDescriptor, Source, load_text

NOTION_ID = "com.notion.api"

AUTH: dict[CredentialKind, dict[str, Any]] = {
    "apiKey": {
        "type": "apiKey",
        "apiKey": {
            "location": "header",
            "name": "Authorization",
            "obtainUrl": "https://www.notion.so/my-integrations",
        },
    },
    "oauth2": {
        "type": "oauth2",
        "oauth2": {
            "authorizationEndpoint": "https://api.notion.com/v1/oauth/authorize",
            "tokenEndpoint": "https://api.notion.com/v1/oauth/token",
            "scopes": ["read"],
            "pkce": {"method": "S256"},
        },
    },
    "appCredential": {
        "type": "appCredential",
        "appCredential": {
            "tokenEndpoint": "https://api.notion.com/v1/auth/token",
            "tokenType": "tenantAccessToken",
            "expiresIn": 7200,
        },
    },
    "cookie": {
        "type": "cookie",
        "cookie": {
            "loginUrl": "https://www.notion.so/login",
            "requiredCookies": ["session"],
            "domain": ".notion.so",
        },
    },
}


def web_document(origin: str, *, app_id: str = NOTION_ID, kind: CredentialKind = "apiKey") -> dict[str, Any]:
    """A dialect-C web descriptor for `app_id` whose API is on `origin`, with auth of `kind`."""
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {
            "id": app_id,
            "name": {"en": "Notion"},
            "defaultLang": "en",
            "description": "Pages and databases",
        },
        "execution": {"type": "http", "baseUrl": f"{origin}/v1"},
        "auth": AUTH[kind],
        "tools": [
            {
                "name": "search",
                "description": "Search pages",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
                "execution": {"path": "/search", "method": "POST"},
            }
        ],
    }


def load(document: dict[str, Any], source: Source) -> AppDescriptor:
    result = load_text(json.dumps(document), source, "linux")
    assert result.descriptor is not None, result.errors
    return result.descriptor


def web_app(origin: str, *, app_id: str = NOTION_ID, kind: CredentialKind = "apiKey") -> AppDescriptor:
    """The descriptor as discovery loads it from `<origin>/.well-known/aai.json`."""
    source = Source(kind="web", location=f"{origin}/.well-known/aai.json", origin=origin)
    return load(web_document(origin, app_id=app_id, kind=kind), source)
