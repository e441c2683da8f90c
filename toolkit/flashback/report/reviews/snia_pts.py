"""SNIA PTS: purge, precondition, IOPS rounds to steady state, WSAT, HIR."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs

NAME = "snia-pts"
PRESET = "generic"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep)
    rounds = st.filter(pl.col("step").str.ends_with("/4k_r0")).select(
        pl.col("round").cast(pl.Int64), "write_iops"
    )
    s = Section(
        "SNIA PTS — steady state, WSAT and host idle recovery",
        [
            "The SNIA Performance Test Specification purges the drive, preconditions it with twice "
            "its capacity of 128 KiB writes, then repeats rounds of a block-size × mix matrix until "
            "the 4 KiB random-write IOPS settle inside a 5-round window.",
            f"Run on the simulated {PRESET} shrunk by {scale}; GB written are quoted at the "
            f"full drive's scale (replayed bytes divided by {scale}).",
        ],
        procedure=procedure([rep]),
    )
    if rounds.height >= 5:
        s.charts.append(
            ("steady-state window", figures.steady_state_window(rounds, y="write_iops"))
        )
    wsat = rep.intervals.filter(pl.col("step").str.contains("wsat"))
    if wsat.height:
        wsat = wsat.with_columns(
            (pl.col("host_written_bytes") / 1e9 / rep.scale).alias("gb_written_full")
        )
        s.charts.append(("wsat latency", figures.latency_percentiles(wsat, x="gb_written_full")))
    return s, compare_part(s, rep.compare(seeds=SEEDS))
