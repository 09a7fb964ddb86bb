"""HTML of the one-time credential page's form (`credential_page.py` serves it).

Built from the parts every local page shares (pages/html.py). Every string that comes from a
descriptor (names, ids, instructions, URLs) is untrusted and HTML-escaped here; URLs become links
only when they are http(s); secrets are never written back into the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, CookieAuth, Instructions
from ..pages.html import CSRF_FIELD, FieldError, document, link
from ..pages.html import escape_html as _e

PageAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth

KEYRING_NOTE = (
    "What you enter here goes straight to your operating system's keyring (Keychain, Credential "
    "Manager or Secret Service), bound to this app and to where its description came from. It is "
    "never sent to the AI agent, never shown in the chat and never written to logs."
)


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
