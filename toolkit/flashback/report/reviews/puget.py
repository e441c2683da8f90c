"""Puget Systems: CrystalDiskMark looped on an Intel 520 from a secure erase to ~1.8 TB."""

from __future__ import annotations

import polars as pl

import flashback as fb
from flashback import figures
from flashback.report.html import Section
from flashback.report.reviews.common import compare_part, replay, runs

NAME = "puget-cdm-loop"
PRESET = "intel-520-120g"


def _loops(rep: fb.Replay, data: str) -> pl.DataFrame:
    """One row per loop and write test: review-equivalent GB written and MB/s."""
    w = runs(rep).filter(pl.col("direction") == "write")
    return (
        w.group_by("loop", "test", maintain_order=True)
        .agg(
            (pl.col("host_written_end_bytes").max() / rep.scale / 1e9).alias("written_gb"),
            pl.col("write_mbps").mean(),
        )
        .with_columns(pl.lit(data).alias("data"))
    )


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rnd = replay(NAME, preset=PRESET, scale=scale, progress=progress, data="random")
    zer = replay(NAME, preset=PRESET, scale=scale, progress=progress, data="zeros")
    curves = pl.concat([_loops(rnd, "incompressible"), _loops(zer, "compressible")])
    inc = curves.filter(pl.col("data") == "incompressible")
    segs, bps, found = [], [], []
    for (test,), part in inc.group_by("test", maintain_order=True):
        seg = fb.changepoints(part.sort("written_gb"), x="written_gb", y="write_mbps")
        segs.append(seg.to_frame().with_columns(pl.lit(test).alias("test")))
        bps.append(seg.breakpoint_frame().with_columns(pl.lit(test).alias("test")))
        where = ", ".join(f"{x:.0f} GB" for x in seg.breakpoints) or "none"
        found.append(f"{test}: {where}")
    segments, breakpoints = pl.concat(segs), pl.concat(bps)
    s = Section(
        "Puget Systems — Intel 520 under a CrystalDiskMark loop",
        [
            "The review ran CrystalDiskMark over and over on an Intel 520 120GB (SandForce SF-2281) "
            "from a secure erase until about 1.8 TB had been written, with incompressible and with "
            "compressible data, and watched each test's speed against the data written.",
            f"Here the same loop runs on the simulated {PRESET} shrunk by {scale}; bytes are quoted "
            "at the review drive's scale. Change points in the incompressible curves: "
            + "; ".join(found)
            + ". The review saw speed fall after about 40 GB and level off "
            "after about 380 GB.",
        ],
    )
    s.charts.append(
        (
            "performance vs written",
            figures.performance_vs_written(
                curves,
                x="written_gb",
                y="write_mbps",
                test="test",
                data="data",
                segments=segments,
                breakpoints=breakpoints,
            ),
        )
    )
    summary = curves.group_by("test", "data", maintain_order=True).agg(
        pl.col("write_mbps").max().alias("max_mbps"), pl.col("write_mbps").mean().alias("avg_mbps")
    )
    s.charts.append(("max and average", figures.max_avg_bars(summary)))
    s.tables.append(("segments (incompressible, per test)", segments))
    cmp = compare_part(s, rnd.compare(other=zer))
    return s, cmp
