"""Carrying out an import plan: the only part of the import that writes.

- `read_existing` looks at the target folder, so the plan knows which ids are taken and which
  descriptors the import wrote (their `x-imported-from` marker).
- `write_descriptors` stores each app's moved secrets in the OS keyring (one credential record
  per app, bound to the descriptor's file like every credential), then writes its descriptor,
  owner-only (its args or URL may still hold what looked like a secret), atomically. A folder
  whose descriptor the import did not write is never written to.
- `describe_from_snapshot` gives a written descriptor the description its server's tool snapshot
  makes (`description.describe_from_server`), changing nothing else: the snapshot stays valid, as
  it is bound to the execution section alone (`mcp_snapshots.descriptor_fingerprint`).
- `replace_client_file` writes a backup next to a client's file (without the moved secrets), then
  the file with the imported servers replaced by the gateway.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..auth.credentials import CredentialStore
from ..descriptor import Source, load_document
from ..descriptor.limits import MAX_DESCRIPTOR_BYTES
from ..discovery.mcp_snapshots import Snapshot
from ..errors import AaiError
from .client_config import ClientChange, GatewayCommand, backup_text, replaced_text
from .description import describe_from_server
from .ids import Existing, ImportSource, target_of
from .plan import DESCRIPTOR_FILE, MARKER, ImportPlan, Written


@dataclass(frozen=True)
class Failure:
    app_id: str
    reason: str


def read_existing(target_dir: Path) -> dict[str, Existing]:
    """Every folder of `target_dir` by name, with what its descriptor says about the import."""
    try:
        folders = [entry for entry in target_dir.iterdir() if entry.is_dir() or entry.is_symlink()]
    except OSError:
        return {}
    return {folder.name: _existing(folder) for folder in folders}


def write_descriptors(plan: ImportPlan, store: CredentialStore | None) -> list[Failure]:
    """Store the secrets and write the descriptors of `plan`; what could not be done, per app."""
    failures = []
    for written in plan.written:
        try:
            _check_still_ours(written)
            if store is not None:
                _store_secrets(written, store)
            elif written.moved:
                raise AssertionError("secrets to move without a keyring")
            _write_descriptor(written.path, written.document)
        except (OSError, AaiError, ValueError) as exc:
            failures.append(Failure(written.app_id, _reason(exc)))
    return failures


def describe_from_snapshot(written: Written, snapshot: Snapshot) -> str | None:
    """Rewrite `written`'s descriptor with the description `snapshot` gives; the new description,
    or None when it is the same. OSError when the file cannot be written."""
    app = written.document["app"]
    description = describe_from_server(written.server.name, written.document["execution"], snapshot)
    if description == app.get("description"):
        return None
    _write_descriptor(written.path, {**written.document, "app": {**app, "description": description}})
    return description


def replace_client_file(
    change: ClientChange, gateway: GatewayCommand, markers: Mapping[str, str], stamp: str
) -> Path:
    """Back up the file (moved secrets replaced by `markers`), then replace its imported servers
    by the gateway. Returns the backup's path. Nothing is written if the new text cannot be made.
    A file that is a symbolic link (dotfiles kept in a repository) stays one: the file it points
    to is changed; the backup lies next to the link."""
    text = change.path.read_text(encoding="utf-8-sig")
    new_text = replaced_text(change, text, gateway)
    backup = backup_path(change.path, stamp)
    mode = change.path.stat().st_mode & 0o777
    _write_atomically(backup, backup_text(change, text, markers), mode, exclusive=True)
    _write_atomically(Path(os.path.realpath(change.path)), new_text, mode)
    return backup


def backup_path(path: Path, stamp: str) -> Path:
    candidate = path.with_name(f"{path.name}.aai-backup-{stamp}")
    number = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.aai-backup-{stamp}-{number}")
        number += 1
    return candidate


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (owner-only, its folder too), replacing it in one step."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_atomically(path, text, 0o600)


def _write_descriptor(path: Path, document: Mapping[str, object]) -> None:
    write_private(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _existing(folder: Path) -> Existing:
    descriptor = folder / DESCRIPTOR_FILE
    try:
        with descriptor.open("rb") as file:
            document = json.loads(file.read(MAX_DESCRIPTOR_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return Existing(folder.name, None, None)
    source = ImportSource.from_marker(document.get(MARKER)) if isinstance(document, dict) else None
    execution = document.get("execution") if source is not None else None
    target = target_of(execution) if isinstance(execution, dict) else None
    return Existing(folder.name, source, target)


def _check_still_ours(written: Written) -> None:
    """The folder may have changed since the plan was made: never replace a descriptor that the
    import did not write."""
    found = _existing(written.path.parent)
    if written.path.parent.exists() and found.source is None and written.path.exists():
        raise ValueError(f"{written.path} was not written by aai-gateway import; left as it is")


def _store_secrets(written: Written, store: CredentialStore) -> None:
    app = load_document(written.document, Source(kind="file", location=str(written.path))).descriptor
    assert app is not None, "the plan checked every descriptor with the loader"
    existing = store.load(app)
    referenced = set(written.referenced_secrets)
    kept = {n: v for n, v in (existing.secrets if existing else {}).items() if n in referenced}
    secrets = {**kept, **written.moved}
    if not secrets:
        if existing is not None and existing.kind == "secrets":
            store.delete(app)
        return
    if existing is not None and existing.kind == "secrets" and existing.secrets == secrets:
        return
    store.save(app, store.new(app, "secrets").model_copy(update={"secrets": secrets}))


def _write_atomically(path: Path, text: str, mode: int, *, exclusive: bool = False) -> None:
    if exclusive and path.exists():
        raise FileExistsError(f"{path} exists")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _reason(exc: Exception) -> str:
    if isinstance(exc, AaiError):
        return exc.message
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or type(exc).__name__}".lstrip(": ")
    return str(exc)
