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

from fractions import Fraction

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


#: Granularity of a file target a replay creates (one 4 KiB logical block).
CREATE_ALIGN = 4096
#: Largest denominator :func:`default_scale` reads a created file's scale back as.
MAX_DENOMINATOR = 4096


def created_bytes(review_bytes: int, scale: float) -> int:
    """Size of a file target a replay creates at ``scale``: ``review_bytes × scale`` rounded
    up to a 4 KiB block, so that its capacity ratio is never under ``scale`` (read back as
    the scale, a ratio a hair under it made every MiB-aligned byte count a MiB short)."""
    return max(-(-int(review_bytes * scale) // CREATE_ALIGN) * CREATE_ALIGN, CREATE_ALIGN)


def _simplest_in(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction with the smallest denominator in the closed interval ``[lo, hi]``
    (``0 ≤ lo ≤ hi``; the Stern–Brocot descent)."""
    n = lo.numerator // lo.denominator
    if n == lo or n + 1 <= hi:
        return Fraction(n if n == lo else n + 1)
    return n + 1 / _simplest_in(1 / (hi - n), 1 / (lo - n))


def default_scale(target_bytes: int, review_bytes: int | None) -> float:
    """``target_bytes / review_bytes`` (1.0 when the protocol has no review drive).

    A target exactly the size a replay creates (:func:`created_bytes`) at a fraction ``p/q``
    is read back as the simplest such fraction (``q`` ≤ :data:`MAX_DENOMINATOR`), so a replay
    on the file another replay created at ``scale="1/64"`` runs at 1/64, not at the file's
    ratio. Where several fractions make the same file (scales under about 4 KiB / the review
    capacity apart) the simplest is taken: never further from the ratio than 4 KiB.
    """
    if not review_bytes:
        return 1.0
    ratio = target_bytes / review_bytes
    if target_bytes <= CREATE_ALIGN or target_bytes % CREATE_ALIGN:
        return ratio
    lo = Fraction(target_bytes - CREATE_ALIGN + 1, review_bytes)
    near = _simplest_in(lo, Fraction(target_bytes, review_bytes))
    if (
        near.denominator <= MAX_DENOMINATOR
        and created_bytes(review_bytes, float(near)) == target_bytes
    ):
        return float(near)
    return ratio


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
