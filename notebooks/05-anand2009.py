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
# # AnandTech 2009: does a used SSD read slower?
#
# **What the review did.** In its 2009 look at SSD aging AnandTech wrote the drives until they
# were "used" (only the LBAs the OS can see — 74.5 GB of the 80 GB X25-M) and compared 2 MB
# sequential reads new and used; for hard drives the "used" column is the slowest zone of the
# platter. It also measured random-read latency at queue depth 3 in IOMeter.
#
# **What it found.** Reading is largely spared: the penalty of a used drive is paid when a
# write lands on a block that already holds data. The Intel X25-M went from 264.1 to
# 230.2 MB/s, the OCZ Vertex from 257.8 to 250.1 MB/s and the JMicron drives did not change;
# the best SSDs still read more than twice as fast as a VelociRaptor, whose 7.2 ms random-read
# latency is about ten times that of the slowest SSD.
#
# The replay measures a simulated X25-M fresh, after a sequential fill, and after a
# capacity's worth of random writes.

# %% tags=["parameters"]
scale = "1/64"  # full size: 1 (an 80 GB simulated drive); its held scale
used_fills = 1.0  # capacities of random writes that make the drive "used"
target = None  # None: the simulated X25-M at `scale`; or a file path

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup
from flashback.replay.compare import TABLE_COLUMNS, tally

setup()
res = fb.replay(
    "anand2009-new-vs-used",
    target=target or f"sim:intel-x25m-80g?scale={scale}",
    scale=scale,
    used_fills=used_fills,
)
res.steps.select("step", "condition", "read_mbps", "read_iops", "read_lat_mean_us")

# %% [markdown]
# ## New vs used, replayed beside the review's table

# %%
reads = res.steps.filter(pl.col("step").str.ends_with("seq_read")).select(
    drive=pl.lit(f"replayed {res.meta['drive']}"), condition="condition", value="read_mbps"
)
published = fb.published(source=res.meta["source"], test="seq2m_read", metric="avg_mbps")
ssds = published.filter(pl.col("controller").is_not_null()).drop_nulls("drive")
fb.figures.new_vs_used(pl.concat([reads, ssds.select(reads.columns)]))

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
