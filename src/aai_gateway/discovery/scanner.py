"""Walk one discovery source and list its descriptor files; report what cannot be read, never raise."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..descriptor.limits import MAX_DESCRIPTOR_BYTES
from .sources import Pattern, SourceSpec

DESCRIPTOR_NAME = "aai.json"
# Open flags of discovery's reads: a FIFO does not wait for a writer, a terminal does not become
# the process's controlling terminal (Windows has no such files, and reads binary when told).
if sys.platform == "win32":
    _BINARY, _NEVER_WAIT = os.O_BINARY, 0
else:
    _BINARY, _NEVER_WAIT = 0, os.O_NONBLOCK | os.O_NOCTTY
BUNDLE_RESOURCES = ("Contents", "Resources", DESCRIPTOR_NAME)


@dataclass(frozen=True, slots=True)
class Found:
    path: str
    info: os.stat_result  # what `stat` said of it when it was found


@dataclass(frozen=True, slots=True)
class Unreadable:
    path: str
    reason: str


@dataclass(frozen=True)
class RootStatus:
    exists: bool
    reason: str = ""


def describe_os_error(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "broken symlink" if exc.filename and os.path.islink(exc.filename) else "does not exist"
    if exc.errno == errno.ENOTDIR:
        return "not a directory"
    return exc.strerror or str(exc)


def root_status(spec: SourceSpec) -> RootStatus:
    """Whether the source's root is there to walk: the same absolute path `walk_source` walks
    (`link/../apps` is `apps`, as in every binding, not the parent of where `link` points)."""
    try:
        info = os.stat(os.path.abspath(spec.root))
    except OSError as exc:
        return RootStatus(False, describe_os_error(exc))
    if spec.explicit and stat.S_ISREG(info.st_mode):
        return RootStatus(True)
    if not stat.S_ISDIR(info.st_mode):
        return RootStatus(False, "not a directory")
    return RootStatus(True)


def walk_source(spec: SourceSpec) -> Iterator[Found | Unreadable]:
    """Descriptor files of one source, in a stable (sorted) order, by absolute path (what binds
    an app to its file). (Paths are strings here: a source may hold thousands of files, and
    `pathlib` would be most of the walk's time.)"""
    root = os.path.abspath(spec.root)
    if spec.explicit and os.path.isfile(root):
        checked = _check_file(root)
        if checked is not None:
            yield checked
        return
    if spec.pattern in (Pattern.FILES, Pattern.APP_DIRS, Pattern.FILES_AND_APP_DIRS):
        listed = _listing(root)  # one listing for both kinds
        if isinstance(listed, Unreadable):
            yield listed
            return
        if spec.pattern in (Pattern.FILES, Pattern.FILES_AND_APP_DIRS):
            yield from _json_files(listed)
        if spec.pattern in (Pattern.APP_DIRS, Pattern.FILES_AND_APP_DIRS):
            yield from _app_dirs(listed)
    if spec.pattern == Pattern.BUNDLES:
        yield from _bundles(root, max_depth=4)
    if spec.pattern == Pattern.XCODE_PRODUCTS:
        yield from _xcode_products(root)


def _listing(directory: str) -> list[os.DirEntry[str]] | Unreadable:
    """The entries of `directory` sorted by name (none when it does not exist)."""
    try:
        with os.scandir(directory) as listing:
            return sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return []
        return Unreadable(directory, f"cannot list directory: {describe_os_error(exc)}")


def _entries(directory: str) -> Iterator[os.DirEntry[str] | Unreadable]:
    listed = _listing(directory)
    if isinstance(listed, Unreadable):
        yield listed
    else:
        yield from listed


def _check_file(path: str) -> Found | Unreadable | None:
    """A usable descriptor file, a reportable problem, or None when nothing is there."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and not os.path.islink(path):
            return None
        return Unreadable(path, describe_os_error(exc))
    if not stat.S_ISREG(info.st_mode):
        return Unreadable(path, "not a regular file")
    if info.st_size > MAX_DESCRIPTOR_BYTES:
        return Unreadable(
            path, f"file is {info.st_size} bytes; descriptors are limited to {MAX_DESCRIPTOR_BYTES}"
        )
    return Found(path, info)


def _json_files(entries: list[os.DirEntry[str]]) -> Iterator[Found | Unreadable]:
    for entry in entries:
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            checked = _check_file(entry.path)
            if checked is not None:
                yield checked


def _app_dirs(entries: list[os.DirEntry[str]]) -> Iterator[Found | Unreadable]:
    for entry in entries:
        if not entry.name.startswith(".") and not entry.name.endswith(".json"):
            checked = _check_file(os.path.join(entry.path, DESCRIPTOR_NAME))
            if checked is not None:
                yield checked


def _bundles(root: str, max_depth: int) -> Iterator[Found | Unreadable]:
    """`*.app` bundles up to `max_depth` directories below root; never enters a bundle or a loop."""
    seen: set[tuple[int, int]] = set()
    pending: list[tuple[str, int]] = [(root, 1)]
    while pending:
        directory, depth = pending.pop(0)
        try:
            info = os.stat(directory)
        except OSError as exc:
            yield Unreadable(directory, describe_os_error(exc))
            continue
        if (info.st_dev, info.st_ino) in seen:
            yield Unreadable(directory, "symlink loop (directory already visited)")
            continue
        seen.add((info.st_dev, info.st_ino))
        for entry in _entries(directory):
            if isinstance(entry, Unreadable):
                yield entry
                continue
            if entry.name.endswith(".app"):
                checked = _check_file(os.path.join(entry.path, *BUNDLE_RESOURCES))
                if checked is not None:
                    yield checked
            elif depth < max_depth and not entry.name.startswith(".") and _is_dir(entry):
                pending.append((entry.path, depth + 1))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _xcode_products(root: str) -> Iterator[Found | Unreadable]:
    for project in _entries(root):
        if isinstance(project, Unreadable):
            yield project
            continue
        products = os.path.join(project.path, "Build", "Products")
        for configuration in _entries(products) if os.path.isdir(products) else ():
            if isinstance(configuration, Unreadable):
                yield configuration
            elif _is_dir(configuration):
                yield from _bundles(configuration.path, max_depth=1)


def read_descriptor_bytes(path: Path | str, *, named_by_user: bool = False) -> bytes:
    """Read at most the size limit (+1 byte so an over-long file is still detected).

    Discovery (the default) reads only regular files: opening never blocks (a FIFO or terminal
    put where a file was found would) and anything else is refused once open. A file the user
    names on the command line (`named_by_user`: `validate`, `diff`) may be any readable stream,
    `/dev/stdin` or a shell's `<(...)`, and is opened as it is. Either way reading asks for what
    the file says it holds (+1), never a buffer of the whole limit (that alone was most of a
    discovery read), and goes on to its end: a file that grew is read on to the limit, and a
    short read (a network or FUSE file system) is not taken for the end."""
    flags = os.O_RDONLY | _BINARY  # not inherited either way: PEP 446
    if not named_by_user:
        flags |= _NEVER_WAIT
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not named_by_user and not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        wanted = MAX_DESCRIPTOR_BYTES + 1
        chunks: list[bytes] = []
        read = 0
        while read < wanted:
            chunk = os.read(fd, min(wanted - read, max(info.st_size + 1 - read, 1 << 16)))
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
