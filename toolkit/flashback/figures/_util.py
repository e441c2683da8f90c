"""Shared helpers of the figure factories: input checks, units, aggregation before charting.

Every factory aggregates in polars so that a chart never embeds more than ``max_points``
rows per series (the Altair default limit is 5,000 rows; captures have 100k+).
"""

from __future__ import annotations

import re
from typing import cast

import polars as pl

from flashback.errors import AnalysisError

GB = 1e9

#: Axis titles for the design's column names (units in the title).
TITLES: dict[str, str] = {
    "t_s": "Time (s)",
    "host_written_bytes": "Host data written (GB)",
    "host_written_gb": "Host data written (GB)",
    # x of performance_vs_written in GB rather than bytes (its docstring: "against host GB
    # written"): the same axis as host_written_bytes
    "gb": "Host data written (GB)",
    "nand_written_bytes": "NAND data written (GB)",
    "write_mbps": "Write (MB/s)",
    "read_mbps": "Read (MB/s)",
    "write_iops": "Write IOPS",
    "read_iops": "Read IOPS",
    "trim_iops": "TRIM IOPS",
    "wa": "Write amplification (NAND / host bytes)",
    "free_blocks": "Free blocks (count)",
    "value": "Value",
    "mbps": "Throughput (MB/s)",
    "iops": "IOPS",
    "gb_written": "Host data written (GB)",
    "gb_written_full": "Host data written (GB, review drive scale)",
}


def title_for(col: str) -> str:
    """Axis title with unit for a column name (``write_mbps`` -> ``Write (MB/s)``)."""
    if col in TITLES:
        return TITLES[col]
    if col.startswith("gb_"):
        return f"{col[3:].replace('_', ' ').capitalize()} (GB)"
    for suffix, unit in (
        ("_mbps", "MB/s"),
        ("_iops", "IOPS"),
        ("_us", "µs"),
        ("_ms", "ms"),
        ("_s", "s"),
        ("_bytes", "GB"),
        ("_gb", "GB"),
        ("_pct", "%"),
    ):
        if col.endswith(suffix):
            base = col[: -len(suffix)].replace("_", " ").strip().capitalize()
            base = re.sub(r"\blat\b", "latency", base)
            return f"{base} ({unit})"
    return col.replace("_", " ").capitalize()


def require(frame: pl.DataFrame, cols: list[str], *, what: str) -> pl.DataFrame:
    """Checks that ``frame`` is a non-empty polars frame holding ``cols``.

    Raises:
        AnalysisError: not a polars DataFrame, empty, or a column missing.
    """
    if not isinstance(frame, pl.DataFrame):
        raise AnalysisError(
            f"{what} must be a polars DataFrame, got {type(frame).__name__}; "
            "pass capture.intervals or a summary frame"
        )
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise AnalysisError(
            f"{what} lacks column(s) {', '.join(missing)}; it has {', '.join(frame.columns)}"
        )
    if frame.is_empty():
        raise AnalysisError(f"{what} is empty; there is nothing to plot")
    return frame


def x_in_gb(
    frame: pl.DataFrame, col: str, *, out: str = "x_gb", in_bytes: bool | None = None
) -> pl.DataFrame:
    """Adds ``out``: ``col`` in decimal GB when it is in bytes, else as is.

    ``in_bytes`` defaults to whether the column name ends ``_bytes``.
    """
    if in_bytes is None:
        in_bytes = col.endswith("_bytes")
    scale = GB if in_bytes else 1.0
    return frame.with_columns((pl.col(col).cast(pl.Float64) / scale).alias(out))


def spread_over(frame: pl.DataFrame, values: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``frame`` lacking the key columns of ``values`` are repeated for every key.

    A breakpoint frame without a ``test`` column then appears in every test's panel.
    """
    missing = [c for c in values.columns if c not in frame.columns]
    if not missing:
        return frame
    return frame.join(values.select(missing).unique(maintain_order=True), how="cross")


def clean(frame: pl.DataFrame) -> pl.DataFrame:
    """NaN -> null in float columns (Vega-Lite JSON cannot carry NaN)."""
    floats = [c for c, t in frame.schema.items() if t in (pl.Float32, pl.Float64)]
    return frame.with_columns(pl.col(c).fill_nan(None) for c in floats) if floats else frame


def bin_mean(
    frame: pl.DataFrame,
    *,
    x: str,
    ys: list[str],
    by: list[str] | None = None,
    max_points: int = 4000,
    peak: tuple[str, ...] = (),
) -> pl.DataFrame:
    """At most ``max_points`` rows in all: equal-width bins of ``x`` per group, mean of each y.

    The budget is shared by the groups (``max_points // groups`` bins each, at least 50).
    Columns named in ``peak`` are aggregated by their maximum instead (a bin's worst
    latency must not be averaged away). Frames already small enough are returned unchanged.
    """
    by = [c for c in (by or []) if c in frame.columns]
    if len(frame) <= max_points:
        return frame
    groups = frame.select(by).n_unique() if by else 1
    nbins = max(max_points // groups, 50)
    lo, hi = _span(frame[x])
    width = (hi - lo) / nbins if hi > lo else 1.0
    b = ((pl.col(x) - lo) / width).floor().clip(0, nbins - 1).alias("_bin")
    aggs = [pl.col(x).mean()] + [pl.col(y).max() if y in peak else pl.col(y).mean() for y in ys]
    return (
        frame.with_columns(b)
        .group_by([*by, "_bin"], maintain_order=True)
        .agg(aggs)
        .sort([*by, "_bin"])
        .drop("_bin")
    )


def _span(s: pl.Series) -> tuple[float, float]:
    """The numeric column's (min, max) as floats (polars types them as any literal)."""
    return float(cast(float, s.min())), float(cast(float, s.max()))


def bin_extremes(
    frame: pl.DataFrame, *, x: str, y: str, by: list[str] | None = None, max_points: int = 4000
) -> pl.DataFrame:
    """Scatter thinning: per equal-width x bin keep the rows with the min and the max y.

    Keeps the visual spread of a per-second IOPS scatter (its worst and best points) while
    bounding the row count to about ``max_points`` in all (shared by the groups).
    """
    by = [c for c in (by or []) if c in frame.columns]
    if len(frame) <= max_points:
        return frame
    groups = frame.select(by).n_unique() if by else 1
    nbins = max(max_points // (2 * groups), 25)
    lo, hi = _span(frame[x])
    width = (hi - lo) / nbins if hi > lo else 1.0
    f = frame.with_columns(((pl.col(x) - lo) / width).floor().clip(0, nbins - 1).alias("_bin"))
    keys = [*by, "_bin"]
    lo_rows = f.sort(y).group_by(keys, maintain_order=True).first()
    hi_rows = f.sort(y).group_by(keys, maintain_order=True).last()
    return pl.concat([lo_rows, hi_rows]).unique().sort([*by, x]).drop("_bin")
