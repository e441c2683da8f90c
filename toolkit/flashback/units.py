"""Size and duration strings, parsed as the native core parses them (binary sizes, as fio)."""

from __future__ import annotations

from flashback import _native


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
