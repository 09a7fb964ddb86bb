"""Where a descriptor came from — its *binding* — defined once (docs/architecture.md).

Credentials, consent decisions, the web descriptor cache and app resolution all use this one
definition, so a site that claims another app's id is never mistaken for it:

| kind | text form | what it is |
|---|---|---|
| web | `https://host[:port]` | the origin the descriptor was fetched from (scheme, host, port) |
| file | `file:/absolute/path/aai.json` | a descriptor file on this machine |
| bundled | `bundled` | shipped with the gateway |

The text form is what the keyring keys and consent records store and what `--source` takes.
An app *reference* names one app exactly: the origin for a web app, `file:/path` for a file,
`bundled:<id>` for a bundled app (`app_reference`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final, Literal

from ..errors import AaiError, UsageError
from .origin import normalize_origin

BindingKind = Literal["web", "file", "bundled"]
BUNDLED: Final = "bundled"
FILE_PREFIX: Final = "file:"
BUNDLED_PREFIX: Final = "bundled:"


@dataclass(frozen=True, slots=True)
class Binding:
    kind: BindingKind
    location: str = ""  # the origin (web), the absolute path (file); empty when bundled

    def __str__(self) -> str:
        if self.kind == "web":
            return self.location
        if self.kind == "file":
            return FILE_PREFIX + self.location
        return BUNDLED

    @property
    def is_local(self) -> bool:
        """A descriptor from this machine (a file, or bundled with the gateway), not the web."""
        return self.kind != "web"

    def describe(self) -> str:
        """For people: `the web origin https://x`, `the file /a/aai.json`, `bundled with the gateway`."""
        if self.kind == "web":
            return f"the web origin {self.location}"
        if self.kind == "file":
            return f"the file {self.location}"
        return "bundled with the gateway"


def binding_for(kind: str, location: str, origin: str | None) -> Binding:
    """The binding of a descriptor source (`Source.kind`, `.location`, `.origin`). A web source
    is bound to its origin (the location's, when no origin was recorded; discovery records only
    normalized origins, anything else is kept as written); an in-memory (`inline`) source counts
    as a file named by its location."""
    if kind == "web":
        written = origin or location
        try:
            return Binding("web", normalize_origin(written))
        except AaiError:
            return Binding("web", written)
    if kind == "bundled":
        return Binding("bundled")
    return Binding("file", location)


def parse_binding(text: str) -> Binding:
    """`bundled`, `file:/absolute/path` or an https origin, as the text form writes them;
    INVALID_REQUEST saying which forms exist for anything else."""
    value = text.strip()
    if value == BUNDLED:
        return Binding("bundled")
    if value.startswith(FILE_PREFIX):
        path = value.removeprefix(FILE_PREFIX)
        if not os.path.isabs(path):
            raise _invalid(f"{text!r}: the file must be an absolute path (file:/…)", text)
        return Binding("file", os.path.abspath(path))
    if value.lower().startswith("https://"):
        return Binding("web", normalize_origin(value))
    raise _invalid(
        f"{text!r} is not a descriptor source: write file:/absolute/path, bundled or https://origin", text
    )


def app_reference(binding: Binding, app_id: str) -> str:
    """The reference that names exactly the app of `app_id` described there."""
    if binding.kind == "bundled":
        return BUNDLED_PREFIX + app_id
    return str(binding)


def _invalid(message: str, text: str) -> AaiError:
    return UsageError(message, source=text)
