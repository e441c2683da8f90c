"""BeHardware: 3-minute runs on a 10 GB span of an otherwise full drive — new, used, TRIM."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs

NAME = "behardware-used-trim"
PRESET = "crucial-m4-128g"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("condition") != "fill")
    # one group of bars per kind of write, one bar per drive state: each bar sits inside
    # the group its label names (bars keyed by step name sat off-centre, beside the
    # neighbouring label)
    bars = st.select(
        pl.col("pattern").cast(pl.String).alias("test"),
        "condition",
        pl.col("write_mbps").alias("value"),
    )
    s = Section(
        "BeHardware — used state and TRIM on a nearly full drive",
        [
            "The review filled a drive except for a 10 GB area, then timed 3-minute random and "
            "sequential writes in that area new, used and after TRIM, noting when speed dipped.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}. Times and GB, in the chart "
            "and the table, are quoted at the review drive's scale (replayed values divided by "
            f"{scale}); speeds are as measured.",
        ],
        procedure=procedure([rep]),
    )
    s.charts.append(
        ("states", figures.condition_bars(bars, group="test", title="write MB/s per run"))
    )
    per_second = rep.intervals.filter(pl.col("step").str.contains("random"))
    if per_second.height:
        # coloured by drive state as the bars above, one panel per run in the order it ran
        per_second = per_second.join(
            rep.steps.select("step", "condition"), on="step", how="left", maintain_order="left"
        ).with_columns((pl.col("t_s") / rep.scale).alias("t_s"), pl.col("step").alias("run"))
        s.charts.append(
            (
                "random write per second",
                figures.step_series(
                    per_second,
                    y="write_mbps",
                    facet="run",
                    color="condition",
                    width=260,
                    height=160,
                ).properties(title="random writes, one panel per run (s at review scale)"),
            )
        )
    return s, compare_part(s, rep.compare(seeds=SEEDS))
