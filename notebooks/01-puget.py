# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Puget Systems: an Intel 520 written 1.8 TB, one CrystalDiskMark loop at a time
#
# **What the review did.** Puget Systems looped CrystalDiskMark 3 on an Intel SSD 520
# (120 GB, SandForce SF-2281) until roughly 1.8 TB had been written — about fifteen times
# the drive's capacity, some 9.2 GB per loop — once with random (incompressible) data and
# once with all-zero (compressible) data, secure-erasing between sets. A third set repeated
# the incompressible run with TRIM switched off.
#
# **What it found.**
# * Reads barely care: compressible reads came within about 7 % (35 MB/s) of the advertised
#   550 MB/s, incompressible reads were about 5 % lower, and neither fell off over time.
# * Writes care a lot. Zeros reached the advertised 500 MB/s and stayed there. Random data
#   peaked at 193.3 MB/s — 38 % of the advertised figure — and settled near 32 %.
# * The incompressible write curves break twice: near **40 GB** written the 512 KiB and
#   4 KiB QD32 random writes drop to about 160 MB/s (sequential writes start swinging
#   between 100 and 160 MB/s), and after about **380 GB** (four drive fills) they level out.
#   The review's averages start at that second point. The 4 KiB QD1 test shows no break.
# * TRIM on versus off differed by only 2–4 %.
#
# Here the same loop is replayed on a simulated SF-2281-class drive (`sim:intel-520-120g`),
# scaled down so it runs in seconds; byte counts are quoted back at the review's scale.

# %% tags=["parameters"]
scale = "1/64"  # full size: 1 (a 120 GB drive); its held scale, the smallest compared
written_gb = 400  # stop after this much at the review's scale (× scale here); full size: 1800
loops = None  # or stop after this many loops instead
passes = 1  # scored CrystalDiskMark runs per test (it reports the best; the review does not say)
target = None  # None: the review drive's simulated preset at `scale`; or a file path

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup
from flashback.replay.compare import TABLE_COLUMNS, tally
from flashback.replay.procedures.puget import loops_frame
from flashback.report.reviews.puget import published_marks

setup()
drive = target or f"sim:intel-520-120g?scale={scale}"

# %% [markdown]
# ## Replay: incompressible, compressible, and incompressible without TRIM

# %%
opts = dict(scale=scale, loops=loops, passes=passes, total_written_bytes=written_gb * 1e9)
runs = {
    "incompressible": fb.replay("puget-cdm-loop", target=drive, data="random", **opts),
    "compressible": fb.replay("puget-cdm-loop", target=drive, data="zeros", **opts),
}
no_trim = fb.replay("puget-cdm-loop", target=drive, data="random", trim=False, **opts)
runs["incompressible"].steps.select("step", "kind", "write_mbps", "read_mbps").head(12)

# %% [markdown]
# ## Speed against data written
# One point per loop and test: CrystalDiskMark's best pass, against the host data written by
# the end of that loop (in GB at the review drive's size). On the review's drive the
# incompressible write panels fall at about 40 GB and flatten after about 380 GB; the
# compressible ones hardly move. The review's knees and levels are drawn in the write panels
# (purple, dotted, labelled).

# %%
curves = pl.concat(
    [loops_frame(r).with_columns(data=pl.lit(name)) for name, r in runs.items()]
).with_columns(test=pl.format("{}_{}", "test", "direction"))
review = published_marks(loops_frame(runs["incompressible"])["test"].unique().to_list())
fb.figures.performance_vs_written(
    curves,
    x="gb_written_full",
    y="mbps",
    test="test",
    data="data",
    published=review.with_columns(test=pl.col("test") + "_write"),  # the write panels
)

# %% [markdown]
# ## Maximum and average per test (the review's bar charts)

# %%
summary = curves.group_by("test", "data").agg(
    pl.col("mbps").max().alias("max_mbps"), pl.col("mbps").mean().alias("avg_mbps")
)
fb.figures.max_avg_bars(summary)

# %% [markdown]
# ## The review's numbers on the replayed curve
# Dashed lines are Puget's published levels for sequential writes (the 193.3 MB/s peak and
# the 160 MB/s average with random data, 500 MB/s with zeros); vertical rules are its two
# break points.

# %%
seq = curves.filter(pl.col("test") == "seq_write").select(
    "data", write_mbps="mbps", host_written_bytes=pl.col("gb_written_full") * 1e9
)
fb.figures.published_overlay(
    seq,
    fb.published(source=runs["incompressible"].meta["source"], test="cdm_seq_write"),
    series="data",
)

# %% [markdown]
# ## Published vs replayed
# `compare()` lines every number the review printed up against the replay, with the relative
# error; `other=` adds the numbers that need two runs (data type, TRIM on vs off). A published
# number the replay does not produce (a knee its curve lacks, such as the second knee of a
# replay stopped at 400 GB) counts as a miss.
# `compare()` sets a number against the review's only on a replay at or above its protocol's
# held scale (`min_held_scale`: 1/64), the smallest scale at which the tests hold its rows
# to the larger scales'; the defaults run there. Below it the table still shows the
# replayed values, with status `below held scale` and no within/outside, the tally counts
# them apart (`below_held_scale`, `not_compared`), and the error chart has nothing to draw.

# %%
table = pl.concat(
    [
        runs["incompressible"].compare(other=runs["compressible"]),
        runs["incompressible"]
        .compare(other=no_trim)
        .filter(pl.col("condition") == "trim_on_vs_off"),
    ]
).unique(subset=["test", "condition", "metric"], maintain_order=True)
print(tally(table))  # published numbers compared, within tolerance, not modelled
table.select(TABLE_COLUMNS)

# %%
fb.figures.compare_errors(table)
