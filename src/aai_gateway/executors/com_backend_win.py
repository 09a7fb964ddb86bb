"""The real COM backend, through pywin32 (Windows only; imported lazily, never on other systems).

COM needs each thread that uses it initialized: `thread_scope()` wraps one sequence in the
worker thread that runs it (`CoInitialize` … `CoUninitialize`). Objects are late-bound
(`win32com.client.Dispatch`), so methods and properties are plain attribute access. Not run in
this project's CI (Linux); see docs/windows.md.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .com_interpreter import AttributeAccess, ProgIdNotRegisteredError

# HRESULTs of CLSIDFromProgID when no class is registered under the name
_NOT_REGISTERED = frozenset({-2147221005, -2147221164})  # CO_E_CLASSSTRING, REGDB_E_CLASSNOTREG


def pywin32_installed() -> bool:
    return importlib.util.find_spec("win32com") is not None


class PyWin32Backend(AttributeAccess):
    @contextmanager
    def thread_scope(self) -> Iterator[None]:
        pythoncom: Any = importlib.import_module("pythoncom")
        pythoncom.CoInitialize()
        try:
            yield
        finally:
            pythoncom.CoUninitialize()

    def create(self, prog_id: str) -> Any:
        pywintypes: Any = importlib.import_module("pywintypes")
        client: Any = importlib.import_module("win32com.client")
        try:
            return client.Dispatch(prog_id)
        except pywintypes.com_error as exc:
            if exc.args and exc.args[0] in _NOT_REGISTERED:
                raise ProgIdNotRegisteredError(prog_id) from exc
            raise
