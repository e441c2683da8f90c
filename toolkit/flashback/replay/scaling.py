"""Scaling a review's procedure to a target of another capacity.

A review's spans, durations and byte limits were chosen for its drive. On a target whose
capacity is ``scale`` times the review drive's, every span, byte limit and duration is
multiplied by ``scale`` (durations too: a drive ``scale`` times smaller, written at the same
speed, reaches the same state ``scale`` times sooner). Results are quoted back in the review's
units by dividing by ``scale`` ("full-scale equivalent").

A scale the caller gives is a fraction in (0, 1] (:func:`parse_scale`); only the default, the
ratio of the target's capacity to the review drive's (:func:`default_scale`), may exceed 1.
"""

from __future__ import annotations

MIB = 1 << 20


def parse_scale(scale: float | str | None) -> float | None:
    """A scale as a fraction in (0, 1] from ``0.25``, ``"1/64"`` or ``"0.015625"``; ``None``
    stays ``None``. One rule for every scale in flashback (``units::parse_scale`` in the
    native core, also behind a ``sim:`` spec's ``scale=`` key): a number above 1 is refused,
    not read as a divisor (``"16"`` → "write 1/16").

    Raises:
        ParameterError: the scale is not a number or fraction in (0, 1].
    """
    if scale is None:
        return None
    from flashback import _native

    if isinstance(scale, bool) or not isinstance(scale, (str, int, float)):
        text = repr(scale)
    else:
        text = scale if isinstance(scale, str) else repr(float(scale))
    return _native.parse_scale("scale", text)


def default_scale(target_bytes: int, review_bytes: int | None) -> float:
    """``target_bytes / review_bytes`` (1.0 when the protocol has no review drive)."""
    if not review_bytes:
        return 1.0
    return target_bytes / review_bytes


def scaled_bytes(
    full_bytes: float, scale: float, *, align: int = MIB, minimum: int | None = None
) -> int:
    """``full_bytes × scale`` rounded down to ``align`` (at least ``minimum``, default ``align``)."""
    floor = align if minimum is None else minimum
    value = int(full_bytes * scale) // align * align
    return max(value, floor)


def scaled_seconds(full_s: float, scale: float, *, minimum: float = 0.0) -> float:
    """``full_s × scale`` (at least ``minimum`` seconds)."""
    return max(full_s * scale, minimum)


def full_scale(value: float | None, scale: float) -> float | None:
    """A measured span, byte count or time quoted back at the review drive's scale."""
    if value is None:
        return None
    return value / scale


def idema_bytes(gb: int) -> int:
    """User capacity of a drive sold as ``gb`` GB (IDEMA LBA1-03: 97,696,368 sectors for
    50 GB plus 1,953,504 per GB above, 512-byte sectors), e.g. 120 → 120,034,123,776."""
    return (97_696_368 + 1_953_504 * (gb - 50)) * 512
