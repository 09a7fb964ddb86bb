"""A one-time local web page where the user enters a secret for an app, out of the agent's sight.

When a tool call needs an API key, an App ID + Secret or sign-in cookies that the user has not
stored yet, the MCP server sends the client a URL-mode elicitation pointing here instead of asking
in the chat (form-mode elicitation must never carry secrets). The user opens the link, pastes the
secret, submits; the page saves it in the credential store (the OS keyring) and shuts down.

    page = CredentialPage(app, auth, store, locale="en")
    async with page.serve() as url:        # http://127.0.0.1:<port>/c/<token>
        ...                                 # send `url` to the client as a URL elicitation
        credential = await page.wait()      # the saved Credential, or TimeoutError

The defences of every local page (token, Host, CSRF, Origin, strict headers) are in
`pages/local_page.py`. Here, besides: descriptor strings are HTML-escaped, their URLs become links
only when they are http(s), and submitted values never reach logs, error messages or
re-rendered pages.
"""

from __future__ import annotations

import logging
from typing import ClassVar

import anyio
from starlette.responses import Response

from ..descriptor.model import AppDescriptor
from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, CookieAuth
from ..descriptor.names import normalize_tag
from ..errors import AaiError
from ..pages.html import FieldError
from ..pages.local_page import LocalPage
from . import credential_form as form_html
from .credential_form import PageAuth
from .credentials import Credential, CredentialKind, CredentialStore

logger = logging.getLogger(__name__)


def _kind(auth: PageAuth) -> CredentialKind:
    if isinstance(auth, ApiKeyAuth):
        return "apiKey"
    if isinstance(auth, AppCredentialAuth):
        return "appCredential"
    return "cookie"


def _has_control_chars(value: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


_COOKIE_NAME_SEPARATORS = frozenset('()<>@,;:\\"/[]?={} \t')


def _valid_cookie_name(name: str) -> bool:
    return bool(name) and not _has_control_chars(name) and not (set(name) & _COOKIE_NAME_SEPARATORS)


def _valid_cookie_value(value: str) -> bool:
    return not _has_control_chars(value) and ";" not in value and "," not in value


def parse_cookie_header(text: str) -> tuple[dict[str, str], list[str]]:
    """`name=value; name2=value2` (optionally starting with `Cookie:`) → cookies and problems.

    Problems describe positions, never values: they are shown to the user and may be logged.
    """
    text = text.strip()
    if text[:7].lower() == "cookie:":
        text = text[7:]
    cookies: dict[str, str] = {}
    problems: list[str] = []
    for position, raw in enumerate(text.split(";"), start=1):
        part = raw.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _valid_cookie_name(name):
            problems.append(f"Part {position} of the cookie header is not name=value.")
            continue
        if not _valid_cookie_value(value):
            problems.append(f"The value of part {position} of the cookie header has a forbidden character.")
            continue
        cookies[name] = value
    return cookies, problems


class CredentialPage(LocalPage[Credential]):
    """Serve one page, once, that asks the user for one app's secret and stores it."""

    path_prefix: ClassVar[str] = "/c/"
    kind: ClassVar[str] = "credential page"

    def __init__(
        self,
        app: AppDescriptor,
        auth: PageAuth,
        store: CredentialStore,
        *,
        locale: str | None = None,
        timeout_seconds: float = 600,
    ) -> None:
        if not isinstance(auth, ApiKeyAuth | AppCredentialAuth | CookieAuth):
            raise TypeError(f"a credential page cannot ask for {type(auth).__name__}")
        lang = normalize_tag(locale or app.names.default_lang or "en")
        super().__init__(subject=app.id, lang=lang, timeout_seconds=timeout_seconds)
        self.app = app
        self.auth = auth
        self.store = store
        self.locale = locale

    def timeout_message(self) -> str:
        return f"the user did not enter the credential for {self.app.id} within {self.timeout_seconds:g} s"

    async def accept(self, form: dict[str, str]) -> Credential | Response:
        credential, errors = self._validate(form)
        if credential is None:
            keep = {form_html.APP_ID_FIELD: form.get(form_html.APP_ID_FIELD, "").strip()}
            return self.render_form(400, errors, keep)
        try:
            await anyio.to_thread.run_sync(self.store.save, self.app, credential)
        except Exception as exc:
            logger.error(
                "credential page: saving the credential for %s failed (%s)", self.app.id, type(exc).__name__
            )
            reason = str(exc) if isinstance(exc, AaiError) else "the keyring refused it"
            error = FieldError(f"Could not save to the OS keyring: {reason}")
            return self.render_form(500, [error], {})
        logger.info("credential for %s saved to the keyring", self.app.id)
        return credential

    def accepted(self, value: Credential) -> Response:
        return self.message(
            200,
            "Saved. You can close this tab.",
            f"The credential for {self._app_name} is in your OS keyring now. The agent can continue.",
            ok=True,
        )

    def _validate(self, form: dict[str, str]) -> tuple[Credential | None, list[FieldError]]:
        base = self.store.new(self.app, _kind(self.auth))
        errors: list[FieldError] = []
        auth = self.auth
        if isinstance(auth, ApiKeyAuth):
            key = form.get(form_html.API_KEY_FIELD, "").strip()
            if not key:
                errors.append(FieldError("Enter the API key.", form_html.API_KEY_FIELD))
            elif _has_control_chars(key):
                errors.append(
                    FieldError(
                        "The API key must be one line without control characters.", form_html.API_KEY_FIELD
                    )
                )
            return (None if errors else base.model_copy(update={"api_key": key})), errors
        if isinstance(auth, AppCredentialAuth):
            app_id = form.get(form_html.APP_ID_FIELD, "").strip()
            secret = form.get(form_html.APP_SECRET_FIELD, "").strip()
            for value, field_id, label in (
                (app_id, form_html.APP_ID_FIELD, "App ID"),
                (secret, form_html.APP_SECRET_FIELD, "App Secret"),
            ):
                if not value:
                    errors.append(FieldError(f"Enter the {label}.", field_id))
                elif _has_control_chars(value):
                    errors.append(FieldError(f"The {label} must be one line.", field_id))
            if errors:
                return None, errors
            return base.model_copy(update={"client_id": app_id, "client_secret": secret}), errors
        return self._validate_cookies(auth, form, base)

    def _validate_cookies(
        self, auth: CookieAuth, form: dict[str, str], base: Credential
    ) -> tuple[Credential | None, list[FieldError]]:
        errors: list[FieldError] = []
        cookies, problems = parse_cookie_header(form.get(form_html.COOKIE_HEADER_FIELD, ""))
        errors += [FieldError(p, form_html.COOKIE_HEADER_FIELD) for p in problems]
        for index, name in enumerate(auth.required_cookies):
            field_id = form_html.cookie_field_id(index)
            value = form.get(field_id, "").strip()
            if not value:
                continue
            if not _valid_cookie_value(value):
                errors.append(FieldError(f"The value of cookie {name} has a forbidden character.", field_id))
                continue
            cookies[name] = value  # a field filled in one by one wins over the pasted header
        for index, name in enumerate(auth.required_cookies):
            if not cookies.get(name) and not any(e.field == form_html.cookie_field_id(index) for e in errors):
                errors.append(FieldError(f"The cookie {name} is missing.", form_html.cookie_field_id(index)))
        if errors:
            return None, errors
        return base.model_copy(update={"cookies": cookies}), errors

    # ------------------------------------------------------------------ rendering

    @property
    def _app_name(self) -> str:
        return self.app.names.lookup(self.locale)

    def render_form(self, status: int, errors: list[FieldError], keep: dict[str, str]) -> Response:
        source = self.app.source
        view = form_html.FormView(
            app_name=self._app_name,
            app_id=self.app.id,
            source=form_html.source_text(source.kind, source.location, source.origin),
            lang=self.lang,
            action=self.path,
            csrf=self.csrf,
            auth=self.auth,
            errors=errors,
            keep=keep,
        )
        return self.html(status, form_html.render_form(view))
