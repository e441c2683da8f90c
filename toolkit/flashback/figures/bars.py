"""Bar charts of per-test summaries: maximum/average per data type (Puget) and grouped bars
per drive state — new / used / after TRIM (BeHardware, AnandTech TRIM validation)."""

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


def condition_bars(
    frame: pl.DataFrame,
    *,
    group: str = "drive",
    condition: str = "condition",
    value: str = "value",
    unit: str = "MB/s",
    title: str | None = None,
    width: int = 480,
) -> alt.Chart:
    """Grouped bars: one group per drive (or test), one bar per state (fresh/used/after_trim).

    Args:
        frame: long frame with ``group``, ``condition`` and ``value`` columns — e.g.
            ``fb.published(test="as_ssd_seq_write")`` or a replay's per-step summary.
        unit: unit of ``value`` shown in the axis title.

    Raises:
        AnalysisError: empty or missing columns.
    """
    require(frame, [group, condition, value], what="frame")
    df = clean(frame.select(group, condition, value).with_columns(pl.col(condition).alias("_c")))
    states = df["_c"].unique().to_list()
    chart = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y(f"{group}:N", title=None, sort=None),
            yOffset=alt.YOffset("_c:N", sort=[c for c in CONDITION_ORDER if c in states]),
            x=alt.X(f"{value}:Q", title=_value_title(unit)),
            color=_color(states, "State"),
            tooltip=[group, condition, alt.Tooltip(f"{value}:Q", format=".1f")],
        )
        .properties(width=width)
    )
    text = chart.mark_text(align="left", dx=3, fontSize=10).encode(
        text=alt.Text(f"{value}:Q", format=".1f"), color=alt.value("#333333")
    )
    out = alt.layer(chart, text)
    return out.properties(title=title) if title else out


def relative_to_fresh(
    frame: pl.DataFrame,
    *,
    drive: str = "drive",
    condition: str = "condition",
    value: str = "value",
    order: tuple[str, ...] = ("fresh", "used", "after_idle", "after_trim"),
    width: int = 480,
) -> alt.LayerChart:
    """X-bit's degradation bars: every state as % of the same drive's fresh value.

    Args:
        frame: long frame, one row per (drive, condition) with an absolute ``value``
            (IOPS or MB/s); each drive needs a ``fresh`` row.
        order: states shown, in this order.

    Raises:
        AnalysisError: empty, missing columns, or a drive without a fresh row.
    """
    require(frame, [drive, condition, value], what="frame")
    fresh = frame.filter(pl.col(condition) == "fresh").select(drive, pl.col(value).alias("_f"))
    lacking = set(frame[drive].unique()) - set(fresh[drive].unique())
    if lacking:
        from flashback.errors import AnalysisError

        raise AnalysisError(
            f"drive(s) {', '.join(map(str, sorted(lacking)))} have no 'fresh' row; "
            "relative-to-fresh needs one per drive"
        )
    df = clean(
        frame.join(fresh, on=drive)
        .filter(pl.col(condition).is_in(list(order)))
        .with_columns(
            (pl.col(value) / pl.col("_f") * 100).alias("pct_of_fresh"),
            pl.col(condition).alias("_c"),
        )
        .drop("_f")
    )
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y(f"{drive}:N", title=None),
            yOffset=alt.YOffset("_c:N", sort=list(order)),
            x=alt.X(
                "pct_of_fresh:Q",
                title="Performance relative to fresh (%)",
                scale=alt.Scale(domain=[0, max(110.0, float(df["pct_of_fresh"].max() or 0))]),
            ),
            color=_color(df["_c"].unique().to_list(), "State"),
            tooltip=[drive, condition, alt.Tooltip("pct_of_fresh:Q", format=".1f")],
        )
        .properties(width=width)
    )
    rule = (
        alt.Chart(pl.DataFrame({"pct": [100.0]}))
        .mark_rule(strokeDash=[4, 3], color="#333333")
        .encode(x="pct:Q")
    )
    return alt.layer(bars, rule)


def new_vs_used(
    frame: pl.DataFrame,
    *,
    drive: str = "drive",
    condition: str = "condition",
    value: str = "value",
    unit: str = "MB/s",
    title: str = "2 MB sequential read",
) -> alt.LayerChart:
    """AnandTech 2009's new vs used read table as bars (``fresh`` and ``used`` per drive).

    Raises:
        AnalysisError: empty or missing columns.
    """
    sub = (
        frame.filter(pl.col(condition).is_in(["fresh", "used"]))
        if condition in frame.columns
        else frame
    )
    return condition_bars(
        sub, group=drive, condition=condition, value=value, unit=unit, title=title
    )
