"""HTML of the one-time credential page (see `credential_page.py`).

Plain, self-contained pages: inline CSS only (allowed by a hash in the Content-Security-Policy),
no scripts, no external assets, usable with JavaScript off and with a screen reader. Every string
that comes from a descriptor (names, ids, instructions, URLs) is untrusted and HTML-escaped here;
URLs become links only when they are http(s).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from urllib.parse import urlsplit

from ..descriptor.model import ApiKeyAuth, AppCredentialAuth, CookieAuth, Instructions

PageAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth

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

KEYRING_NOTE = (
    "What you enter here goes straight to your operating system's keyring (Keychain, Credential "
    "Manager or Secret Service), bound to this app and to where its description came from. It is "
    "never sent to the AI agent, never shown in the chat and never written to logs."
)


@dataclass(frozen=True)
class FieldError:
    """A problem with the submitted form; `field` is the id of the input it belongs to, if any."""

    message: str
    field: str | None = None


@dataclass(frozen=True)
class FormView:
    app_name: str
    app_id: str
    source: str
    lang: str
    action: str
    csrf: str
    auth: PageAuth
    errors: Sequence[FieldError] = ()
    keep: dict[str, str] = field(default_factory=dict)  # non-secret values to show again


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


def what_is_asked(auth: PageAuth) -> str:
    if isinstance(auth, ApiKeyAuth):
        return "an API key"
    if isinstance(auth, AppCredentialAuth):
        return "an App ID and App Secret"
    return "sign-in cookies"


def _instructions(instructions: Instructions | None) -> list[str]:
    if instructions is None:
        return []
    parts = [f"<p>{_e(instructions.short)}</p>"]
    if instructions.detailed:
        parts.append(f'<p class="detailed">{_e(instructions.detailed)}</p>')
    if instructions.help_url:
        parts.append(f"<p>Help: {link(instructions.help_url)}</p>")
    if instructions.screenshot_url:
        parts.append(f"<p>Screenshot: {link(instructions.screenshot_url)}</p>")
    return parts


def _how_to(auth: PageAuth) -> str:
    parts: list[str] = []
    if isinstance(auth, ApiKeyAuth) and auth.obtain_url:
        parts.append(f"<p>Get a key at {link(auth.obtain_url)}.</p>")
    if isinstance(auth, CookieAuth):
        parts.append(
            f"<p>Sign in at {link(auth.login_url)} in this browser, then copy the cookies of "
            f"<code>{_e(auth.domain)}</code> from the browser's developer tools "
            "(Application or Storage tab, or the <code>Cookie</code> request header).</p>"
        )
    parts.extend(_instructions(auth.instructions))
    if not parts:
        return ""
    return (
        '<section aria-labelledby="how">\n<h2 id="how">Where to get it</h2>\n'
        + "\n".join(parts)
        + "\n</section>"
    )


def _errors(errors: Sequence[FieldError]) -> str:
    if not errors:
        return ""
    items = "\n".join(
        f'<li><a href="#{_e(e.field)}">{_e(e.message)}</a></li>' if e.field else f"<li>{_e(e.message)}</li>"
        for e in errors
    )
    return (
        '<div class="errors" role="alert" aria-labelledby="errors-title" tabindex="-1">\n'
        '<h2 id="errors-title">Nothing was saved. Please fix this:</h2>\n'
        f"<ul>\n{items}\n</ul>\n</div>"
    )


def _input(
    view: FormView,
    field_id: str,
    label: str,
    *,
    secret: bool,
    hint: str | None = None,
    required: bool = False,
) -> str:
    errors = [e for e in view.errors if e.field == field_id]
    described = [f"{field_id}-hint"] if hint else []
    described += [f"{field_id}-error"] if errors else []
    attrs = [
        f'id="{field_id}"',
        f'name="{field_id}"',
        f'type="{"password" if secret else "text"}"',
        'autocomplete="off"',
        'autocapitalize="off"',
        'spellcheck="false"',
    ]
    if not secret and field_id in view.keep:  # secrets are never echoed back into the page
        attrs.append(f'value="{_e(view.keep[field_id])}"')
    if required:
        attrs.append("required")
    if errors:
        attrs.append('aria-invalid="true"')
    if described:
        attrs.append(f'aria-describedby="{" ".join(described)}"')
    html = [f'<div class="field">\n<label for="{field_id}">{label}</label>', f"<input {' '.join(attrs)}>"]
    if hint:
        html.append(f'<span class="hint" id="{field_id}-hint">{hint}</span>')
    if errors:
        message = " ".join(_e(e.message) for e in errors)
        html.append(f'<span class="hint" id="{field_id}-error"><strong>{message}</strong></span>')
    html.append("</div>")
    return "\n".join(html)


def cookie_field_id(index: int) -> str:
    return f"cookie_{index}"


COOKIE_HEADER_FIELD = "cookie_header"
API_KEY_FIELD = "api_key"
APP_ID_FIELD = "app_id"
APP_SECRET_FIELD = "app_secret"  # noqa: S105 (a field name)
CSRF_FIELD = "csrf"


def _fields(view: FormView) -> str:
    auth = view.auth
    if isinstance(auth, ApiKeyAuth):
        where = (
            f"the <code>{_e(auth.name)}</code> {'header' if auth.location == 'header' else 'query parameter'}"
        )
        hint = f"Paste the key only; the gateway sends it in {where}"
        hint += f" with the <code>{_e(auth.prefix)}</code> prefix." if auth.prefix else "."
        return _input(view, API_KEY_FIELD, "API key", secret=True, hint=hint, required=True)
    if isinstance(auth, AppCredentialAuth):
        return "\n".join(
            [
                _input(view, APP_ID_FIELD, "App ID", secret=False, required=True),
                _input(view, APP_SECRET_FIELD, "App Secret", secret=True, required=True),
            ]
        )
    header = _input(
        view,
        COOKIE_HEADER_FIELD,
        "Cookie header",
        secret=True,
        hint="Either paste the whole header, like <code>name=value; name2=value2</code>, "
        "or fill in each cookie below. Other cookies in the header are kept too.",
    )
    per_cookie = "\n".join(
        _input(view, cookie_field_id(i), f"Value of cookie <code>{_e(name)}</code>", secret=True)
        for i, name in enumerate(auth.required_cookies)
    )
    return f"{header}\n<fieldset>\n<legend>Required cookies, one by one</legend>\n{per_cookie}\n</fieldset>"


def source_text(kind: str, location: str, origin: str | None) -> str:
    if kind == "web":
        return f"the web site {origin or location}"
    if kind == "bundled":
        return "bundled with AAI Gateway"
    if kind == "file":
        return f"the local file {location}"
    return location


def render_form(view: FormView) -> str:
    asked = what_is_asked(view.auth)
    name = _e(view.app_name)
    facts = [
        ("App", name),
        ("App id", f"<code>{_e(view.app_id)}</code>"),
        ("Description from", _e(view.source)),
    ]
    if isinstance(view.auth, CookieAuth):
        facts.append(("Cookies for", f"<code>{_e(view.auth.domain)}</code>"))
        required = ", ".join(f"<code>{_e(c)}</code>" for c in view.auth.required_cookies)
        facts.append(("Required cookies", required or "none"))
    fact_list = "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    body = "\n".join(
        part
        for part in (
            f"<h1>Connect {name} to AAI Gateway</h1>",
            f"<p>An AI agent asked AAI Gateway to use <strong>{name}</strong>. "
            f"To continue, the gateway needs {asked} for it.</p>",
            f'<dl class="facts">\n{fact_list}\n</dl>',
            _how_to(view.auth),
            _errors(view.errors),
            f'<form method="post" action="{_e(view.action)}" '
            'enctype="application/x-www-form-urlencoded" autocomplete="off">',
            f'<input type="hidden" name="{CSRF_FIELD}" value="{_e(view.csrf)}">',
            _fields(view),
            '<button type="submit">Save to keyring</button>',
            "</form>",
            f'<p class="note">{KEYRING_NOTE} This page works once and closes itself after saving.</p>',
        )
        if part
    )
    return document(f"Connect {view.app_name} — AAI Gateway", view.lang, body)


def render_message(title: str, text: str, lang: str = "en", *, ok: bool = False) -> str:
    css = ' class="ok"' if ok else ""
    return document(f"{title} — AAI Gateway", lang, f"<h1{css}>{_e(title)}</h1>\n<p>{_e(text)}</p>")
