"""``to_rounds``: aggregate per-interval data into rounds of time, bytes written or drive
fills (the unit a steady-state rule works on)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl

from flashback import columns
from flashback.analysis import frames
from flashback.errors import AnalysisError, ParameterError

#: cumulative columns a round reports as its extents (``t_*_s``, ``bytes_*``), not as increases
_EXTENTS = ("t_s", "host_written_bytes")


def parse_round(spec: str | float, capacity: float | None) -> tuple[str, float]:
    """``"60s"``/``"5m"`` → ("time", s); ``"1g"``/``"512m"`` → ("bytes", n);
    ``"0.25fill"`` → ("bytes", 0.25·capacity); a plain number is bytes (as sizes are).

    Raises:
        AnalysisError: malformed spec, or ``fill`` without a known capacity.
    """
    from flashback.units import parse_duration, parse_size

    if isinstance(spec, (int, float)):
        return "bytes", float(spec)
    s = str(spec).strip().lower()
    m = re.fullmatch(r"([0-9.]+)\s*fills?", s)
    if m:
        if not capacity:
            raise AnalysisError(
                f"round={spec!r} needs the drive capacity; pass capacity_bytes= or a capture "
                "whose meta names the target size"
            )
        return "bytes", float(m.group(1)) * capacity
    try:
        if re.fullmatch(r"[0-9.]+\s*(s|sec|m|min|h)", s):
            return "time", float(parse_duration(s, field="round"))
        return "bytes", float(parse_size(s, field="round"))
    except ParameterError:
        raise AnalysisError(
            f"round={spec!r} is not a duration (60s), a size (1g) or a fill fraction (0.25fill)"
        ) from None


def to_rounds(
    data: Any, *, round: str | float = "60s", capacity_bytes: float | None = None
) -> pl.DataFrame:
    """Aggregates intervals into rounds; or, given a list of captures (the fio JSON of each
    PTS round, say), makes each capture one round, numbered 1, 2, … in the order given (time
    and bytes run on from one to the next; ``round=`` is then not used).

    Returns one row per round: ``round`` (1-based), ``t_start_s``, ``t_end_s``, ``seconds``,
    ``bytes_start``, ``bytes_end`` (host bytes written), ``gb_end``, ``fills_end`` (null when
    the capacity is unknown), ``complete`` (every round but a short last one), and every other
    numeric column by its kind in the column table (:mod:`flashback.columns`): counters summed
    (``write_bytes``...), cumulative columns as their increase over the round
    (``gc_copied_bytes``, ``nand_written_bytes``: bytes in that round), gauges as their
    interval-weighted mean (``write_mbps``, ``write_iops``, latency columns...).

    Raises:
        AnalysisError: bad input (see :func:`flashback.changepoints`), a bad ``round``, or a
            round shorter than one of the capture's intervals (a round is made of whole
            intervals, so rounds would be skipped).
    """
    if isinstance(data, (list, tuple)):
        return _one_round_each(data, capacity_bytes)
    df, meta = frames.as_frame(data)
    cap = frames.capacity_bytes(meta, capacity_bytes)
    kind, size = parse_round(round, cap)
    if size <= 0:
        raise AnalysisError(f"round={round!r} must be longer than zero")
    t = frames.column(df, "t_s", role="t_s")
    frames.check_x(t, "t_s")
    dt = _interval_lengths(df, t)
    t_start = t - dt
    if "host_written_bytes" in df.columns:
        hb = frames.column(df, "host_written_bytes", role="host_written_bytes")
        frames.check_x(hb, "host_written_bytes")
        wb = (
            df.get_column("write_bytes").cast(pl.Float64).to_numpy()
            if "write_bytes" in df.columns
            else np.r_[hb[0], np.diff(hb)]
        )
        hb_start = hb - wb
    else:
        hb = hb_start = np.zeros_like(t)
    if kind == "time":
        idx = np.floor((t_start - t_start[0]) / size + 1e-9).astype(np.int64)
    else:
        idx = np.floor((hb_start - hb_start[0]) / size + 1e-9).astype(np.int64)
    skipped = np.diff(idx) > 1
    if skipped.any():
        # an interval holding more than a round: rounds would be skipped or merged silently
        unit, per = ("s", dt) if kind == "time" else ("bytes", hb - hb_start)
        raise AnalysisError(
            f"round={round!r} ({size:,.6g} {unit}) is shorter than some of the capture's "
            f"intervals (up to {float(np.max(per)):,.6g} {unit}); use larger rounds or capture "
            "with a shorter interval"
        )
    out = _aggregate(_increments(df, meta), idx + 1, t_start, dt, hb_start, hb)
    extent = out["seconds"] if kind == "time" else out["bytes_end"] - out["bytes_start"]
    complete = (pl.col("round") < pl.col("round").max()) | (extent >= 0.999 * size)
    return _finish(out, cap, complete)


def _interval_lengths(df: pl.DataFrame, t: np.ndarray) -> np.ndarray:
    """Each interval's length (s): ``interval_s``, or the steps of its end times ``t``."""
    if "interval_s" in df.columns:
        return frames.column(df, "interval_s", role="interval_s")
    return np.r_[t[0], np.diff(t)]


def _one_round_each(captures: list | tuple, capacity_bytes: float | None) -> pl.DataFrame:
    """Each capture (or frame) of the list becomes one round, in the order given; its
    intervals follow the previous capture's in time and in host bytes written.

    Raises:
        AnalysisError: an empty list, or an item that is not a capture/frame of intervals.
    """
    if not captures:
        raise AnalysisError("the list of rounds is empty; pass one capture per round")
    parts, metas, dts, wbs, t0, b0 = [], [], [], [], 0.0, 0.0
    for i, item in enumerate(captures, start=1):
        df, meta = frames.as_frame(item)
        metas.append(meta)
        t = frames.column(df, "t_s", role="t_s")
        dt = _interval_lengths(df, t)
        wb = (
            df.get_column("write_bytes").cast(pl.Float64).fill_null(0).to_numpy()
            if "write_bytes" in df.columns
            else np.zeros(df.height)
        )
        ends = t0 + np.cumsum(dt)
        hb = b0 + np.cumsum(wb)
        part = _increments(df, meta).drop([c for c in _EXTENTS if c in df.columns])
        parts.append(
            part.with_columns(
                pl.Series("t_s", ends), pl.Series("host_written_bytes", hb), pl.lit(i).alias("__r")
            )
        )
        dts.append(dt)
        wbs.append(wb)
        t0, b0 = float(ends[-1]), float(hb[-1])
    df = pl.concat(parts, how="diagonal_relaxed")
    t, dt = df["t_s"].to_numpy(), np.concatenate(dts)
    hb, wb = df["host_written_bytes"].to_numpy(), np.concatenate(wbs)
    idx = df["__r"].to_numpy().astype(np.int64)
    cap = next((c for m in metas if (c := frames.capacity_bytes(m, capacity_bytes))), None)
    out = _aggregate(df.drop("__r"), idx, t - dt, dt, hb - wb, hb)
    return _finish(out, cap, pl.lit(True))


def _increments(df: pl.DataFrame, meta: dict[str, Any]) -> pl.DataFrame:
    """``df`` with each cumulative column (by the column table's kind; but the extents
    ``t_s`` and ``host_written_bytes``) replaced by its increase over each interval: the value
    minus the previous interval's (nulls carry the last value forward). The first interval's
    increase starts from ``meta["cumulative_start"]`` (written by every run since captures
    carry it) and is null when that is unknown, so a round then misses its first interval's
    increase rather than counting the whole running total."""
    start = meta.get("cumulative_start") or {}
    out = []
    for c, dtype in df.schema.items():
        if c in _EXTENTS or columns.kind(c) != "cumulative" or not dtype.is_numeric():
            continue
        cast = pl.Int64 if dtype.is_integer() else pl.Float64
        v = pl.col(c).cast(cast).forward_fill()
        s0 = start.get(c)
        prev = v.shift(1) if s0 is None else v.shift(1, fill_value=pl.lit(s0, dtype=cast))
        out.append((v - prev).alias(c))
    return df.with_columns(out) if out else df


def _aggregate(
    df: pl.DataFrame,
    labels: np.ndarray,
    t_start: np.ndarray,
    dt: np.ndarray,
    hb_start: np.ndarray,
    hb: np.ndarray,
) -> pl.DataFrame:
    """One row per round label: time and byte extents, and each column by its kind in the
    column table: counters and the increases of cumulative columns (see :func:`_increments`)
    summed, gauges averaged (interval-weighted); labels and the extents are left out."""
    w = df.with_columns(
        pl.Series("round", labels),
        pl.Series("__t0", t_start),
        pl.Series("__dt", dt),
        pl.Series("__b0", hb_start),
        pl.Series("__b1", hb),
    )
    aggs = [
        pl.col("__t0").min().alias("t_start_s"),
        pl.col("t_s").max().alias("t_end_s"),
        pl.col("__dt").sum().alias("seconds"),
        pl.col("__b0").min().alias("bytes_start"),
        pl.col("__b1").max().alias("bytes_end"),
    ]
    for c, dtype in df.schema.items():
        kind = columns.kind(c)
        if c in _EXTENTS or kind == "label" or not dtype.is_numeric():
            continue
        if kind in ("counter", "cumulative"):
            some = pl.col(c).is_not_null().any()
            aggs.append(pl.when(some).then(pl.col(c).sum()).alias(c))
        else:
            valid = pl.col(c).is_not_null() & pl.col(c).is_not_nan()
            aggs.append(
                (
                    (pl.col(c).fill_null(0).fill_nan(0) * pl.col("__dt")).filter(valid).sum()
                    / pl.col("__dt").filter(valid).sum()
                ).alias(c)
            )
    return w.group_by("round", maintain_order=True).agg(aggs).sort("round")


def _finish(out: pl.DataFrame, cap: float | None, complete: pl.Expr) -> pl.DataFrame:
    return out.with_columns(
        (pl.col("bytes_end") / 1e9).alias("gb_end"),
        (pl.col("bytes_end") / cap if cap else pl.lit(None, dtype=pl.Float64)).alias("fills_end"),
        complete.alias("complete"),
    )
