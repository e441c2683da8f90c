"""AnandTech: IOPS consistency (default vs +25 % OP) on an Intel 530, beside the SSD 335."""

from __future__ import annotations

from typing import cast

import polars as pl

from flashback import figures
from flashback.analysis.consistency import consistency
from flashback.replay.headline import joined
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay

PRESET = "intel-530-240g"
PRESET_335 = "intel-335-240g"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    default = replay("anandtech-consistency", preset=PRESET, scale=scale, progress=progress)
    op25 = replay("anandtech-consistency", preset=PRESET, scale=scale, progress=progress, op25=True)
    # the review's headline sets the 530 beside the SSD 335: replay that drive too
    ssd335 = replay("anandtech-consistency", preset=PRESET_335, scale=scale, progress=progress)
    parts = []
    for rep, variant in ((default, "default"), (op25, "+25% OP")):
        iv = rep.intervals.filter(pl.col("step") == "random_write")
        t0 = iv["t_s"].min() if iv.height else 0.0
        # seconds at the review drive's scale, as the review's x axis and the tables
        parts.append(
            iv.with_columns(
                ((pl.col("t_s") - t0) / rep.scale).alias("t_s"),
                (pl.col("interval_s") / rep.scale).alias("interval_s"),
                pl.lit(variant).alias("variant"),
            )
        )
    both = pl.concat(parts)
    steady_from = float(cast(float, both["t_s"].max())) * 0.7 if both.height else 0.0
    s = Section(
        "AnandTech — performance consistency",
        [
            "After a secure erase and a sequential fill, the review ran 4 KiB random writes at "
            "queue depth 32 for about 2000 s and plotted every second's IOPS, once with the whole "
            "drive and once with 25 % of it left unpartitioned.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}. Time scales with capacity: "
            f"seconds and GB in the charts and tables are quoted at the review drive's scale "
            f"(replayed values divided by {scale}); IOPS and write amplification as measured.",
        ],
        procedure=procedure([default, op25, ssd335], variants=("default", "+25% OP")),
    )
    s.charts.append(
        (
            "iops over time",
            figures.consistency_panel(both, steady_from_s=steady_from, linear_max=None),
        )
    )
    gt = default.intervals.filter(pl.col("step") == "random_write")
    if "wa" in gt.columns:
        gt = gt.with_columns((pl.col("host_written_bytes") / default.scale).alias("review_bytes"))
        s.charts.append(("write amplification", figures.wa_free_blocks(gt, x="review_bytes")))
    metrics = [
        {
            "variant": v,
            **consistency(both.filter(pl.col("variant") == v), last_s=steady_from / 3),
        }
        for v in ("default", "+25% OP")
    ]
    s.tables.append(("consistency metrics", pl.DataFrame(metrics)))
    # one table: the op25 variant's "needs a second replay" headline row is left out where
    # the default's pair compares it
    cmp = joined(
        [
            default.compare(other=ssd335, seeds=SEEDS),
            op25.compare(seeds=SEEDS),
            ssd335.compare(seeds=SEEDS),
        ]
    )
    return s, compare_part(s, cmp)
