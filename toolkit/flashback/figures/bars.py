"""Puget's maximum / average bars per test and data type (and the bar helpers shared with
:mod:`flashback.figures.states`)."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import CONDITION_COLORS
from flashback.figures._util import clean, require

# Order in which drive states are shown, left to right.
CONDITION_ORDER = [
    "fresh",
    "clean",
    "used",
    "torture",
    "after_idle",
    "after_trim",
    "steady_state",
    "compressible",
    "incompressible",
]


def _color(values: list[str], title: str) -> alt.Color:
    domain = [c for c in CONDITION_ORDER if c in values] + sorted(
        v for v in values if v not in CONDITION_ORDER
    )
    palette = alt.Scale(domain=domain, range=[CONDITION_COLORS.get(v, "#4c78a8") for v in domain])
    if any(v not in CONDITION_COLORS for v in domain):
        palette = alt.Scale(domain=domain, scheme="tableau10")
    return alt.Color("_c:N", title=title, scale=palette, sort=domain)


def _value_title(unit: str) -> str:
    return {
        "MB/s": "Throughput (MB/s)",
        "IOPS": "IOPS",
        "ms": "Latency (ms)",
        "us": "Latency (µs)",
        "%": "Relative (%)",
    }.get(unit, f"Value ({unit})")


def max_avg_bars(
    summary: pl.DataFrame,
    *,
    test: str = "test",
    data: str = "data",
    max_col: str = "max_mbps",
    avg_col: str = "avg_mbps",
    unit: str = "MB/s",
    width: int = 220,
) -> alt.FacetChart:
    """Maximum and average per test, bars side by side per data type (Puget's bar charts).

    Args:
        summary: one row per (test, data type) with the maximum and average columns, e.g.
            a replay's per-step summary aggregated over loops.
        test, data: columns naming the test (x groups) and data type (colour/offset).
        max_col, avg_col: columns of the two statistics.
        unit: unit shown in the axis title.

    Returns:
        Bars faceted by statistic (``maximum`` | ``average``).

    Raises:
        AnalysisError: empty or missing columns.
    """
    require(summary, [test, data, max_col, avg_col], what="summary")
    long = clean(
        summary.select(test, data, max_col, avg_col)
        .unpivot(
            index=[test, data], on=[max_col, avg_col], variable_name="stat", value_name="value"
        )
        .with_columns(
            pl.col("stat").replace({max_col: "maximum", avg_col: "average"}),
            pl.col(data).alias("_c"),
        )
    )
    color = _color(long["_c"].unique().to_list(), "Data")
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X(f"{test}:N", title="Test", sort=None),
            xOffset=alt.XOffset("_c:N"),
            y=alt.Y("value:Q", title=_value_title(unit)),
            color=color,
            tooltip=[test, data, "stat", alt.Tooltip("value:Q", format=".1f")],
        )
        .properties(width=width, height=240)
        .facet(column=alt.Column("stat:N", title=None, sort=["maximum", "average"]))
    )
