"""Small conversions more than one dialect needs."""

from __future__ import annotations

import re
from typing import Any

_NOT_PATH_CHAR = re.compile(r"[^A-Za-z0-9_]")


def upper_if_str(value: Any) -> Any:
    """HTTP methods are accepted in any case and stored upper-case."""
    return value.upper() if isinstance(value, str) else value


def derived_dbus_names(service: str, object_path: str | None, interface: str | None) -> tuple[str, str, str]:
    """Fill a missing object path / interface from the service name, the usual DBus convention:
    `org.example.Mail` → `/org/example/Mail` and interface `org.example.Mail`."""
    if object_path is None:
        object_path = "/" + "/".join(_NOT_PATH_CHAR.sub("_", part) or "_" for part in service.split("."))
    return service, object_path, interface or service.replace("-", "_")
