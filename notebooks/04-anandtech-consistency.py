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
# # AnandTech: Intel SSD 530 performance consistency, and its TRIM validation
#
# **What the review did.** AnandTech secure-erased the Intel SSD 530 (240 GB, SandForce
# SF-2281), filled every LBA with sequential data, then ran 4 KiB random writes at queue
# depth 32 with incompressible data across the whole drive for 2000 seconds, logging IOPS
# once a second. The scatter plots come in three sets: the whole run on a log axis, a zoom
# from t = 1400 s (the start of steady state) on a log axis, and the same zoom on a linear axis
# capped at 40K IOPS. Each drive was also tested with only 75 % of its capacity in use — a
# partition that leaves 25 % extra spare area.
#
# **What it found.** Every drive starts very fast while it hands out blocks from its spare
# area, then drops sharply once they are gone and each write costs a read-modify-write. The
# SSD 530 took about twice as long as the SSD 335 to reach steady state. Oddly, the extra
# spare area changed little for the 530, while the Corsair Neutron pulled clearly ahead with
# it.
#
# **TRIM validation** (second half). The drive was filled with incompressible sequential
# data, tortured with 60 minutes of 4 KiB QD32 random writes, and measured with AS-SSD's
# incompressible sequential write: 315.1 MB/s clean, 183.3 MB/s after the torture and
# 193.3 MB/s after one TRIM pass — SandForce's TRIM gives little back when the drive was
# filled with incompressible data.

# %% tags=["parameters"]
scale = "1/64"  # full size: 1 (a 240 GB drive; 2000 s and 60 min of writes); its held scale
trim_scale = "1/16"  # the TRIM validation's held scale (its AS-SSD pass is 1 GiB × scale)
preset = "intel-530-240g"  # also: intel-335-240g
target = None  # None: the simulated preset at `scale`; or a file path

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup
from flashback.replay.compare import TABLE_COLUMNS, tally

setup()
drive = target or f"sim:{preset}?scale={scale}"

# %% [markdown]
# ## Consistency: default spare area and +25 % over-provisioning

# %%
runs = {
    "default": fb.replay("anandtech-consistency", target=drive, scale=scale),
    "25% OP": fb.replay("anandtech-consistency", target=drive, scale=scale, op25=True),
}
writes = pl.concat(
    [r.step("random_write").with_columns(variant=pl.lit(k)) for k, r in runs.items()]
)
pl.DataFrame(
    [
        {"variant": k, **fb.consistency(r.capture(), step="random_write", last_s=r.scale * 600)}
        for k, r in runs.items()
    ]
)

# %% [markdown]
# The review's three panels. Times are the replay's own (a scaled drive reaches steady state
# sooner); the zoom starts at 70 % of the run, where the review's 1400 s of 2000 s is.

# %%
fb.figures.consistency_panel(
    writes, t="step_t_s", steady_from_s=0.7 * writes["step_t_s"].max(), linear_max=None
)

# %% [markdown]
# ## TRIM validation

# %%
trim_drive = target or f"sim:{preset}?scale={trim_scale}"
trim = fb.replay("anandtech-trim-validation", target=trim_drive, scale=trim_scale)
states = trim.steps.filter(pl.col("step").is_in(["clean", "after_torture", "after_trim"]))
bars = states.select(
    drive=pl.lit(f"replayed {trim.meta['drive']}"), condition="condition", value="write_mbps"
)
fb.figures.condition_bars(
    pl.concat([bars, fb.published(test="as_ssd_seq_write").select(bars.columns)]),
    title="AS-SSD incompressible sequential write: replayed and published",
)

# %% [markdown]
# ## Published vs replayed (both tests)
# `compare()` sets a number against the review's only on a replay at or above its protocol's
# held scale (`min_held_scale`: 1/64; 1/16 for the TRIM validation), the smallest scale at
# which the tests hold its rows to the larger scales'; the defaults run there. Below it the
# table still shows the replayed values, with status `below held scale` and no
# within/outside, the tally counts them apart (`below_held_scale`, `not_compared`), and the
# error chart has nothing to draw.

# %%
table = pl.concat([runs["default"].compare(), trim.compare(sensitivity=True)])
print(tally(table))  # published numbers compared, within tolerance, not modelled
table.select(TABLE_COLUMNS)

# %%
# below the held scale nothing is compared: the tally says why instead of a chart
fb.figures.compare_errors(table) if tally(table)["compared"] else tally(table)["not_compared"]
