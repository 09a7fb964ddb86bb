"""The first two parts of a guide: what the app is and how it is reached (App Info), and how it
signs in (Authentication). Pure: text from the descriptor, never a secret's value.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..descriptor.model import (
    AcpChannel,
    AppDescriptor,
    AppleEventsChannel,
    Channel,
    ComChannel,
    DbusChannel,
    HttpChannel,
    IntentChannel,
    McpChannel,
    ScriptChannel,
    StdioChannel,
    UrlSchemeChannel,
)
from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, Auth, CookieAuth, Instructions, OAuth2Auth
from ..descriptor.platforms import ExecutionType

CONSENT = "Before an operation runs for the first time, the gateway asks the user to allow it."
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


# --------------------------------------------------------------------------- app info


def app_info(app: AppDescriptor) -> list[str]:
    platform = app.platform or f"{', '.join(app.declared_platforms)} (none of them is this machine)"
    lines = [f"- ID: {app.id}", f"- Platform: {platform}", f"- Version: {app.version}"]
    if app.description:
        lines.append(f"- Description: {app.description}")
    names = app.names.all_names()
    if len(names) > 1:
        lines.append(f"- Names: {' | '.join(names)}")
    if app.aliases:
        lines.append(f"- Aliases: {', '.join(app.aliases)}")
    groups = _channel_groups(app)
    if len(groups) == 1:
        lines.append(f"- Access: {_channel_text(groups[0][0])}")
    elif groups:
        lines.append("- Access:")
        lines += [f"  - {_channel_text(channel)}: {', '.join(names)}" for channel, names in groups]
    else:
        lines += [f"- Access: {_channel_text(s.channel)} ({s.platform})" for s in app.sections]
    return lines


def _channel_groups(app: AppDescriptor) -> list[tuple[Channel, list[str]]]:
    """Each distinct channel with the names of the tools that use it, in tool order."""
    groups: list[tuple[Channel, list[str]]] = []
    for tool in app.tools:
        for channel, names in groups:
            if channel == tool.channel:
                names.append(tool.name)
                break
        else:
            groups.append((tool.channel, [tool.name]))
    return groups


def _channel_text(channel: Channel) -> str:
    if isinstance(channel, HttpChannel):
        return f"HTTP API at {channel.base_url}"
    if isinstance(channel, StdioChannel):
        return "local adapter program (stdio)"
    if isinstance(channel, AcpChannel):
        return "local agent over the Agent Client Protocol (ACP)"
    if isinstance(channel, AppleEventsChannel):
        return f"Apple Events to {channel.bundle_id}"
    if isinstance(channel, ScriptChannel):
        kind = (
            "AppleScript" if channel.type == ExecutionType.APPLESCRIPT else "JavaScript for Automation (JXA)"
        )
        return f"{kind} run by the gateway on this Mac"
    if isinstance(channel, DbusChannel):
        return f"D-Bus service {channel.service} on the {channel.bus} bus"
    if isinstance(channel, ComChannel):
        return f"COM ProgID {channel.prog_id}" if channel.prog_id else "Windows COM automation"
    if isinstance(channel, IntentChannel):
        return f"Android intents to package {channel.package}"
    if isinstance(channel, McpChannel):
        if channel.command is not None:
            return f"MCP server started with {' '.join(channel.command.split())} (stdio)"
        assert channel.url is not None
        return f"MCP server at {_without_query(channel.url)} (Streamable HTTP)"
    assert isinstance(channel, UrlSchemeChannel)
    return f"iOS URL scheme {channel.scheme}://"


def _without_query(url: str) -> str:
    """A URL without its query and fragment, which may carry a key."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


# --------------------------------------------------------------------------- authentication


def authentication(app: AppDescriptor) -> list[str]:
    groups = _channel_groups(app) or [(s.channel, []) for s in app.sections[:1]]
    texts: list[tuple[list[str], str]] = []
    for channel, names in groups:
        text = _auth_text(channel)
        for known_names, known_text in texts:
            if known_text == text:
                known_names.extend(names)
                break
        else:
            texts.append((list(names), text))
    if len(texts) == 1:
        return [texts[0][1], "", CONSENT]
    return [*(f"- {', '.join(names)}: {text}" for names, text in texts), "", CONSENT]


def _auth_text(channel: Channel) -> str:
    auth: Auth | None = channel.auth if isinstance(channel, HttpChannel) else None
    if auth is not None:
        return _credential_text(auth)
    if isinstance(channel, McpChannel):
        return _mcp_auth_text(channel)
    if isinstance(channel, AppleEventsChannel | ScriptChannel):
        return "Uses OS-level consent (TCC): the first call may show a macOS permission dialog for the user."
    if isinstance(channel, HttpChannel):
        host = urlsplit(channel.base_url).hostname or ""
        return "No sign-in needed (local server)." if host in _LOOPBACK else "No sign-in needed."
    return "No sign-in needed; the app runs as the current user, with OS-level permissions."


def _mcp_auth_text(channel: McpChannel) -> str:
    """Names the secrets and variables the server gets, never their values."""
    parts = []
    if channel.secret_names:
        parts.append(
            f"The gateway gives the server the secrets {', '.join(channel.secret_names)} from the OS "
            "keyring, where the user stores them with `aai-gateway auth set`. Never ask for secrets "
            "in the chat."
        )
    if channel.environment_names:
        parts.append(
            f"It passes on {', '.join(channel.environment_names)} from the gateway's own environment."
        )
    if parts:
        return " ".join(parts)
    if channel.url is None:
        return "No sign-in needed; the server runs as the current user, with OS-level permissions."
    host = urlsplit(channel.url).hostname or ""
    return "No sign-in needed (local server)." if host in _LOOPBACK else "No sign-in needed."


def _credential_text(auth: Auth) -> str:
    if isinstance(auth, OAuth2Auth):
        scopes = f" (scopes: {', '.join(auth.scopes)})" if auth.scopes else ""
        text = (
            f"OAuth 2.0{scopes}. The gateway signs the user in through the browser when first needed; "
            "never ask the user for a password or token."
        )
        return _join(text, _instructions(auth.instructions))
    if isinstance(auth, ApiKeyAuth):
        where = (
            f"the `{auth.name}` header" if auth.location == "header" else f"the `{auth.name}` query parameter"
        )
        text = f"API key, sent in {where}."
        if auth.obtain_url:
            text += f" The user gets one at {auth.obtain_url}."
        text = _join(text, _instructions(auth.instructions))
        env = f" (or reads it from ${auth.env_var})" if auth.env_var else ""
        return _join(text, f"The gateway asks the user for it when first needed{env}; {_KEYRING}")
    if isinstance(auth, AppCredentialAuth):
        minutes = max(1, auth.expires_in // 60)
        text = (
            f"App credential: an app ID and secret, exchanged for a {_words(auth.token_type)} "
            f"(valid about {minutes} min, renewed by the gateway)."
        )
        text = _join(text, _instructions(auth.instructions))
        return _join(
            text, f"The gateway asks the user for the app ID and secret when first needed; {_KEYRING}"
        )
    assert isinstance(auth, CookieAuth)
    cookies = ", ".join(auth.required_cookies)
    text = f"Browser session cookies ({cookies}) for {auth.domain}, after logging in at {auth.login_url}."
    text = _join(text, _instructions(auth.instructions))
    return _join(text, f"The gateway asks the user for them when first needed; {_KEYRING}")


_KEYRING = "it keeps them in the OS keyring. Never ask for secrets in the chat."


def _instructions(instructions: Instructions | None) -> str:
    if instructions is None:
        return ""
    parts = [instructions.short, instructions.detailed or ""]
    if instructions.help_url:
        parts.append(f"Help: {instructions.help_url}")
    return " ".join(_sentence(p) for p in parts if p.strip())


def _words(camel: str) -> str:
    """`tenantAccessToken` → `tenant access token`."""
    return "".join(f" {c.lower()}" if c.isupper() else c for c in camel).strip()


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "。")) or text.startswith("Help: ") else f"{text}."


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)
