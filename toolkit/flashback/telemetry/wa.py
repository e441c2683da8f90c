"""Write amplification measured from a drive's own counters: ΔNAND / Δhost, with the bound
the counters' resolution allows, or ``None`` with a reason — never a silent 1.0."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import polars as pl

from flashback.errors import AnalysisError
from flashback.telemetry.snapshot import Snapshot

#: default window: long enough that one counter unit is at most this fraction of Δhost
DEFAULT_RESOLUTION = 0.02

HOST_COL = "drive_host_written_bytes"
NAND_COL = "drive_nand_written_bytes"


@dataclasses.dataclass(frozen=True, kw_only=True)
class WriteAmplification:
    """ΔNAND / Δhost between two counter readings.

    Attributes:
        wa: the ratio of the counter differences (``None`` when it cannot be measured).
        wa_lo, wa_hi: the bounds: each difference is known to ± one counter unit (a counter
            truncates or rounds to whole units at both readings).
        host_bytes, nand_bytes: the differences, bytes.
        host_error_bytes, nand_error_bytes: one unit of each counter, bytes.
        reason: why ``wa`` is ``None``.
    """

    wa: float | None
    wa_lo: float | None
    wa_hi: float | None
    host_bytes: float | None
    nand_bytes: float | None
    host_error_bytes: float | None
    nand_error_bytes: float | None
    reason: str | None = None


def ratio_bounds(
    *, host_bytes: float, nand_bytes: float, host_error_bytes: float, nand_error_bytes: float
) -> WriteAmplification:
    """ΔNAND/Δhost with its bounds from the two counters' units.

    A window too short for the host counter's unit is a ``None`` with a reason.
    """
    base: dict[str, Any] = dict(  # the four counts both results carry
        host_bytes=host_bytes,
        nand_bytes=nand_bytes,
        host_error_bytes=host_error_bytes,
        nand_error_bytes=nand_error_bytes,
    )
    if host_bytes <= host_error_bytes:
        return WriteAmplification(
            wa=None,
            wa_lo=None,
            wa_hi=None,
            reason=f"the host wrote {host_bytes} bytes by its counter, not more than one "
            f"counter unit ({host_error_bytes} bytes): too short a window to measure",
            **base,
        )
    wa = nand_bytes / host_bytes
    lo = max(nand_bytes - nand_error_bytes, 0) / (host_bytes + host_error_bytes)
    hi = (nand_bytes + nand_error_bytes) / (host_bytes - host_error_bytes)
    return WriteAmplification(wa=wa, wa_lo=lo, wa_hi=hi, **base)


def between(before: Snapshot, after: Snapshot) -> WriteAmplification:
    """Write amplification of what a drive did between two snapshots (or over its life,
    with ``before`` a snapshot of zeros).

    Raises:
        AnalysisError: a counter ran backwards (different drives, or a reset).
    """
    nothing: dict[str, Any] = dict(
        wa=None,
        wa_lo=None,
        wa_hi=None,
        host_bytes=None,
        nand_bytes=None,
        host_error_bytes=None,
        nand_error_bytes=None,
    )
    for s in (before, after):
        if s.nand_written_bytes is None:
            why = s.reasons.get("nand_written_bytes", "no NAND-write counter")
            return WriteAmplification(**{**nothing, "reason": f"no NAND counter: {why}"})
        if s.host_written_bytes is None:
            why = s.reasons.get("host_written_bytes", "no host-write counter")
            return WriteAmplification(**{**nothing, "reason": f"no host counter: {why}"})
    dh = after.host_written_bytes - before.host_written_bytes  # type: ignore[operator]
    dn = after.nand_written_bytes - before.nand_written_bytes  # type: ignore[operator]
    if dh < 0 or dn < 0:
        raise AnalysisError(
            "a write counter ran backwards between the two snapshots; are they of the same "
            "drive, in order?"
        )
    return ratio_bounds(
        host_bytes=dh,
        nand_bytes=dn,
        host_error_bytes=after.host_written_error_bytes or 0,
        nand_error_bytes=after.nand_written_error_bytes or 0,
    )


def lifetime(snap: Snapshot) -> WriteAmplification:
    """Lifetime write amplification from one snapshot (NAND written / host written).

    A missing counter is a ``None`` with a reason.
    """
    zero = dataclasses.replace(snap, host_written_bytes=0, nand_written_bytes=0)
    if snap.nand_written_bytes is None or snap.host_written_bytes is None:
        return between(snap, snap)
    return between(zero, snap)


def write_amplification(
    cap: Any,
    *,
    window_bytes: float | None = None,
    host_unit_bytes: int | None = None,
    nand_unit_bytes: int | None = None,
) -> pl.DataFrame:
    """Write amplification of a capture measured from the drive's counters
    (``drive_host_written_bytes``, ``drive_nand_written_bytes``), over consecutive windows
    of at least ``window_bytes`` of host writes by the drive's counter (default: long
    enough that one host counter unit is 2 % of the window).

    Returns one row per window: ``t_start_s, t_end_s, host_bytes, nand_bytes, wa, wa_lo,
    wa_hi, reason``; a capture without a NAND counter gives one row with ``wa`` null and
    the reason (from ``meta['telemetry']``).

    Units come from ``meta['telemetry']`` (``host_unit_bytes``, ``nand_unit_bytes``) unless
    given.

    Raises:
        AnalysisError: no drive host-write counter (a capture without telemetry: the
            message gives ``meta['telemetry']``'s reason), a counter that runs backwards, or a
            non-positive ``window_bytes``.
    """
    df: pl.DataFrame = cap.intervals
    meta: dict[str, Any] = getattr(cap, "meta", {}) or {}
    tel = meta.get("telemetry") or {}
    if HOST_COL not in df.columns or df[HOST_COL].null_count() == df.height:
        why = (
            tel.get("reason")
            or tel.get("counters_reason")
            or "the capture has no drive write counters"
        )
        raise AnalysisError(f"write_amplification: {why}; it needs {HOST_COL}")
    hu = int(host_unit_bytes if host_unit_bytes is not None else tel.get("host_unit_bytes") or 0)
    nu = int(nand_unit_bytes if nand_unit_bytes is not None else tel.get("nand_unit_bytes") or 0)
    sub = df.select("t_s", "interval_s", HOST_COL, *([NAND_COL] if NAND_COL in df.columns else []))
    sub = sub.filter(pl.col(HOST_COL).is_not_null())
    if NAND_COL not in sub.columns or sub[NAND_COL].null_count() == sub.height or sub.height < 2:
        why = tel.get("nand_reason") or "the drive reports no NAND-write counter"
        return _frame(
            [
                dict(
                    t_start_s=None,
                    t_end_s=None,
                    host_bytes=None,
                    nand_bytes=None,
                    wa=None,
                    wa_lo=None,
                    wa_hi=None,
                    reason=why,
                )
            ]
        )
    sub = sub.filter(pl.col(NAND_COL).is_not_null())
    host = sub[HOST_COL].to_list()
    nand = sub[NAND_COL].to_list()
    t_end = sub["t_s"].to_list()
    if any(b < a for a, b in itertools.pairwise(host)) or any(
        b < a for a, b in itertools.pairwise(nand)
    ):
        raise AnalysisError("write_amplification: a drive write counter runs backwards")
    if window_bytes is None:
        window_bytes = max(hu / DEFAULT_RESOLUTION, 1.0)
    if not math.isfinite(window_bytes) or window_bytes <= 0:
        raise AnalysisError(f"window_bytes must be a positive number, got {window_bytes!r}")
    rows: list[dict[str, Any]] = []
    start = 0
    for i in range(1, len(host)):
        if host[i] - host[start] >= window_bytes or i == len(host) - 1:
            w = ratio_bounds(
                host_bytes=host[i] - host[start],
                nand_bytes=nand[i] - nand[start],
                host_error_bytes=hu,
                nand_error_bytes=nu,
            )
            if host[i] - host[start] < window_bytes and rows:
                break  # a short tail: left out rather than reported with a wide bound
            rows.append(
                dict(
                    t_start_s=t_end[start],
                    t_end_s=t_end[i],
                    host_bytes=w.host_bytes,
                    nand_bytes=w.nand_bytes,
                    wa=w.wa,
                    wa_lo=w.wa_lo,
                    wa_hi=w.wa_hi,
                    reason=w.reason,
                )
            )
            start = i
    return _frame(rows)


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={
            "t_start_s": pl.Float64,
            "t_end_s": pl.Float64,
            "host_bytes": pl.Int64,
            "nand_bytes": pl.Int64,
            "wa": pl.Float64,
            "wa_lo": pl.Float64,
            "wa_hi": pl.Float64,
            "reason": pl.String,
        },
    )
