"""Find the app an agent or a user means, among every app the gateway knows (docs/architecture.md).

What a reference names:

1. `file:/path/aai.json` or `bundled:<id>`: the app with exactly that binding.
2. A URL (`https://host:port/…`, `http://…`): the apps fetched from that origin (scheme, host and
   port all equal) or calling an API there; else, on the default port, apps on a subdomain.
3. Otherwise its *strong* claimants: apps whose id it is (exactly, ignoring case, or as a
   tools/list name `app_<id>`, `app:<id>`), or, for a domain (`api.example.com`,
   `localhost:8443`), apps on that host and port (without a port: also on a subdomain, so
   `notion.com` finds `api.notion.com`).
4. With no strong claimant, a name or alias, ignoring case: apps on this machine first; web apps
   only when no local app has that name (the documented precedence, local before web).

More than one app found is *ambiguous*, never settled by order: an id claimed by two origins or
by a web app and a local app, an id claimed by one site and the domain served by another, and a
web app's id or domain that is a local app's name or alias (a site's descriptor may not take
over what names an app of this machine). The error lists every candidate with the reference
that names it exactly (`reference_for`). Every lookup is a dictionary read.
"""

from __future__ import annotations

import difflib
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..descriptor import AppDescriptor, Tool, app_reference
from ..descriptor.binding import BUNDLED_PREFIX, FILE_PREFIX
from ..descriptor.card import AppCard, AppIdentity
from ..descriptor.origin import DEFAULT_PORTS, Origin, url_origin
from ..descriptor.quoting import shortened
from ..errors import AmbiguousAppError, UnknownAppError, UnknownToolError
from .naming import app_tool_name

_Index = dict[str, list[AppCard]]


class AppDirectory:
    """Every app the gateway can run, by its card, indexed for references: the local catalog's
    apps (files and bundled) and the web apps discovered so far."""

    def __init__(self, local: Iterable[AppCard], web: Iterable[AppCard] = ()) -> None:
        self.local = list(local)
        self.web = list(web)
        self._indexed = False  # the indexes are built by the first lookup, not at start

    @property
    def indexed(self) -> bool:
        return self._indexed

    def prepare(self) -> None:
        """Build the indexes now (0.2 s at 10,000 apps), not at the first lookup."""
        if not self._indexed:
            self._build()

    def _build(self) -> None:
        self._indexed = True
        self._by_binding: _Index = defaultdict(list)  # `file:/…` and `bundled:<id>` references
        self._by_id: _Index = defaultdict(list)
        self._by_folded: _Index = defaultdict(list)  # ids and tools/list names, case-folded
        self._by_origin: _Index = defaultdict(list)  # where the descriptor came from
        self._by_base_origin: _Index = defaultdict(list)  # where its HTTP tools send requests
        self._by_parent: _Index = defaultdict(list)  # `example.com` for `api.example.com` (port 443/80)
        self._by_name: tuple[_Index, _Index] = (defaultdict(list), defaultdict(list))  # local, web
        for app in self.local:
            self._index(app, self._by_name[0])
        for app in self.web:
            self._index(app, self._by_name[1])

    def _index(self, app: AppCard, names: _Index) -> None:
        binding = app.binding
        self._by_binding[app_reference(binding, app.id)].append(app)
        self._by_id[app.id].append(app)
        for key in {app.id, app_tool_name(app.id, "portable"), app_tool_name(app.id, "colon")}:
            self._by_folded[key.casefold()].append(app)
        own = url_origin(binding.location) if binding.kind == "web" else None
        origins = {own} if own is not None else set()
        for origin in origins:
            self._by_origin[str(origin)].append(app)
        bases = {Origin(o.scheme, o.host, o.port) for o in app.api_origins}
        for base in bases - origins:
            self._by_base_origin[str(base)].append(app)
        for origin in origins | bases:
            if origin.port == DEFAULT_PORTS[origin.scheme]:
                labels = origin.host.split(".")
                for cut in range(1, len(labels) - 1):
                    self._by_parent[f"{origin.scheme}://" + ".".join(labels[cut:])].append(app)
        for name in {*app.all_names, *app.aliases}:
            names[name.casefold()].append(app)

    @property
    def apps(self) -> list[AppCard]:
        return [*self.local, *self.web]

    # ----------------------------------------------------------------- lookups

    def resolve(self, reference: str, *, include_web: bool = True) -> AppCard:
        """The one app `reference` names (see the module docstring); UNKNOWN_APP when none does,
        an ambiguity error listing the candidates when several do."""
        found = self._matches(reference.strip(), include_web)
        if not found:
            apps = self.apps if include_web else self.local
            shown = shortened(reference)  # a client may send a reference of a megabyte
            known = sorted({a.id for a in apps})
            names = {name for a in apps for name in (a.id, *a.all_names, *a.aliases)}
            close = difflib.get_close_matches(shown.strip(), sorted(names), n=3, cutoff=0.75)
            raise UnknownAppError(shown, known, close_matches=close)
        return self._one(reference, found)

    def _matches(self, wanted: str, include_web: bool) -> list[AppCard]:
        if not self._indexed:
            self._build()

        def unique(*groups: Iterable[AppCard]) -> list[AppCard]:
            found = list({id(a): a for group in groups for a in group}.values())
            return found if include_web else [a for a in found if a.binding.is_local]

        if not wanted:
            return []
        if wanted.startswith(FILE_PREFIX):
            path = wanted.removeprefix(FILE_PREFIX)
            return unique(
                self._by_binding.get(FILE_PREFIX + os.path.abspath(path), ()) if os.path.isabs(path) else ()
            )
        if wanted.startswith(BUNDLED_PREFIX):
            return unique(self._by_binding.get(wanted, ()))
        if "://" in wanted:
            return unique(self._by_url([url_origin(wanted)]))
        # Strong claims: an id, a tools/list name, a host. Any two apps of different bindings that
        # claim the reference this way are ambiguous, whichever way each claims it.
        strong = unique(
            self._by_id.get(wanted, ()),
            self._by_folded.get(wanted.casefold(), ()),
            self._by_url(_host_reference(wanted)),
        )
        local = [a for a in strong if a.binding.is_local]
        web = [a for a in strong if not a.binding.is_local]
        local_names = unique(self._by_name[0].get(wanted.casefold(), ()))
        if web and (local or local_names):
            # A site's descriptor may not take over what names an app of this machine.
            return unique(local or local_names, web)
        if strong:
            return strong
        # Names and aliases only: an app of this machine first (local before web).
        return local_names or unique(self._by_name[1].get(wanted.casefold(), ()))

    def _by_url(self, origins: Sequence[Origin | None]) -> list[AppCard]:
        """Apps fetched from one of `origins` or calling an API there; else, for an origin on its
        scheme's default port, apps on a subdomain of its host."""
        known = [str(o) for o in origins if o is not None]
        on_origin = [
            a
            for origin in known
            for index in (self._by_origin, self._by_base_origin)
            for a in index.get(origin, ())
        ]
        if on_origin:
            return on_origin
        defaults = [o for o in origins if o is not None and o.port == DEFAULT_PORTS[o.scheme]]
        return [a for o in defaults for a in self._by_parent.get(f"{o.scheme}://{o.host}", ())]

    def _one(self, reference: str, found: Sequence[AppCard]) -> AppCard:
        if len(found) == 1:
            return found[0]
        candidates = [
            {"app": app.id, "source": str(app.binding), "reference": app_reference(app.binding, app.id)}
            for app in sorted(found, key=lambda a: (a.id, str(a.binding)))
        ]
        raise AmbiguousAppError(reference, candidates)

    def reference_for(self, app: AppIdentity) -> str:
        """What names exactly `app`: its id when that names it alone, else its binding's reference."""
        found = self._matches(app.id, include_web=True)
        if len(found) == 1 and found[0].key == (str(app.binding), app.id):
            return app.id
        return app_reference(app.binding, app.id)


def _host_reference(text: str) -> list[Origin]:
    """`api.example.com` → its https and http origins on their default ports; `host:8443` → that
    port under both schemes. Empty when `text` cannot be a host (no dot and no port, spaces…)."""
    if any(c.isspace() for c in text) or "/" in text or ("." not in text and ":" not in text):
        return []
    https = url_origin("https://" + text)
    if https is None:
        return []
    http_port = https.port if ":" in text.rsplit("]", 1)[-1] else DEFAULT_PORTS["http"]
    return [https, Origin("http", https.host, http_port)]


def resolve_tool(app: AppDescriptor, name: str) -> Tool:
    tool = app.tool(name)
    if tool is not None:
        return tool
    lowered = name.strip().lower()
    matches = [t for t in app.tools if t.name.lower() == lowered]
    if len(matches) == 1:
        return matches[0]
    known = [t.name for t in app.tools]
    shown = shortened(name)  # a client may send a name of a megabyte
    raise UnknownToolError(app.id, shown, known, close_names(shown, known))


def close_names(name: str, known: Sequence[str]) -> list[str]:
    """Up to three names of `known` spelled like `name`: first those it names ignoring case
    (several leave it unresolved: `getItem` and `GetItem`), then those spelled alike."""
    folded = name.strip().casefold()
    same = [k for k in known if k.casefold() == folded]
    return list(dict.fromkeys([*same, *difflib.get_close_matches(name, known, n=3, cutoff=0.6)]))[:3]
