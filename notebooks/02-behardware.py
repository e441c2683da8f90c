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
# # BeHardware: new, used and TRIMmed — a 10 GB span on an otherwise full drive
#
# **What the review did.** In its June 2011 SSD round-up BeHardware filled four 120/128 GB
# drives (Crucial M4, OCZ Vertex 3, Intel SSD 510 and 320) with video files except for a
# 10 GB partition, so that almost no free flash was left, and then ran three-minute IOMeter
# tests on that partition with hard-to-compress data: random writes on the new partition,
# sequential writes over what the random writes left ("used"), a TRIM of the 10 GB,
# sequential writes again ("TRIM"), random writes over the sequential data ("used"), another
# TRIM and random writes ("TRIM"); finally the drive was reset and refilled and a sequential
# write on a fresh partition gave the "new" sequential curve.
#
# **What it found.**
# * Random writes after sequential ones hardly suffered. The dip in the random-write curve
#   came after 60 s (3.9 GB) on the Intel 510, 90 s (6.4 GB) on the M4, 210 s (7.59 GB) on
#   the Intel 320 and 180 s (13.5 GB) on the Vertex 3.
# * Sequential writes were flat when new, except the Vertex 3, whose level slid from 161 MB/s
#   to 142, later 132, from 60 s (9.4 GB written) on.
# * Sequential writes over randomly written space fell hard in the first 30 s — 120 MB/s on
#   the 510, 83.1 on the M4, 48.3 on the Vertex 3 — and then climbed back; the 320 barely
#   noticed.
# * After TRIM the Marvell and Intel drives started at their new speed again; the SandForce
#   Vertex 3 stayed near 130 MB/s instead of 160.
#
# The replay runs the same sequence on a simulated drive standing in for the Crucial M4.

# %% tags=["parameters"]
scale = "1/64"  # full size: 1 (a 128 GB simulated drive); its held scale
preset = "crucial-m4-128g"  # also: ocz-vertex3-120g, intel-510-120g, intel-320-120g
target = None  # None: the simulated preset at `scale`; or a file path

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup
from flashback.replay.compare import TABLE_COLUMNS, tally

setup()
res = fb.replay("behardware-used-trim", target=target or f"sim:{preset}?scale={scale}", scale=scale)
res.steps.filter(pl.col("kind") != "erase").select(
    "step", "kind", "condition", "write_mbps", "write_iops"
)

# %% [markdown]
# ## The per-second curves, as the review drew them
# One line per run against the seconds since that run began (three minutes at full scale):
# random writes on top, sequential writes below, each in its new, used and TRIM state.

# %%
runs = res.intervals.filter(~pl.col("step").str.ends_with("fill"))
fb.figures.step_series(
    runs.with_columns(pattern=pl.col("step").str.extract(r"^(random|seq)")),
    y="write_mbps",
    facet="pattern",
)

# %% [markdown]
# ## New / used / TRIM, as bars
# The mean of each three-minute run; black ticks are BeHardware's published levels for the
# same state where the review gave one.

# %%
bars = res.steps.filter(pl.col("kind") == "run", pl.col("condition") != "fill").select(
    pattern=pl.col("step").str.extract(r"^(random|seq)"),
    condition="condition",
    value="write_mbps",
)
fb.figures.condition_bars(bars, group="pattern", published=fb.published(source=res.meta["source"]))

# %% [markdown]
# ## Published vs replayed
# `compare()` sets a number against the review's only on a replay at or above its protocol's
# held scale (`min_held_scale`: 1/64), the smallest scale at which the tests hold its rows
# to the larger scales'; the defaults run there. Below it the table still shows the
# replayed values, with status `below held scale` and no within/outside, the tally counts
# them apart (`below_held_scale`, `not_compared`), and the error chart has nothing to draw.

# %%
table = res.compare()
print(tally(table))  # published numbers compared, within tolerance, not modelled
table.select(TABLE_COLUMNS)

# %%
# below the held scale nothing is compared: the tally says why instead of a chart
fb.figures.compare_errors(table) if tally(table)["compared"] else tally(table)["not_compared"]
