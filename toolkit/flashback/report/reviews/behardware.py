"""BeHardware: 3-minute runs on a 10 GB span of an otherwise full drive — new, used, TRIM."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.report.html import Section
from flashback.report.reviews.common import compare_part, replay, runs

NAME = "behardware-used-trim"
PRESET = "crucial-m4-128g"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("condition") != "fill")
    bars = st.select(
        pl.col("step").alias("drive"), "condition", pl.col("write_mbps").alias("value")
    )
    s = Section(
        "BeHardware — used state and TRIM on a nearly full drive",
        [
            "The review filled a drive except for a 10 GB area, then timed 3-minute random and "
            "sequential writes in that area new, used and after TRIM, noting when speed dipped.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}.",
        ],
    )
    s.charts.append(("states", figures.condition_bars(bars, group="drive", title="MB/s per run")))
    per_second = rep.intervals.filter(pl.col("step").str.contains("random"))
    if per_second.height:
        s.charts.append(
            ("random write per second", figures.step_series(per_second, y="write_mbps"))
        )
    return s, compare_part(s, rep.compare())
