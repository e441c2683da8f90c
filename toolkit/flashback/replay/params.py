"""Typed protocol parameters: each protocol declares a converter per parameter, and every
value (from Python or from ``--param key=value`` text) goes through it before a step runs.

A converter takes ``(name, value)`` and returns the typed value or raises
:class:`~flashback.errors.ParameterError` with one sentence. ``"False"`` is false,
``"abc"`` is not a count, ``-1`` is not a number of passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from flashback.errors import ParameterError

Converter = Callable[[str, Any], Any]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _bad(name: str, value: Any, want: str) -> ParameterError:
    return ParameterError(f"{name}={value!r} is not {want}")


def boolean() -> Converter:
    """True/False, 1/0, or the words true/false, yes/no, on/off (any case)."""

    def conv(name: str, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise _bad(name, value, "a boolean; use true or false")

    return conv


def _number(name: str, value: Any, *, integral: bool) -> float | int:
    if isinstance(value, bool):
        raise _bad(name, value, "a number")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if integral else float(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise _bad(name, text, "an integer" if integral else "a number") from None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(name, value, "a finite number")
    if integral:
        if value != int(value):
            raise _bad(name, value, "a whole number")
        return int(value)
    return float(value)


def _check_range(name: str, value: float, lo: float | None, hi: float | None, lo_open: bool):
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise ParameterError(
            f"{name}={value!r} is out of range; it must be {'above' if lo_open else 'at least'} {lo:g}"
        )
    if hi is not None and value > hi:
        raise ParameterError(f"{name}={value!r} is out of range; it must be at most {hi:g}")


def integer(*, lo: int | None = None, hi: int | None = None, optional: bool = False) -> Converter:
    """A whole number in ``[lo, hi]``; ``None`` allowed when ``optional``."""

    def conv(name: str, value: Any) -> int | None:
        if optional and (value is None or (isinstance(value, str) and value.lower() == "none")):
            return None
        v = int(_number(name, value, integral=True))
        _check_range(name, v, lo, hi, False)
        return v

    return conv


def number(
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    optional: bool = False,
) -> Converter:
    """A finite float in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``); ``None`` allowed when
    ``optional``."""

    def conv(name: str, value: Any) -> float | None:
        if optional and (value is None or (isinstance(value, str) and value.lower() == "none")):
            return None
        v = float(_number(name, value, integral=False))
        _check_range(name, v, lo, hi, lo_open)
        return v

    return conv


def size_bytes(*, lo: int = 1) -> Converter:
    """Bytes: a number or a size string (``1g``, ``512m``), at least ``lo``."""

    def conv(name: str, value: Any) -> int:
        if isinstance(value, str) and not value.strip().lstrip("+-").replace(".", "", 1).isdigit():
            from flashback.units import parse_size

            out = parse_size(value, field=name)
        else:
            v = _number(name, value, integral=False)
            if v != int(v):
                raise _bad(name, value, "a whole number of bytes")
            out = int(v)
        _check_range(name, out, lo, None, False)
        return out

    return conv


def choice(*options: str) -> Converter:
    """One of ``options`` (text)."""

    def conv(name: str, value: Any) -> str:
        if isinstance(value, str) and value in options:
            return value
        raise ParameterError(f"{name}={value!r} is not allowed; use one of: {', '.join(options)}")

    return conv


def sequence(item: Converter, *, min_len: int = 1) -> Converter:
    """A tuple of items, from a list/tuple or comma-separated text (``"4k,64k"``)."""

    def conv(name: str, value: Any) -> tuple:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        elif not isinstance(value, (list, tuple)):
            value = [value]
        out = tuple(item(name, v) for v in value)
        if len(out) < min_len:
            raise ParameterError(f"{name} needs at least {min_len} value(s)")
        return out

    return conv


def text() -> Converter:
    """Any text (sizes are checked where they are used)."""

    def conv(name: str, value: Any) -> str:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
        raise _bad(name, value, "text")

    return conv


def interval_s(*, default: str = "1 s × scale on a sim drive") -> tuple[None, str, Converter]:
    """The ``interval_s`` parameter every protocol takes: its reporting interval in seconds,
    ``None`` for ``default`` (said in the description)."""
    return (
        None,
        f"reporting interval (default {default})",
        number(lo=0, lo_open=True, optional=True),
    )
