"""Latency percentiles over time (from the capture's ``*_lat_*_us`` columns)."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import color_scale
from flashback.figures._util import bin_mean, clean, require, title_for

PERCENTILES = ("mean", "p50", "p99", "p999", "max")


def latency_percentiles(
    intervals: pl.DataFrame,
    *,
    op: str = "write",
    x: str = "t_s",
    stats: tuple[str, ...] = ("p50", "p99", "p999", "max"),
    log: bool = True,
    max_points: int = 4000,
    width: int = 560,
    height: int = 260,
) -> alt.LayerChart:
    """One line per latency statistic (µs) against time or bytes written.

    Args:
        intervals: capture interval frame with ``{op}_lat_{stat}_us`` columns.
        op: ``write`` or ``read``.
        x: ``t_s`` or ``host_written_bytes`` (shown in GB).
        stats: subset of ``mean, p50, p99, p999, max``.
        log: log-scale latency axis (percentiles span decades).
        max_points: row budget; longer captures are binned in polars — percentiles by
            their mean over the bin, ``max`` by its maximum.

    Raises:
        AnalysisError: empty frame, missing columns or an unknown statistic.
    """
    bad = [s for s in stats if s not in PERCENTILES]
    if bad:
        from flashback.errors import AnalysisError

        raise AnalysisError(f"unknown latency statistic(s) {bad}; use {', '.join(PERCENTILES)}")
    cols = [f"{op}_lat_{s}_us" for s in stats]
    require(intervals, [x, *cols], what="intervals")
    df = intervals.select([x, *cols])
    if x.endswith("_bytes"):
        df = df.with_columns((pl.col(x) / 1e9).alias(x))
    df = bin_mean(
        df,
        x=x,
        ys=cols,
        max_points=max(max_points // len(cols), 50),
        peak=tuple(c for c in cols if "_max_" in c),
    )
    long = clean(
        df.unpivot(index=[x], on=cols, variable_name="stat", value_name="latency_us")
        .with_columns(pl.col("stat").str.extract(r"_lat_(\w+)_us$"))
        .filter(pl.col("latency_us").is_not_null() & (pl.col("latency_us") > 0))
    )
    base = alt.Chart(long).encode(
        x=alt.X(f"{x}:Q", title=title_for(x)),
        y=alt.Y(
            "latency_us:Q",
            title=f"{op.capitalize()} latency (µs)",
            scale=alt.Scale(type="log") if log else alt.Scale(),
        ),
        color=alt.Color(
            "stat:N", title="Statistic", sort=list(stats), scale=color_scale(list(stats))
        ),
        tooltip=[
            "stat",
            alt.Tooltip(f"{x}:Q", format=".1f"),
            alt.Tooltip("latency_us:Q", format=",.0f"),
        ],
    )
    # The spiky maximum is drawn first and faint: the percentiles stay visible over it.
    layers = []
    if "max" in stats:
        layers.append(
            base.transform_filter(alt.datum.stat == "max").mark_line(opacity=0.45, strokeWidth=1)
        )
    rest = [s for s in stats if s != "max"]
    if rest:
        layers.append(
            base.transform_filter(alt.FieldOneOfPredicate(field="stat", oneOf=rest)).mark_line(
                strokeWidth=1.8
            )
        )
    return alt.LayerChart(layer=layers, width=width, height=height)
