"""DBus type signatures (the DBus specification's "Type System"), split into complete types.

A signature such as `"sa{sv}(ii)"` is a sequence of complete types: `s`, `a{sv}`, `(ii)`. The
gateway only reads signatures (to check descriptors and to convert arguments), so this module
validates and splits; it never builds one.
"""

from __future__ import annotations

import re

BASIC_CODES = "ybnqiuxtdsogh"
"""Fixed-size and string-like types: the only types allowed as dictionary keys."""

INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "y": (0, 2**8 - 1),
    "n": (-(2**15), 2**15 - 1),
    "q": (0, 2**16 - 1),
    "i": (-(2**31), 2**31 - 1),
    "u": (0, 2**32 - 1),
    "x": (-(2**63), 2**63 - 1),
    "t": (0, 2**64 - 1),
}

TYPE_NAMES: dict[str, str] = {
    "y": "byte",
    "b": "boolean",
    "n": "int16",
    "q": "uint16",
    "i": "int32",
    "u": "uint32",
    "x": "int64",
    "t": "uint64",
    "d": "double",
    "s": "string",
    "o": "object path",
    "g": "signature",
    "h": "unix file descriptor",
    "v": "variant",
    "a": "array",
    "(": "struct",
}

MAX_SIGNATURE_LENGTH = 255
MAX_NESTING = 32

OBJECT_PATH = re.compile(r"/\Z|(/[A-Za-z0-9_]+)+\Z")


class SignatureError(ValueError):
    """Why a string is not a DBus signature; the message is written for a descriptor author."""


def complete_types(signature: str) -> list[str]:
    """The complete types of `signature`, in order (`""` has none); raises SignatureError."""
    if len(signature) > MAX_SIGNATURE_LENGTH:
        raise SignatureError(f"it is longer than {MAX_SIGNATURE_LENGTH} characters")
    found: list[str] = []
    position = 0
    while position < len(signature):
        end = _end_of_type(signature, position, 0, 0)
        found.append(signature[position:end])
        position = end
    return found


def is_signature(text: str) -> bool:
    try:
        complete_types(text)
    except SignatureError:
        return False
    return True


def describe(type_code: str) -> str:
    """A readable name of one complete type: `a{sv}` → `dictionary of string to variant`."""
    if type_code.startswith("a{"):
        return f"dictionary of {describe(type_code[2])} to {describe(type_code[3:-1])}"
    if type_code.startswith("a"):
        return f"array of {describe(type_code[1:])}"
    if type_code.startswith("("):
        return f"struct {type_code}"
    return TYPE_NAMES.get(type_code, type_code)


def _end_of_type(signature: str, position: int, arrays: int, structs: int) -> int:
    if position >= len(signature):
        raise SignatureError(f"{signature!r} ends in the middle of a type")
    code = signature[position]
    if code in BASIC_CODES or code == "v":
        return position + 1
    if code == "a":
        if arrays >= MAX_NESTING:
            raise SignatureError(f"arrays are nested more than {MAX_NESTING} deep")
        if signature[position + 1 : position + 2] == "{":
            return _end_of_dict_entry(signature, position + 1, arrays + 1, structs + 1)
        return _end_of_type(signature, position + 1, arrays + 1, structs)
    if code == "(":
        if structs >= MAX_NESTING:
            raise SignatureError(f"structs are nested more than {MAX_NESTING} deep")
        inner = position + 1
        if signature[inner : inner + 1] == ")":
            raise SignatureError(f"the empty struct '()' at character {position + 1} is not allowed")
        while inner < len(signature) and signature[inner] != ")":
            inner = _end_of_type(signature, inner, arrays, structs + 1)
        if inner >= len(signature):
            raise SignatureError(f"the '(' at character {position + 1} is never closed")
        return inner + 1
    if code == "{":
        raise SignatureError(f"'{{' at character {position + 1} is only allowed right after 'a'")
    if code in ")}":
        raise SignatureError(f"{code!r} at character {position + 1} closes nothing")
    raise SignatureError(f"{code!r} at character {position + 1} is not a DBus type code")


def _end_of_dict_entry(signature: str, position: int, arrays: int, structs: int) -> int:
    key = signature[position + 1 : position + 2]
    if key not in tuple(BASIC_CODES):
        raise SignatureError(
            f"a dictionary key must be a basic type (one of {BASIC_CODES}), not {key or 'nothing'!r} "
            f"(character {position + 2})"
        )
    end = _end_of_type(signature, position + 2, arrays, structs)
    if signature[end : end + 1] != "}":
        raise SignatureError(
            f"the dictionary entry at character {position + 1} must hold exactly one key type and "
            "one value type, then '}'"
        )
    return end + 1
