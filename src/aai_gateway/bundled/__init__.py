"""Descriptors shipped with the gateway (dialect C `aai.json` files, one per app).

Discovery reads every `*.json` here as the `bundled` source: GitHub (`com.github.api.json`) and
Notion (`com.notion.api.json`), both web apps reached over their REST APIs with an API key.
"""
