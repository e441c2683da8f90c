"""Size and duration strings, parsed as the native core parses them (binary sizes, as fio)."""

from __future__ import annotations

from flashback import _native

__all__ = ["parse_size", "parse_duration", "interval_seconds"]


def parse_size(text: int | str, *, field: str = "size") -> int:
    """Bytes in a size such as ``4k``, ``1.8t`` or ``512``.

    Raises:
        ParameterError: ``text`` is not a size.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    return _native.parse_size(field, str(text))


def parse_duration(text: float | str, *, field: str = "time") -> float:
    """Seconds in a duration such as ``30s``, ``5m``, ``2h`` or ``1.5``.

    Raises:
        ParameterError: ``text`` is not a duration.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    return _native.parse_duration(field, str(text))


def interval_seconds(interval_s: float | None, *, default_s: float = 1.0, where: str) -> float:
    """The reporting-interval length in seconds for a function that takes ``interval_s=``
    (float seconds, the public API's one spelling).

    Args:
        interval_s: the keyword's value, or ``None``.
        default_s: the length when it is not given.
        where: the calling function's name, for the messages.

    Raises:
        ParameterError: the length is not a number of seconds above zero.
    """
    import math

    from flashback.errors import ParameterError

    if interval_s is None:
        return float(default_s)
    if isinstance(interval_s, bool) or not isinstance(interval_s, (int, float)):
        raise ParameterError(
            f"{where}(interval_s={interval_s!r}) needs a number of seconds, e.g. 1.0 or 0.5"
        )
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise ParameterError(
            f"{where}(interval_s={interval_s!r}) must be a number of seconds above zero"
        )
    return float(interval_s)
