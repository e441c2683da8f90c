"""Bars per drive state: new / used / after TRIM grouped bars (BeHardware, AnandTech TRIM
validation), X-bit's relative-to-fresh degradation, AnandTech 2009's new vs used reads."""

from __future__ import annotations

from typing import cast

import altair as alt
import polars as pl

from flashback.errors import AnalysisError
from flashback.figures._theme import first_seen
from flashback.figures._util import clean, require
from flashback.figures.bars import _color, _value_title


def _published_marks(
    published: pl.DataFrame, groups: list, *, group: str, condition: str
) -> pl.DataFrame:
    """Published rows placed on the chart's groups: by (group, condition) when the group
    names match, otherwise by condition on every group (a sim preset vs the review's drive)."""
    require(published, ["condition", "value"], what="published")
    pub = published.select(
        *([pl.col("drive").alias(group)] if "drive" in published.columns else []),
        pl.col("condition").alias(condition),
        pl.col("value").alias("published"),
    )
    if group in pub.columns and set(pub[group].drop_nulls()) & set(groups):
        return pub.filter(pl.col(group).is_in(groups))
    pub = pub.drop(group) if group in pub.columns else pub
    return pub.join(pl.DataFrame({group: groups}), how="cross")


#: What the black ticks are, said under the title of a chart that draws them.
TICKS_SAID = "black ticks: the review's published numbers; bars: the replay"


def _titled(chart: alt.LayerChart, title: str | None, *, ticks: bool) -> alt.LayerChart:
    """``title`` on the chart, and with published ticks drawn, what they are (a subtitle:
    on the figure itself, where a tooltip is lost in a PNG)."""
    if ticks and title:
        return chart.properties(title=alt.TitleParams(text=title, subtitle=TICKS_SAID))
    if ticks:  # Vega draws no subtitle under an empty title
        return chart.properties(
            title=alt.TitleParams(text=TICKS_SAID, fontSize=11, fontWeight="normal")
        )
    return chart.properties(title=title) if title else chart


def condition_bars(
    frame: pl.DataFrame,
    *,
    group: str = "drive",
    condition: str = "condition",
    value: str = "value",
    unit: str = "MB/s",
    published: pl.DataFrame | None = None,
    title: str | None = None,
    order: list[str] | None = None,
    width: int = 480,
) -> alt.LayerChart:
    """Grouped bars: one group per drive (or test), one bar per state (fresh/used/after_trim).

    Args:
        frame: long frame with ``group``, ``condition`` and ``value`` columns — e.g.
            ``fb.published(test="as_ssd_seq_write")`` or a replay's per-step summary.
        unit: unit of ``value`` shown in the axis title.
        order: states in the order their bars (and legend) show them — a replay's procedure
            order; states not named follow in the order they first appear in ``frame``.
            Groups are shown in the order they first appear. Colours come from the one
            table (:func:`flashback.figures.color_of`).
        published: optional ``fb.published(...)`` rows drawn as black ticks on the bars of
            the same state (matched by drive when the names agree, else by state alone);
            the subtitle says what the ticks are (:data:`TICKS_SAID`).

    Raises:
        AnalysisError: empty or missing columns.
    """
    require(frame, [group, condition, value], what="frame")
    df = clean(frame.select(group, condition, value).with_columns(pl.col(condition).alias("_c")))
    color, states = _color(df["_c"].to_list(), "State", order=order)
    y_off = alt.YOffset("_c:N", sort=states)
    chart = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y(f"{group}:N", title=None, sort=first_seen(df[group])),
            yOffset=y_off,
            x=alt.X(f"{value}:Q", title=_value_title(unit)),
            color=color,
            tooltip=[group, condition, alt.Tooltip(f"{value}:Q", format=".1f")],
        )
        .properties(width=width)
    )
    text = chart.mark_text(align="left", dx=3, fontSize=10).encode(
        text=alt.Text(f"{value}:Q", format=".1f"), color=alt.value("#333333")
    )
    layers = [chart, text]
    if published is not None and not published.is_empty():
        marks = _published_marks(
            published, df[group].unique().to_list(), group=group, condition=condition
        ).with_columns(pl.col(condition).alias("_c"))
        marks = clean(marks.filter(pl.col("_c").is_in(states)))
        if not marks.is_empty():
            layers.append(
                alt.Chart(marks)
                .mark_tick(color="black", thickness=3, orient="vertical")
                .encode(
                    y=alt.Y(f"{group}:N", sort=first_seen(df[group])),
                    yOffset=y_off,
                    x="published:Q",
                    tooltip=[group, condition, alt.Tooltip("published:Q", format=".1f")],
                )
            )
    return _titled(alt.LayerChart(layer=layers), title, ticks=len(layers) > len([chart, text]))


def relative_to_fresh(
    frame: pl.DataFrame,
    *,
    drive: str = "drive",
    condition: str = "condition",
    value: str = "value",
    already_pct: bool = False,
    order: tuple[str, ...] = ("fresh", "used", "after_idle", "after_trim"),
    published: pl.DataFrame | None = None,
    width: int = 480,
) -> alt.LayerChart:
    """X-bit's degradation bars: every state as % of the same drive's fresh value.

    Args:
        frame: long frame, one row per (drive, condition) with an absolute ``value``
            (IOPS or MB/s); each drive needs a ``fresh`` row.
        already_pct: ``value`` is already % of fresh (e.g. published
            ``relative_to_fresh_pct`` rows); no fresh row needed.
        order: states shown, in this order.
        published: optional ``fb.published(..., metric="relative_to_fresh_pct")`` rows (%
            of fresh) drawn as black ticks on the bars of the same state (matched by drive
            when the names agree, else by state alone), said in the subtitle.

    Raises:
        AnalysisError: empty, missing columns, or a drive without a fresh row.
    """
    require(frame, [drive, condition, value], what="frame")
    if already_pct:
        df = frame.with_columns(pl.col(value).cast(pl.Float64).alias("pct_of_fresh"))
    else:
        fresh = frame.filter(pl.col(condition) == "fresh").select(drive, pl.col(value).alias("_f"))
        lacking = set(frame[drive].unique()) - set(fresh[drive].unique())
        if lacking:
            raise AnalysisError(
                f"drive(s) {', '.join(map(str, sorted(lacking)))} have no 'fresh' row; "
                "relative-to-fresh needs one per drive (or pass already_pct=True)"
            )
        df = (
            frame.join(fresh, on=drive)
            .with_columns((pl.col(value) / pl.col("_f") * 100).alias("pct_of_fresh"))
            .drop("_f")
        )
    df = clean(
        df.filter(pl.col(condition).is_in(list(order))).with_columns(pl.col(condition).alias("_c"))
    )
    require(df, [drive, condition], what=f"rows in states {list(order)}")
    marks = pl.DataFrame()
    if published is not None and not published.is_empty():
        marks = _published_marks(
            published, df[drive].unique().to_list(), group=drive, condition=condition
        ).with_columns(pl.col(condition).alias("_c"))
        marks = clean(marks.filter(pl.col("_c").is_in(df["_c"].unique().to_list())))
    top = max(
        110.0,
        float(cast(float, df["pct_of_fresh"].max()) or 0),
        float(cast(float, marks["published"].max())) if marks.height else 0.0,
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
                scale=alt.Scale(domain=[0, top]),
            ),
            color=_color(df["_c"].to_list(), "State", order=list(order))[0],
            tooltip=[drive, condition, alt.Tooltip("pct_of_fresh:Q", format=".1f")],
        )
        .properties(width=width)
    )
    rule = (
        alt.Chart(pl.DataFrame({"pct": [100.0]}))
        .mark_rule(strokeDash=[4, 3], color="#333333")
        .encode(x="pct:Q")
    )
    layers = [bars, rule]
    if marks.height:
        layers.append(
            alt.Chart(marks)
            .mark_tick(color="black", thickness=3, orient="vertical")
            .encode(
                y=alt.Y(f"{drive}:N"),
                yOffset=alt.YOffset("_c:N", sort=list(order)),
                x="published:Q",
                tooltip=[drive, condition, alt.Tooltip("published:Q", format=".1f")],
            )
        )
    return _titled(alt.LayerChart(layer=layers), None, ticks=marks.height > 0)


def new_vs_used(
    frame: pl.DataFrame,
    *,
    drive: str = "drive",
    condition: str = "condition",
    value: str = "value",
    unit: str = "MB/s",
    published: pl.DataFrame | None = None,
    title: str = "2 MB sequential read",
) -> alt.LayerChart:
    """AnandTech 2009's new vs used read table as bars (``fresh`` and ``used`` per drive).

    Raises:
        AnalysisError: empty or missing columns.
    """
    require(frame, [drive, condition, value], what="frame")
    sub = frame.filter(pl.col(condition).is_in(["fresh", "used"]))
    return condition_bars(
        sub,
        group=drive,
        condition=condition,
        value=value,
        unit=unit,
        published=published,
        title=title,
    )
