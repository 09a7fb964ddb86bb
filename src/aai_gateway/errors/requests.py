"""Errors about what was asked: a bad descriptor or command line, an app, tool or argument that
does not exist or does not fit, a feature turned off, and the gateway's own bugs."""

from __future__ import annotations

from typing import Any

from .base import AaiError, ErrorCode, Problem


class DescriptorError(AaiError):
    """A descriptor file that cannot be used; carries every problem found in it."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = [p if p.file else p.located(file) for p in problems]
        errors = [p for p in self.problems if p.severity == "error"]
        first = errors[0].render() if errors else f"{file}: invalid descriptor"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            message=f"invalid aai.json: {first}{more}",
            data={"file": file, "problems": [p.as_dict() for p in self.problems]},
            code=ErrorCode.INVALID_REQUEST,
        )


class UsageError(AaiError):
    """The user asked for something that cannot be done as asked (bad CLI input, bad file)."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message=message, data=data, code=ErrorCode.INVALID_REQUEST)


class UnknownAppError(AaiError):
    """`known`: the ids to suggest (the message shows 20, the data at most MAX_KNOWN_APPS: with
    thousands of apps, search is the way to find one)."""

    MAX_KNOWN_APPS = 50

    def __init__(
        self,
        reference: str,
        known: list[str],
        total: int | None = None,
        close_matches: list[str] | None = None,
    ) -> None:
        count = len(known) if total is None else total
        close = close_matches or []
        shown = ", ".join(known[:20]) + (f" … ({count} in all)" if count > 20 else "")
        data = {"app": reference, "close_matches": close, "known_apps": known[: self.MAX_KNOWN_APPS]}
        super().__init__(
            f"no app {reference!r}{_did_you_mean(close)}; known apps: {shown or 'none'}. Use an id from "
            "tools/list or aai_search, or web_discover for a web app",
            data | {"known_app_count": count},
            ErrorCode.UNKNOWN_APP,
        )


class AppChangedError(AaiError):
    """An app whose descriptor file changed or went away since the gateway read it, and no longer
    holds that app (the catalog catches up at its next rescan)."""

    def __init__(self, app_id: str, file: str, what: str) -> None:
        super().__init__(
            f"app {app_id!r} cannot be used now: its descriptor {file} {what}; "
            f"check it with `aai-gateway validate {file}`",
            {"app": app_id, "file": file},
            ErrorCode.UNKNOWN_APP,
        )


class AmbiguousAppError(AaiError):
    """A reference that names apps of several bindings (an id claimed by two sites, or by a web
    app and a local one): never settled by order. Each candidate is `{app, source, reference}`,
    `reference` being what names exactly that app."""

    MAX_CANDIDATES = 50  # in the data; the message names the first MAX_NAMED_CANDIDATES
    MAX_NAMED_CANDIDATES = 10

    def __init__(self, reference: str, candidates: list[dict[str, str]]) -> None:
        count = len(candidates)
        named = candidates[: self.MAX_NAMED_CANDIDATES]
        listed = "; ".join(f"{c['app']} from {c['source']} (name it {c['reference']!r})" for c in named)
        rest = f"; … ({count} in all: aai_search finds the one meant)" if count > len(named) else ""
        super().__init__(
            f"{reference!r} could mean {count} apps described in different places: {listed}{rest}. "
            "Pass the reference of the one meant; a web app's credentials and consent belong to its origin",
            {"app": reference, "candidates": candidates[: self.MAX_CANDIDATES], "candidate_count": count},
            ErrorCode.UNKNOWN_APP,
        )


class UnknownToolError(AaiError):
    """An operation `aai_exec` was asked for that the app lacks: its names when it has few
    (`MAX_NAMED_TOOLS`), else how many, with the names spelled like `tool` (`close_matches`)."""

    MAX_NAMED_TOOLS = 20

    def __init__(
        self, app_id: str, tool: str, known: list[str], close_matches: list[str] | None = None
    ) -> None:
        close = close_matches or []
        few = len(known) <= self.MAX_NAMED_TOOLS
        which = f"its tools: {', '.join(known) or 'none'}" if few else f"it has {len(known)} operations"
        data: dict[str, Any] = {"app": app_id, "tool": tool, "close_matches": close}
        data |= {"known_tools": known} if few else {"known_count": len(known)}
        super().__init__(
            f"app {app_id!r} has no tool {tool!r}{_did_you_mean(close)}; {which}. Read the app's guide "
            "for names and parameters, or find an operation by what it does with aai_search and this app",
            data,
            ErrorCode.UNKNOWN_TOOL,
        )


class UnknownOperationError(AaiError):
    """Operation names an app does not have, asked for by name (an app entry's `operations`):
    the message names the closest of its operations, not all of them (a big app has hundreds)."""

    def __init__(
        self,
        app_id: str,
        names: list[str],
        close_matches: dict[str, list[str]],
        count: int,
        unlisted: int = 0,
    ) -> None:
        """`names`: the unknown names to show (the caller cuts and counts them: `unlisted` more
        were asked for)."""
        parts = []
        for name in names:
            parts.append(f"{name!r}{_did_you_mean(close_matches.get(name))}")
        if unlisted:
            parts.append(f"and {unlisted} other names")
        data: dict[str, Any] = {"app": app_id, "tools": names, "close_matches": close_matches}
        if unlisted:
            data["unlisted"] = unlisted
        super().__init__(
            f"app {app_id!r} has no operation {'; '.join(parts)}. Its {count} operations are listed in "
            "its guide; aai_search with this app finds them by what they do",
            data,
            ErrorCode.UNKNOWN_TOOL,
        )


class InvalidParamsError(AaiError):
    """`violations` lists what was found; `unlisted` counts the violations left out of it, None
    when nobody looked for them (`data.violations_complete` is then false)."""

    SHOWN_IN_MESSAGE = 10

    def __init__(
        self, app_id: str, tool: str, violations: list[dict[str, str]], *, unlisted: int | None = 0
    ) -> None:
        shown = violations[: self.SHOWN_IN_MESSAGE]
        message = f"invalid arguments for {app_id} {tool}: " + "; ".join(
            f"{v['path'] or '(arguments)'}: {v['message']}" for v in shown
        )
        data: dict[str, Any] = {"app": app_id, "tool": tool, "violations": violations}
        if unlisted is None:
            message += "; further violations were not looked for"
            data["violations_complete"] = False
        elif unlisted or len(violations) > len(shown):
            message += f" (and {unlisted + len(violations) - len(shown)} more)"
            if unlisted:
                data["violations_complete"] = False
                data["violations_unlisted"] = unlisted
        super().__init__(message, data, ErrorCode.INVALID_PARAMS)


class UnknownGatewayToolError(AaiError):
    """A tools/call for a name the gateway does not list."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            f"no tool {name!r} on this gateway; call tools/list (tools: {', '.join(known)})",
            {"tool": name},
            ErrorCode.UNKNOWN_TOOL,
        )


class InvalidArgumentError(AaiError):
    """One argument that cannot be used as given, found by the gateway (`path` is its JSON
    pointer within the arguments) or by an executor once the schema let it through (text that
    is not valid Unicode, a value the channel cannot carry)."""

    def __init__(
        self, problem: str, *, path: str = "", app_id: str | None = None, tool: str | None = None, **data: Any
    ) -> None:
        subject = f"invalid arguments for {app_id} {tool}" if app_id is not None else "invalid arguments"
        where = f"{path}: " if path else ""
        identity = {"app": app_id, "tool": tool} if app_id is not None else {}
        super().__init__(
            f"{subject}: {where}{problem}",
            {**identity, "violations": [{"path": path, "message": problem}], **data},
            ErrorCode.INVALID_PARAMS,
        )


class WebAppNotFoundError(AaiError):
    """A web app that could not be found: nothing published at the address, or no discovered web
    app by that name."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message, data, ErrorCode.UNKNOWN_APP)


class FeatureOffError(AaiError):
    """A feature this gateway was started without (for example web discovery)."""

    def __init__(self, feature: str, how_to_enable: str = "") -> None:
        hint = f"; {how_to_enable}" if how_to_enable else ""
        super().__init__(
            f"{feature} is turned off in this gateway{hint}", {"feature": feature}, ErrorCode.NOT_IMPLEMENTED
        )


class InternalError(AaiError):
    """A bug in the gateway, reported without its internals (the log has them)."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message, data, ErrorCode.INTERNAL_ERROR)


def _did_you_mean(close: list[str] | None) -> str:
    """` (did you mean 'a', 'b'?)` for the names spelled like one asked for; nothing without."""
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
