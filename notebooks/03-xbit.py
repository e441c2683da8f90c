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
# # X-bit labs: how much slower after use, after idle, after TRIM
#
# **What the review did.** Reviewing the Intel SSD 335 (240 GB, SandForce SF-2281 with 20 nm
# flash) X-bit labs followed the spirit of the SNIA Solid State Storage Performance Test
# Specification: 4 KiB random writes at queue depth 32 in IOMeter, measured four times — on
# the fresh drive, after the drive had been filled twice, after a 30-minute pause in which
# idle-time garbage collection could work, and after a TRIM of the whole drive. Every result
# is shown as a percentage of the fresh one.
#
# **What it found.** SandForce drives take a hit once they run out of erased pages, but faster
# flash softens it: with a deep queue the older Intel SSD 330 lost about 15 %, the SSD 335
# only about 10 %. The review advises against these drives on systems without TRIM.
#
# The replay runs the four measurements on a simulated SSD 335.

# %% tags=["parameters"]
scale = "1/64"  # full size: 1 (a 240 GB simulated drive); its held scale
preset = "intel-335-240g"  # also: intel-330-240g
target = None  # None: the simulated preset at `scale`; or a file path

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup
from flashback.replay.compare import TABLE_COLUMNS, tally

setup()
res = fb.replay("xbit-pts-degradation", target=target or f"sim:{preset}?scale={scale}", scale=scale)
res.steps.select("step", "kind", "condition", "duration_s", "write_iops")

# %% [markdown]
# ## The four measurements, second by second

# %%
measured = ["fresh", "used", "after_idle", "after_trim"]
fb.figures.step_series(res.intervals, y="write_iops", steps=measured)

# %% [markdown]
# ## Relative to fresh: replayed beside published
# The review's chart, with the replayed drive as one more bar group. X-bit published the
# "used" bar for both drives (85 % and 90 %); the other states are shown for the replay only.

# %%
replayed = res.steps.filter(pl.col("condition").is_in(measured)).select(
    drive=pl.lit(f"replayed {res.meta['drive']}"), condition="condition", value="write_iops"
)
fb.figures.relative_to_fresh(replayed)

# %%
published = fb.published(source=res.meta["source"], metric="relative_to_fresh_pct")
fb.figures.relative_to_fresh(published.drop_nulls("drive"), already_pct=True)

# %% [markdown]
# ## Published vs replayed
# `compare()` sets a number against the review's only on a replay at or above its protocol's
# held scale (`min_held_scale`: 1/64), the smallest scale at which the tests hold its rows
# to the larger scales'; the defaults run there. Below it the table still shows the
# replayed values, with status `below held scale` and no within/outside, the tally counts
# them apart (`below_held_scale`, `not_compared`), and the error chart has nothing to draw.

# %%
table = res.compare(sensitivity=True)  # + replays at other measurement lengths
print(tally(table))  # published numbers compared, within tolerance, not modelled
table.select(TABLE_COLUMNS)

# %%
# below the held scale nothing is compared: the tally says why instead of a chart
fb.figures.compare_errors(table) if tally(table)["compared"] else tally(table)["not_compared"]
