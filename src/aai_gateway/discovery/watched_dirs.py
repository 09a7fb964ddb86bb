"""Which directories to watch for file notifications, and which events in them matter.

A discovery source's pattern says where descriptors can be (`sources.Pattern`); only the
directories that can hold one, or can come to hold one, are watched, each on its own (never a
whole tree: `/opt` with `DIR/*/aai.json` is `/opt` and each `/opt/<app>`, not everything below):

| pattern | watched |
|---|---|
| `DIR/*.json` | DIR, for `*.json` |
| `DIR/*/aai.json` (or both) | DIR, for any entry; each DIR/<app>, for `aai.json` |
| macOS bundles | each folder the scanner enters (4 deep), for any entry; |
| | each bundle's `Contents/Resources`, for `aai.json` |
| Xcode products | DIR and each `DIR/<project>/Build/Products`, for any entry; |
| | each configuration folder, for `*.app`; each bundle as above |
| MCP tool snapshots | the store's folder, for `*.json` |

A descriptor file that is a symlink is also watched where it leads (its target's folder, for its
name): an editor that saves the target by renaming a new file over it changes nothing the link's
own folder sees. An app folder or a root that is a symlink is also watched on the way to where
it leads: its watch is of the folder it leads to, and once that is removed (a checkout cloned
again) only that sees it made again. (A hard link is one file with two names; it is watched under the name the
sources give it, and a change made under its other name is seen with the next other change.)

Every root is also watched from the nearest existing folder above it, for the next name on the
way down: that sees a root that does not exist yet appear (`~/.aai` before the user makes it), and
one that is removed, renamed or, as a symlink, pointed elsewhere. A folder inside a bundle or an
Xcode project that is missing is watched the same way, from within. A folder that cannot be read
is not watched (the OS refuses); its parent sees it change.

The watch set changes whenever folders appear or vanish: `change_notices` computes it again
after every relevant event and watches anew when it differs. `watched_dirs()` is pure apart
from the `DirLister` it is given (the real file system, or a fake in tests).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from ..descriptor.mcp_wire import is_unicode
from .sources import Pattern, SourceSpec

DESCRIPTOR: Final = "aai.json"
ANY: Final = "*"
JSON_FILES: Final = "*.json"
BUNDLES: Final = "*.app"
BUNDLE_DEPTH: Final = 4  # as deep as the scanner looks for `*.app` bundles (`scanner._bundles`)
Interests = frozenset[str]
"""What matters in a directory: `*` any name, `*<suffix>` names ending so, else exact names
(all casefolded: on a case-insensitive file system `AAI.json` is `aai.json`)."""


class DirLister(Protocol):
    def watchable(self, path: Path) -> bool:
        """A directory that exists and may be watched (the OS wants read permission)."""

    def subdirs(self, path: Path) -> list[str]:
        """The names of the directories in `path` (symlinks followed), sorted; [] if unreadable."""

    def identity(self, path: Path) -> tuple[int, int] | None:
        """Which directory `path` is now (device and inode, symlinks followed); None if gone."""

    def linked_files(self, directory: Path, interests: Interests) -> list[Path]:
        """Where the symlinks among the entries of `directory` that `interests` name (other than
        `*`: any entry, which is what a folder of app folders holds) lead, resolved, unless to a
        directory: a file, or a name that does not exist (yet)."""

    def linked_dirs(self, directory: Path) -> dict[str, Path]:
        """Where the symlinks among the entries of `directory` lead, by name, resolved, unless to
        a file: a directory, or a name that does not exist (yet)."""

    def link_target(self, path: Path) -> Path | None:
        """Where `path` leads when it is a symlink (resolved, whether that exists or not)."""


class OsDirs:
    """The real file system."""

    def watchable(self, path: Path) -> bool:
        return os.path.isdir(path) and os.access(path, os.R_OK)

    def identity(self, path: Path) -> tuple[int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return (info.st_dev, info.st_ino)

    def linked_files(self, directory: Path, interests: Interests) -> list[Path]:
        named = frozenset(interests - {ANY})
        if not named:
            return []
        if all(not interest.startswith(ANY) for interest in named):  # `aai.json`: no listing
            candidates = [directory / name for name in named]
        else:
            try:
                with os.scandir(directory) as listing:
                    candidates = [Path(e.path) for e in listing if e.is_symlink() and matters(e.name, named)]
            except OSError:
                return []
        return [
            Path(os.path.realpath(link))
            for link in candidates
            if os.path.islink(link) and not os.path.isdir(link)
        ]

    def subdirs(self, path: Path) -> list[str]:
        try:
            with os.scandir(path) as listing:
                return sorted(entry.name for entry in listing if _is_dir(entry))
        except OSError:
            return []

    def linked_dirs(self, directory: Path) -> dict[str, Path]:
        try:
            with os.scandir(directory) as listing:
                links = {entry.name: entry.path for entry in listing if entry.is_symlink()}
        except OSError:
            return {}
        return {
            name: Path(os.path.realpath(link)) for name, link in links.items() if not os.path.isfile(link)
        }

    def link_target(self, path: Path) -> Path | None:
        return Path(os.path.realpath(path)) if os.path.islink(path) else None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


@dataclass(frozen=True)
class WatchSet:
    dirs: Mapping[Path, Interests]
    identities: Mapping[Path, tuple[int, int] | None] = field(default_factory=dict)
    """Which directory each path was when listed: a folder deleted and made again, or replaced
    by a rename, is another directory at the same path, and must be watched anew (a watch
    follows the directory, not its path)."""
    unwatchable: tuple[Path, ...] = ()
    """Folders to watch whose names are not UTF-8, which the watcher cannot take (nor their
    parents: each reading of the folder is an event on its name there, which it cannot decode):
    `change_notices` polls instead."""

    @property
    def paths(self) -> list[str]:
        return sorted(str(path) for path in self.dirs)

    def relevant(self, changed: str) -> bool:
        """Whether a change reported at `changed` could change the catalog: a watched directory
        itself (removed, moved, its permissions), an entry of one that its interests name, or a
        path in no watched directory: one the OS spells otherwise (macOS reports `/private/var`
        for `/var`; a case-insensitive file system its own case), kept rather than missed."""
        path = Path(changed)
        if path in self.dirs:
            return True
        interests = self.dirs.get(path.parent)
        return interests is None or matters(path.name, interests)


def matters(name: str, interests: Iterable[str]) -> bool:
    folded = name.casefold()
    return any(
        folded.endswith(interest[1:]) if interest.startswith(ANY) else folded == interest
        for interest in interests
    )


def watched_dirs(sources: Sequence[SourceSpec], snapshot_root: Path | None, lister: DirLister) -> WatchSet:
    plan = _Plan(lister)
    for spec in sources:
        root = Path(os.path.abspath(spec.root))
        plan.link(root)
        if spec.pattern == Pattern.FILES:
            plan.reach(root, JSON_FILES)
        elif spec.pattern in (Pattern.APP_DIRS, Pattern.FILES_AND_APP_DIRS):
            plan.reach(root, ANY)
            if spec.pattern == Pattern.FILES_AND_APP_DIRS:  # `*` says it all, but for links to follow
                plan.reach(root, JSON_FILES)
            plan.app_dirs(root)
        elif spec.pattern == Pattern.BUNDLES:
            plan.reach(root, ANY)
            plan.bundle_tree(root, depth=1, max_depth=BUNDLE_DEPTH)
        elif spec.pattern == Pattern.XCODE_PRODUCTS:
            plan.reach(root, ANY)
            plan.xcode_products(root)
    if snapshot_root is not None:
        plan.reach(Path(os.path.abspath(snapshot_root)), JSON_FILES)
    for folder, interests in list(plan.dirs.items()):
        for target in lister.linked_files(folder, frozenset(interests)):
            # a descriptor that is a link: where it leads, or, gone or unreadable, the way there
            plan.reach(target.parent, target.name)
    # a byte of a name that is not UTF-8 comes from os.fsdecode as a lone surrogate
    dirs = {path: frozenset(interests) for path, interests in plan.dirs.items() if is_unicode(str(path))}
    return WatchSet(
        dirs,
        {path: lister.identity(path) for path in dirs},
        tuple(sorted(path for path in plan.dirs if path not in dirs)),
    )


class _Plan:
    def __init__(self, lister: DirLister) -> None:
        self.lister = lister
        self.dirs: dict[Path, set[str]] = {}

    def add(self, path: Path, interest: str) -> None:
        self.dirs.setdefault(path, set()).add(interest.casefold())

    def reach(self, target: Path, interest: str, *, inside: Path | None = None) -> None:
        """Watch `target` when it is a directory, and the nearest watchable directory above it for
        the next name on the way down (to see `target` appear, vanish or be replaced). With
        `inside`: the directory above only while `target` is missing, and never above `inside`
        (whose own parent is watched already)."""
        exists = self.lister.watchable(target)
        if exists:
            self.add(target, interest)
            if inside is not None:
                return
        child = target
        while child.parent != child:
            parent = child.parent
            if inside is not None and parent != inside and inside not in parent.parents:
                return
            if self.lister.watchable(parent):
                self.add(parent, child.name)
                return
            child = parent

    def link(self, path: Path) -> None:
        """A root or an app folder that is a symlink: the way to where it leads is watched too. The
        watch of the link is of the folder it leads to: once that folder is removed (a checkout
        cloned again), only this sees it made again."""
        target = self.lister.link_target(path)
        if target is not None:
            self.reach(target.parent, target.name)

    def app_dirs(self, root: Path) -> None:
        # the scanner's rule (`scanner._app_dirs`): hidden entries and `*.json` are no app folders
        for name in self.lister.subdirs(root):
            if not name.startswith(".") and not name.endswith(".json"):
                folder = root / name
                if self.lister.watchable(folder):
                    self.add(folder, DESCRIPTOR)
        for name, target in self.lister.linked_dirs(root).items():
            if not name.startswith(".") and not name.endswith(".json"):
                self.reach(target.parent, target.name)

    def bundle(self, bundle: Path) -> None:
        self.reach(bundle / "Contents" / "Resources", DESCRIPTOR, inside=bundle)

    def bundle_tree(self, directory: Path, depth: int, max_depth: int) -> None:
        """The folders `scanner._bundles` enters below `directory` (at `depth`), never a bundle's
        inside; the depth bound also ends a symlink loop."""
        for name in self.lister.subdirs(directory):
            path = directory / name
            if name.endswith(".app"):
                self.bundle(path)
            elif depth < max_depth and not name.startswith(".") and self.lister.watchable(path):
                self.add(path, ANY)
                self.bundle_tree(path, depth + 1, max_depth)

    def xcode_products(self, root: Path) -> None:
        for project in self.lister.subdirs(root):
            products = root / project / "Build" / "Products"
            # a project's own folder is busy while it builds: watched only until Build/Products exists
            self.reach(products, ANY, inside=root / project)
            for configuration in self.lister.subdirs(products):
                folder = products / configuration
                if not self.lister.watchable(folder):
                    continue
                self.add(folder, BUNDLES)
                for name in self.lister.subdirs(folder):
                    if name.endswith(".app"):
                        self.bundle(folder / name)
