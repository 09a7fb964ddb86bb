"""JSON values ↔ DBus values, for DBus methods that take typed arguments (pure functions).

Arguments arrive validated against the tool's JSON Schema; this module checks what the schema
cannot: integer ranges, strings DBus cannot carry (NUL, lone surrogates), object paths and
signatures. A value that does not fit raises `DbusValueError` with the JSON pointer of the value.

Variants (`v`) are guessed from the JSON type: string → `s`, boolean → `b`, integer → `i` when
it fits, else `x`, else `t`; number → `d`; array → `as`/`ab`/`ax` when every item has that
type, `ad` for numbers a double holds exactly, else `av`; object → `a{sv}`. `null` has no DBus
form.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dbus_fast import Variant

from ..descriptor.dbus_signature import (
    INTEGER_RANGES,
    OBJECT_PATH,
    SignatureError,
    complete_types,
    describe,
)
from ..errors import escape_pointer_token

_INTEGER_KEY = re.compile(r"-?[0-9]+\Z")


class DbusValueError(ValueError):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '(arguments)'}: {message}")
        self.path = path
        self.message = message


def to_dbus(value: Any, type_code: str, path: str) -> Any:
    """`value` (a JSON value) as dbus-fast expects it for the complete type `type_code`."""
    code = type_code[0]
    if code == "s":
        return _string(value, path)
    if code == "o":
        text = _string(value, path)
        if not OBJECT_PATH.match(text):
            raise DbusValueError(path, f"{text!r} is not a DBus object path like '/org/example/Item'")
        return text
    if code == "g":
        text = _string(value, path)
        try:
            complete_types(text)
        except SignatureError as exc:
            raise DbusValueError(path, f"{text!r} is not a DBus signature: {exc}") from None
        return text
    if code == "b":
        if not isinstance(value, bool):
            raise _wrong_type(value, type_code, path)
        return value
    if code in INTEGER_RANGES:
        return _integer(value, type_code, path)
    if code == "d":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _wrong_type(value, type_code, path)
        return float(value)
    if code == "v":
        return guess_variant(value, path)
    if type_code.startswith("a{"):
        return _dictionary(value, type_code[2], type_code[3:-1], path)
    if type_code == "ay":
        items = _array(value, type_code, path)
        return bytes(_integer(item, "y", _child(path, i)) for i, item in enumerate(items))
    if code == "a":
        items = _array(value, type_code, path)
        return [to_dbus(item, type_code[1:], _child(path, i)) for i, item in enumerate(items)]
    if code == "(":
        members = complete_types(type_code[1:-1])
        items = _array(value, type_code, path)
        if len(items) != len(members):
            raise DbusValueError(
                path, f"expected an array of {len(members)} items for {describe(type_code)}, got {len(items)}"
            )
        pairs = enumerate(zip(items, members, strict=True))
        return [to_dbus(item, member, _child(path, i)) for i, (item, member) in pairs]
    raise DbusValueError(path, f"the DBus type {type_code!r} ({describe(type_code)}) cannot be passed")


def guess_variant(value: Any, path: str) -> Variant:
    if isinstance(value, bool):
        return Variant("b", value)
    if isinstance(value, int):
        for code in ("i", "x", "t"):
            low, high = INTEGER_RANGES[code]
            if low <= value <= high:
                return Variant(code, value)
        raise DbusValueError(path, f"{value} does not fit any DBus integer type")
    if isinstance(value, float):
        return Variant("d", value)
    if isinstance(value, str):
        return Variant("s", _string(value, path))
    if isinstance(value, list):
        item_code = _common_item_code(value)
        if item_code is not None:
            return Variant("a" + item_code, to_dbus(value, "a" + item_code, path))
        return Variant("av", [guess_variant(item, _child(path, i)) for i, item in enumerate(value)])
    if isinstance(value, dict):
        return Variant("a{sv}", _dictionary(value, "s", "v", path))
    raise DbusValueError(path, "null has no DBus form; leave the value out or give it a value")


def to_json(value: Any) -> Any:
    """A DBus value as dbus-fast returns it, as a JSON value: variants unwrapped, byte arrays
    as arrays of numbers, structs as arrays, dictionary keys as strings."""
    if isinstance(value, Variant):
        return to_json(value.value)
    if isinstance(value, bytes | bytearray):
        return list(value)
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {_json_key(key): to_json(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def reply_to_json(body: list[Any]) -> Any:
    """A method's reply values: nothing → null, one value → that value, several → an array."""
    if not body:
        return None
    if len(body) == 1:
        return to_json(body[0])
    return [to_json(item) for item in body]


# --------------------------------------------------------------------------- helpers


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _wrong_type(value, "s", path)
    if "\x00" in value:
        raise DbusValueError(path, "DBus strings cannot contain the NUL character (U+0000)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DbusValueError(path, f"text that is not valid Unicode ({exc.reason})") from None
    return value


def _integer(value: Any, type_code: str, path: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(value, type_code, path)
    low, high = INTEGER_RANGES[type_code]
    if not low <= value <= high:
        raise DbusValueError(
            path, f"{value} is out of range for a DBus {describe(type_code)} ({low} to {high})"
        )
    return value


def _array(value: Any, type_code: str, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _wrong_type(value, type_code, path)
    return list(value)


def _dictionary(value: Any, key_code: str, value_code: str, path: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise _wrong_type(value, f"a{{{key_code}{value_code}}}", path)
    converted: dict[Any, Any] = {}
    for key, item in value.items():
        where = _child(path, key)
        converted[_key(key, key_code, where)] = to_dbus(item, value_code, where)
    return converted


def _key(key: str, key_code: str, path: str) -> Any:
    """JSON object keys are strings; a dictionary with integer, boolean or double keys takes them
    written as such ("42", "true", "1.5")."""
    if key_code in INTEGER_RANGES:
        if not _INTEGER_KEY.match(key):
            raise DbusValueError(path, f"the key {key!r} is not an integer ({describe(key_code)} keys)")
        return _integer(int(key), key_code, path)
    if key_code == "b":
        if key not in ("true", "false"):
            raise DbusValueError(path, f"the key {key!r} is not true or false (boolean keys)")
        return key == "true"
    if key_code == "d":
        try:
            return float(key)
        except ValueError:
            raise DbusValueError(path, f"the key {key!r} is not a number (double keys)") from None
    return to_dbus(key, key_code, path)


def _common_item_code(items: list[Any]) -> str | None:
    if not items:
        return None
    if all(isinstance(item, str) for item in items):
        return "s"
    if all(isinstance(item, bool) for item in items):
        return "b"
    if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        low, high = INTEGER_RANGES["x"]
        return "x" if all(low <= item <= high for item in items) else None
    if all(isinstance(item, float) or _exact_as_double(item) for item in items):
        return "d"
    return None


def _exact_as_double(item: Any) -> bool:
    return isinstance(item, int) and not isinstance(item, bool) and abs(item) <= 2**53


def _json_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


def _child(path: str, token: str | int) -> str:
    return f"{path}/{escape_pointer_token(token)}"


_JSON_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def _wrong_type(value: Any, type_code: str, path: str) -> DbusValueError:
    if value is None:
        got = "null"
    elif isinstance(value, dict):
        got = "an object"
    elif isinstance(value, list | tuple):
        got = "an array"
    else:
        got = _JSON_NAMES.get(type(value), type(value).__name__)
    return DbusValueError(path, f"expected a value for DBus {describe(type_code)} ({type_code!r}), got {got}")
