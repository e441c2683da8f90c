"""A capture's main figures in one chart: throughput against data written (or time) above its
latency percentiles — what ``flashback plot CAPTURE`` draws."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.errors import AnalysisError
from flashback.figures._util import require
from flashback.figures.latency import latency_percentiles
from flashback.figures.written import performance_vs_written


def main_direction(intervals: pl.DataFrame) -> str:
    """``write`` when the capture wrote anything, else ``read``.

    Raises:
        AnalysisError: neither byte column is present, or nothing was read or written.
    """
    for op in ("write", "read"):
        col = f"{op}_bytes"
        if col in intervals.columns and (intervals[col].sum() or 0) > 0:
            return op
    raise AnalysisError(
        "the capture neither wrote nor read anything (write_bytes and read_bytes are all 0); "
        "there is nothing to plot"
    )


def capture_overview(intervals: pl.DataFrame, *, width: int = 560) -> alt.VConcatChart:
    """Throughput (MB/s) against host GB written — against time for a capture that only
    reads — and, below it, the latency percentiles (µs) on the same axis.

    Args:
        intervals: a capture's ``intervals`` (design schema; a ``step`` column splits the
            curve into one colour per step when there are several).
        width: width of each panel in pixels.

    Raises:
        AnalysisError: empty, missing columns, or nothing read or written.
    """
    require(intervals, ["t_s", "interval_s"], what="intervals")
    op = main_direction(intervals)
    x = (
        "host_written_bytes"
        if op == "write" and "host_written_bytes" in intervals.columns
        else "t_s"
    )
    steps = "step" if "step" in intervals.columns and intervals["step"].n_unique() > 1 else None
    top = performance_vs_written(
        intervals, x=x, y=f"{op}_mbps", test=None, data=steps, width=width, height=220
    )
    parts = [top]
    if f"{op}_lat_p99_us" in intervals.columns and intervals[f"{op}_lat_p99_us"].drop_nulls().len():
        parts.append(latency_percentiles(intervals, op=op, x=x, width=width, height=220))
    return alt.vconcat(*parts).resolve_scale(color="independent")
