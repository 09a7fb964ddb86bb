"""Errors of access: credentials missing, expired or unusable, the keyring unusable, and the
user's consent missing or refused."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from .base import AaiError, ErrorCode


class AuthRequiredError(AaiError):
    """No usable credential: says what the app needs, where to get it, and the command that stores
    it. AUTH_REQUIRED; AUTH_EXPIRED when `expired`, AUTH_INVALID when `invalid` (a stored
    credential that cannot be used as it is)."""

    code = ErrorCode.AUTH_REQUIRED

    def __init__(
        self,
        app_id: str,
        app_name: str,
        auth_type: str,
        *,
        reason: str,
        command: str,
        obtain_url: str | None = None,
        instructions: dict[str, Any] | None = None,
        locale: str | None = None,
        expired: bool = False,
        invalid: bool = False,
        **data: Any,
    ) -> None:
        where = f" Get it at {obtain_url}." if obtain_url else ""
        super().__init__(
            f"{app_name} ({app_id}) needs {auth_type} credentials: {reason}.{where} Ask the user to run "
            f"`{command}` in a terminal, then retry",
            {
                "app": app_id,
                "app_name": app_name,
                "auth_type": auth_type,
                "obtainUrl": obtain_url,
                "instructions": instructions,
                "locale": locale,
                "command": command,
                **data,
            },
            ErrorCode.AUTH_INVALID
            if invalid
            else ErrorCode.AUTH_EXPIRED
            if expired
            else ErrorCode.AUTH_REQUIRED,
        )


class SecretMissingError(AuthRequiredError):
    """An `mcp` app's `env` or `headers` refer to keyring secrets (`{"secret": NAME}`) that are not
    stored for it: `names` lists them all, the command stores the first, under the app's
    `reference` (its binding's, which names exactly the app the secret is bound to)."""

    def __init__(self, app_id: str, app_name: str, names: Sequence[str], reference: str) -> None:
        listed = ", ".join(names)
        reason = (
            f"the secret {listed} is not stored in the OS keyring"
            if len(names) == 1
            else f"the secrets {listed} are not stored in the OS keyring"
        )
        super().__init__(
            app_id,
            app_name,
            "secret",
            reason=reason,
            command=f"aai-gateway auth set {shlex.quote(reference)} --secret {shlex.quote(names[0])}",
            secrets=list(names),
        )


class ConsentRequiredError(AaiError):
    """The user has not allowed this caller to use this tool, and could not be asked now.

    The agent reads this, so it carries no link or code that approves anything (approval never
    through the model: docs/architecture.md, "Security rules"), only every way out the user has
    on this machine: `command`, the grant command (None when a lasting grant cannot help or be
    kept: `no_lasting_grant` says why); `auto_allow_entry`, the `[consent.auto_allow]` tools entry
    that trusts this tool for every client, `auto_allow` the config.toml lines that hold it, and
    `config_file` the file to put them in. `asking_failed`: why the user, who was asked, could not
    answer (the consent page failed); nobody denied anything."""

    def __init__(
        self,
        *,
        caller: str,
        app_id: str,
        app_name: str,
        source: str,
        tool: str,
        tool_description: str,
        tool_parameters: dict[str, Any],
        arguments: dict[str, Any],
        command: str | None,
        no_lasting_grant: str | None = None,
        config_file: str | None = None,
        auto_allow_entry: str | None = None,
        asking_failed: str | None = None,
    ) -> None:
        lines = (
            ["[consent.auto_allow]", f"tools = [{json.dumps(auto_allow_entry, ensure_ascii=False)}]"]
            if auto_allow_entry
            else []
        )
        ways = []
        if command is not None:
            ways.append(f"run `{command}` in a terminal (it lasts)")
        elif no_lasting_grant is not None:
            ways.append(f"there is no grant command: {no_lasting_grant}")
        if auto_allow_entry:
            where = config_file or "the gateway's config.toml"
            entry = json.dumps(auto_allow_entry, ensure_ascii=False)
            ways.append(
                f"trust it for every client in {where}: add {entry} to `tools` in its "
                f"[consent.auto_allow] table (a new file: {' / '.join(lines)})"
            )
        if asking_failed is None:
            why = (
                "nobody can ask them now: this client cannot (no elicitation) and there is no desktop dialog"
            )
            ways.append("use an MCP client that can ask them (elicitation)")
        else:
            why = f"they were asked, but {asking_failed}, so nobody answered: the user did not deny it"
            ways.append("answer it when the retried call asks them again")
        super().__init__(
            f"the user has not allowed {caller!r} to use {tool} of {app_name} ({app_id}), and {why}. "
            f"Show the user what this tool does and these arguments, and the ways to allow it: "
            f"{'; or '.join(ways)}. Then retry",
            {
                "caller": caller,
                "app_id": app_id,
                "app_name": app_name,
                "source": source,
                "tool": tool,
                "tool_description": tool_description,
                "tool_parameters": tool_parameters,
                "arguments": arguments,
                "command": command,
                **({"no_lasting_grant": no_lasting_grant} if no_lasting_grant else {}),
                **({"asking_failed": asking_failed} if asking_failed else {}),
                "config_file": config_file,
                "auto_allow_entry": auto_allow_entry,
                "auto_allow": lines,
            },
            ErrorCode.CONSENT_REQUIRED,
        )


class ConsentDeniedError(AaiError):
    """`command` undoes a remembered denial; a denial for this call only has nothing to undo."""

    def __init__(self, *, caller: str, app_id: str, tool: str, remembered: bool, command: str | None) -> None:
        until = (
            f"; the denial is remembered until the user runs `{command}`"
            if remembered and command
            else " for this call"
        )
        super().__init__(
            f"the user denied {caller!r} the use of {tool} of {app_id}{until}. Do not retry; tell the user",
            {
                "caller": caller,
                "app_id": app_id,
                "tool": tool,
                "remembered": remembered,
                "command": command if remembered else None,
            },
            ErrorCode.CONSENT_DENIED,
        )


class AuthInvalidError(AaiError):
    """The app's auth settings cannot be used as they are (signing in again would not help)."""

    def __init__(self, app_id: str, problem: str, **data: Any) -> None:
        super().__init__(f"{app_id}: {problem}", {"app": app_id, **data}, ErrorCode.AUTH_INVALID)


class SecretStoreUnavailableError(AaiError):
    def __init__(self, reason: str) -> None:
        super().__init__(
            f"no usable OS keyring ({reason}). The gateway keeps credentials only in the OS keyring: "
            "on Linux install and unlock a Secret Service (GNOME Keyring: `apt install gnome-keyring`, "
            "or KeePassXC with Secret Service enabled) in your desktop session; macOS Keychain and "
            "Windows Credential Manager work out of the box",
            {"reason": reason},
            ErrorCode.AUTH_REQUIRED,
        )


class DecisionFileError(SecretStoreUnavailableError):
    """The consent decision file cannot be written (read-only home, full disk, lock held too long)."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"the consent decision file {path} cannot be written: {reason}")
        self.data["path"] = str(path)
