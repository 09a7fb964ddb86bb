"""What an HTTP header may be, for every layer that writes one: descriptor validation (the names
and literal values of default and tool headers, an API key's header name), the HTTP executor
(values after substitution) and the auth flows (keys, cookies and tokens).

- A name is an RFC 9110 token.
- The headers that frame the message or manage the connection belong to the gateway's HTTP
  client (`GATEWAY_HEADERS`): a descriptor that set `Content-Length` or `Transfer-Encoding`
  could make the app read the body as a second request, `Host` would send the request to
  another virtual host than the URL names, and the hop-by-hop headers are the client's.
- A value holds no control character but horizontal tab, and no DEL: h11 (the HTTP/1.1 layer
  under httpx) refuses NUL, CR, LF, VT and FF, and servers refuse the others or cut the value
  there. Nor may it hold a lone surrogate, which has no UTF-8 form. Problems are described
  without quoting the value: it may be a credential.
"""

from __future__ import annotations

import re
from typing import Final

GATEWAY_HEADERS: Final = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
    }
)
_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def header_name_problem(name: str) -> str | None:
    """Why `name` cannot be a header the descriptor sets (None: it can)."""
    if not _NAME.fullmatch(name):
        return "is not a valid HTTP header name"
    if name.lower() in GATEWAY_HEADERS:
        return (
            "is set by the gateway's HTTP client itself (it frames the request or manages the "
            "connection); remove it from the descriptor"
        )
    return None


def header_value_problem(value: str) -> str | None:
    """Why `value` cannot be sent in a header (None: it can), never quoting it."""
    if _CONTROL.search(value):
        return (
            "contains a line break or another control character (CR, LF or NUL, ...; only tab "
            "is allowed), which an HTTP header cannot carry"
        )
    if _SURROGATE.search(value):
        return "contains text that is not valid Unicode (a lone surrogate), which cannot be sent"
    return None
