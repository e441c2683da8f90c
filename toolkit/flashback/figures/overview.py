"""A capture's main figures in one chart: throughput against data written (or time) above its
latency percentiles — what ``flashback plot CAPTURE`` draws."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.errors import AnalysisError
from flashback.figures._util import require
from flashback.figures.latency import latency_percentiles
from flashback.figures.written import performance_vs_written

#: At most this many panels (tests or steps); a capture with more is drawn as one curve.
MAX_PANELS = 8


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
    reads — and, below it, the latency percentiles (µs) on the same axis (for one series;
    a replay split into panels per test shows throughput only).

    Args:
        intervals: a capture's ``intervals`` (design schema). A ``test`` column (a saved
            replay read by ``flashback plot``) or else ``step`` column with 2 to
            :data:`MAX_PANELS` values splits the throughput into one panel each.
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
    if "test" in intervals.columns:  # a saved replay: only the tests that did this I/O
        did = intervals.group_by("test").agg((pl.col(f"{op}_bytes").sum() > 0).alias("_did"))
        keep = did.filter(pl.col("_did"))["test"]
        intervals = intervals.filter(pl.col("test").is_in(keep.implode()))
    # one panel per test (a saved replay) or per step, when there are a few
    panels = next(
        (
            c
            for c in ("test", "step")
            if c in intervals.columns and 1 < intervals[c].n_unique() <= MAX_PANELS
        ),
        None,
    )
    top = performance_vs_written(
        intervals, x=x, y=f"{op}_mbps", test=panels, data=None, width=width, height=160
    )
    parts = [top]
    lat = f"{op}_lat_p99_us"
    # latency of tests mixed in one panel would zig-zag between them: one capture only
    if panels is None and lat in intervals.columns and intervals[lat].drop_nulls().len():
        parts.append(latency_percentiles(intervals, op=op, x=x, width=width, height=220))
    return alt.vconcat(*parts).resolve_scale(color="independent")
