"""The simulated drive's ground truth: write amplification and free blocks over bytes written."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import color_scale
from flashback.figures._util import bin_mean, clean, require


def wa_free_blocks(
    intervals: pl.DataFrame,
    *,
    x: str = "host_written_bytes",
    cumulative: bool = True,
    max_points: int = 4000,
    width: int = 560,
    height: int = 160,
) -> alt.VConcatChart:
    """Write amplification (top) and free blocks (bottom) against host GB written.

    Args:
        intervals: a ``sim:`` capture's interval frame: ``wa``, ``free_blocks``,
            ``nand_written_bytes``, ``host_written_bytes`` (cumulative byte counters).
        cumulative: also draw cumulative WA = NAND bytes / host bytes (a bold line over
            the per-interval ``wa`` column's lighter one).

    Raises:
        AnalysisError: not a simulator capture (columns missing) or empty.
    """
    need = [x, "wa", "free_blocks", "nand_written_bytes", "host_written_bytes"]
    require(intervals, list(dict.fromkeys(need)), what="intervals (simulator capture)")
    df = intervals.select(list(dict.fromkeys(need))).with_columns(
        (pl.col(x) / 1e9).alias("x_gb"),
        pl.when(pl.col("host_written_bytes") > 0)
        .then(pl.col("nand_written_bytes") / pl.col("host_written_bytes"))
        .otherwise(None)
        .alias("wa_cumulative"),
    )
    df = bin_mean(
        df, x="x_gb", ys=["wa", "wa_cumulative", "free_blocks"], max_points=max(max_points // 2, 50)
    )
    wa_long = clean(
        df.select(
            "x_gb", pl.col("wa").alias("interval"), pl.col("wa_cumulative").alias("cumulative")
        )
        .unpivot(index="x_gb", variable_name="kind", value_name="wa")
        .filter(pl.lit(cumulative) | (pl.col("kind") == "interval"))
    )
    x_enc = alt.X("x_gb:Q", title="Host data written (GB)")
    # the per-interval spikes underneath (light), cumulative WA on top: neither hides
    color = alt.Color(
        "kind:N",
        title="WA",
        scale=color_scale(["interval", "cumulative"]),
    )
    base = alt.Chart(wa_long).encode(
        x=x_enc,
        y=alt.Y("wa:Q", title="Write amplification (NAND / host)"),
        color=color,
        tooltip=["kind", alt.Tooltip("x_gb:Q", format=".1f"), alt.Tooltip("wa:Q", format=".2f")],
    )
    wa = alt.layer(
        base.transform_filter(alt.datum.kind == "interval").mark_line(strokeWidth=1),
        base.transform_filter(alt.datum.kind == "cumulative").mark_line(strokeWidth=2.5),
    ).properties(width=width, height=height)
    free = (
        alt.Chart(clean(df.select("x_gb", "free_blocks")))
        .mark_area(opacity=0.5, line=True)
        .encode(
            x=x_enc,
            y=alt.Y("free_blocks:Q", title="Free blocks (count)"),
            tooltip=[
                alt.Tooltip("x_gb:Q", format=".1f"),
                alt.Tooltip("free_blocks:Q", format=",.0f"),
            ],
        )
        .properties(width=width, height=height)
    )
    return alt.vconcat(wa, free)
