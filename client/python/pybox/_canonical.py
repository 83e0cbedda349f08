"""RFC 8785 (JSON Canonicalization Scheme), as pyboxd writes it for the receipt's signature
(util/json_writer.cpp, JsonForm::canonical; docs/receipt.md#signature), and the strict reading
of a receipt's text that `pybox verify` does first (util/strict_json.cpp). Pure."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

MAX_DEPTH = 64
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


class CanonicalError(ValueError):
    """`code` is "not_json" (the text) or "not_canonical" (a value RFC 8785 cannot express)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _not_json(message: str) -> NoReturn:
    raise CanonicalError("not_json", message)


def es6_number(number: float) -> str:
    """ECMAScript's Number.prototype.toString of a finite double (ECMA-262 7.1.12.1)."""
    if number == 0:
        return "0"  # -0 too
    text = repr(float(number))  # the shortest digits that read back as the same double
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    mantissa, _, exponent = text.partition("e")
    point = mantissa.find(".")
    digits = mantissa.replace(".", "")
    n = (point if point >= 0 else len(mantissa)) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    out = "-" if negative else ""
    if k <= n <= 21:
        return out + digits + "0" * (n - k)
    if 0 < n <= 21:
        return out + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return out + "0." + "0" * (-n) + digits
    exp = n - 1
    return out + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if exp >= 0 else "-") + str(abs(exp))


def _escaped(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif code < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code, f"\\u{code:04x}"))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise CanonicalError("not_canonical", "The JSON has no canonical form: a string is not valid UTF-8.") from None


def _utf16_units(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _append(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        if value < _INT64_MIN or value > _UINT64_MAX or float(value) != value:
            raise CanonicalError("not_canonical",
                                 f"The JSON has no canonical form: the integer {value} is not exactly a double.")
        out.append(es6_number(float(value)))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalError("not_canonical", "The JSON has no canonical form: a number is not finite.")
        out.append(es6_number(value))
    elif isinstance(value, str):
        _check_text(value)
        out.append(_escaped(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _append(item, out)
        out.append("]")
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise CanonicalError("not_canonical", "The JSON has no canonical form: a key is not text.")
            _check_text(key)
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16_units)):
            if index:
                out.append(",")
            out.append(_escaped(key))
            out.append(":")
            _append(value[key], out)
        out.append("}")
    else:
        raise CanonicalError("not_canonical", f"The JSON has no canonical form: a {type(value).__name__} is not JSON.")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of a JSON value (as json.loads or parse_strictly gives it)."""
    out: list[str] = []
    _append(value, out)
    return "".join(out).encode("utf-8")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise CanonicalError("not_json", f'The receipt repeats the key "{key[:64]}", so it has no single meaning.')
        result[key] = value
    return result


def _float(text: str) -> float:
    # A number past a double's range reads as an infinity, as pyboxd's reader reads it; it then
    # has no canonical form (not_canonical), as in `pybox verify`.
    return float(text)


def _int(text: str) -> int | float:
    number = int(text)
    if _INT64_MIN <= number <= _UINT64_MAX:
        return number
    return _float(text)  # past 64 bits pyboxd's reader reads it as the nearest double, and so does this


def _constant(text: str) -> NoReturn:
    _not_json(f"The receipt is not JSON: {text} is not a JSON value.")


def _check_strings_and_depth(value: Any, depth: int) -> None:
    if isinstance(value, str):
        if any(0xD800 <= ord(char) <= 0xDFFF for char in value):
            _not_json("The receipt is not JSON: a string holds a lone UTF-16 surrogate.")
    elif isinstance(value, (dict, list)):
        if depth > MAX_DEPTH:
            _not_json(f"The receipt is not JSON: it nests deeper than {MAX_DEPTH} levels.")
        items = list(value.items()) if isinstance(value, dict) else [(None, item) for item in value]
        for key, item in items:
            if key is not None:
                _check_strings_and_depth(key, depth)
            _check_strings_and_depth(item, depth + 1)


def parse_strictly(text: str | bytes) -> Any:
    """One JSON document read as pyboxd's strict reader reads it: UTF-8, no repeated key, no
    NaN or Infinity literal, no lone surrogate, at most 64 levels (a number past a double's
    range reads as an infinity, which canonical_json refuses).
    Raises CanonicalError("not_json") otherwise."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            _not_json(f"The receipt is not JSON: it is not UTF-8 text ({error.reason} at byte {error.start}).")
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_float=_float, parse_int=_int,
                           parse_constant=_constant)
    except CanonicalError:
        raise
    except RecursionError:
        _not_json(f"The receipt is not JSON: it nests deeper than {MAX_DEPTH} levels.")
    except ValueError as error:
        _not_json(f"The receipt is not JSON: {error}.")
    _check_strings_and_depth(value, 1)
    return value
