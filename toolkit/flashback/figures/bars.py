"""Puget's maximum / average bars per test and data type (and the bar helpers shared with
:mod:`flashback.figures.states`)."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import color_scale, first_seen
from flashback.figures._util import clean, require


def _color(
    values: list[str], title: str, *, order: list[str] | None = None
) -> tuple[alt.Color, list[str]]:
    """Colour by the ``_c`` column, and the labels in the order shown: those in ``order``
    (present ones), then the rest in the order given; colours from the one table
    (:func:`color_scale`)."""
    present = first_seen(values)
    domain = [v for v in order or () if v in present] + [
        v for v in present if v not in (order or ())
    ]
    return alt.Color("_c:N", title=title, scale=color_scale(domain), sort=domain), domain


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
        test, data: columns naming the test (x groups) and data type (colour/offset); both
            shown in the order they first appear in ``summary`` (the order they ran in).
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
    color, shown = _color(long["_c"].to_list(), "Data")
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X(f"{test}:N", title="Test", sort=None),
            xOffset=alt.XOffset("_c:N", sort=shown),
            y=alt.Y("value:Q", title=_value_title(unit)),
            color=color,
            tooltip=[test, data, "stat", alt.Tooltip("value:Q", format=".1f")],
        )
        .properties(width=width, height=240)
        .facet(column=alt.Column("stat:N", title=None, sort=["maximum", "average"]))
    )
