"""What every one-time local page is made of: the stylesheet, the HTML document around a body,
escaping, links, the form error type and the CSRF field (`local_page.py` serves the pages).

Plain, self-contained pages: inline CSS only (allowed by a hash in the Content-Security-Policy),
no scripts, no external assets, usable with JavaScript off and with a screen reader. Every string
that comes from a descriptor, an agent or an app is untrusted and HTML-escaped by the page that
shows it; URLs become links only when they are http(s).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from html import escape
from urllib.parse import urlsplit

CSRF_FIELD = "csrf"

STYLE = """
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fafafa; --muted: #55555f; --line: #c8c8d0;
  --accent: #1f5fbf; --error-bg: #fde8e8; --error-fg: #8a1111; --ok: #136c2e; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #17171b; --muted: #a9a9b5;
  --line: #44444f; --accent: #8ab4ff; --error-bg: #3d1717; --error-fg: #ffb4b4; --ok: #7ddc96; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
main { max-width: 40rem; margin: 0 auto; padding: 2rem 1.25rem 3rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 .75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.75rem 0 .5rem; }
a { color: var(--accent); overflow-wrap: anywhere; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 1rem 0;
  padding: .75rem 1rem; border: 1px solid var(--line); border-radius: .5rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-x: auto; }
.whole, .word { white-space: nowrap; }
.detailed { white-space: pre-line; }
.errors { border: 2px solid var(--error-fg); background: var(--error-bg); color: var(--error-fg);
  border-radius: .5rem; padding: .75rem 1rem; margin: 1rem 0; }
.errors h2 { margin: 0 0 .25rem; font-size: 1rem; }
.errors ul { margin: 0; padding-left: 1.25rem; }
form { margin: 1.5rem 0; }
fieldset { border: 1px solid var(--line); border-radius: .5rem; margin: 0 0 1rem; padding: .75rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.field { margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin-bottom: .25rem; overflow-wrap: anywhere; }
.hint { display: block; color: var(--muted); font-size: .9rem; margin-top: .25rem; }
input[type=text], input[type=password] { width: 100%; padding: .55rem .65rem; font: inherit;
  color: inherit; background: transparent; border: 1px solid var(--line); border-radius: .35rem; }
input[aria-invalid=true] { border: 2px solid var(--error-fg); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--accent);
  outline-offset: 2px; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; border: 0; border-radius: .35rem;
  color: #fff; background: #1f5fbf; cursor: pointer; }
button.secondary { color: var(--fg); background: transparent; border: 1px solid var(--line); }
button.deny { background: #8a1111; }
.choices { display: flex; flex-wrap: wrap; gap: .5rem; margin: 1rem 0; }
pre.block { white-space: pre-wrap; overflow-x: auto; margin: .25rem 0 1rem; padding: .75rem 1rem;
  border: 1px solid var(--line); border-radius: .5rem;
  font: .9rem/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.note { color: var(--muted); font-size: .95rem; }
.ok { color: var(--ok); }
""".strip()

STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")
"""The CSP source allowing exactly the inline stylesheet above and nothing else."""


@dataclass(frozen=True)
class FieldError:
    """A problem with the submitted form; `field` is the id of the input it belongs to, if any."""

    message: str
    field: str | None = None


def escape_html(text: str) -> str:
    return escape(text, quote=True)


_e = escape_html


def is_web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def link(url: str, text: str | None = None) -> str:
    """An external link that opens in a new tab and carries no referrer; plain text if not http(s)."""
    label = _e(text if text is not None else url)
    if not is_web_url(url):
        return f"<code>{_e(url)}</code>" if text is None else f"{label} (<code>{_e(url)}</code>)"
    return f'<a href="{_e(url)}" target="_blank" rel="noopener noreferrer">{label}</a>'


def document(title: str, lang: str, body: str) -> str:
    return (
        "<!doctype html>\n"
        f'<html lang="{_e(lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="same-origin">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n</body>\n</html>\n"
    )


def render_message(title: str, text: str, lang: str = "en", *, ok: bool = False) -> str:
    css = ' class="ok"' if ok else ""
    return document(f"{title} — AAI Gateway", lang, f"<h1{css}>{_e(title)}</h1>\n<p>{_e(text)}</p>")
