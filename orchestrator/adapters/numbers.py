"""Numbers read out of tool text (pure): a malformed number is an EngineOutputError naming the
field and the text, never a bare ValueError.

The text patterns of the adapters match loosely (`[\\d.]+` also matches `1.2.3` and `.`, and
`\\d+` matches 5,000 digits, which int() refuses and float() turns into infinity), so every
number a pattern captured goes through here.
"""
from __future__ import annotations

import math

from ..errors import EngineOutputError


def _describe(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def text_float(text: str, field: str, where: str) -> float:
    """A finite float from `text`; EngineOutputError names `field` in `where` otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise EngineOutputError(f"{where}: {field} is {_describe(text)}; expected a finite number "
                                f"(output corrupted or truncated?)")
    return value


def text_int(text: str, field: str, where: str) -> int:
    """An integer from the digits in `text` (at most 19 of them: DuckDB's BIGINT)."""
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and len(digits) <= 19:
        return int(digits)
    raise EngineOutputError(f"{where}: {field} is {_describe(text)}; expected an integer "
                            f"below 10**19 (output corrupted or truncated?)")


def json_float(value: object) -> float | None:
    """A JSON number as a float (an integer too large for one is infinite, which the checks in
    validate.py refuse, instead of an OverflowError); None for anything else, bool included."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
