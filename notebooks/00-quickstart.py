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
# # flashback in five minutes
#
# flashback writes to a drive (a real one, a file, or a simulated SSD), records one row per
# interval — throughput, IOPS, latency percentiles and the running total of host bytes
# written — and then asks the question every SSD review asks: *how does the speed change as
# the drive fills up?*
#
# This notebook runs one short random-write capture, looks for change points in the
# bytes-written domain, and shows one of the reviews' own numbers drawn as a chart.

# %% tags=["parameters"]
target = None  # None: sim:generic (a plain 7 % OP simulated drive) at `scale`; or a file path
scale = "1/256"  # full size: 1 (a 128 GB simulated drive)
size = None  # LBA span written; None: the whole target (give one for a new file, e.g. "1g")
written = "1.5g"  # stop after this many host bytes; full size: 3-5 × the capacity, e.g. "400g"
interval = "0.1s"  # one row per interval (simulated seconds on a sim drive); full size: "1s"

# %%
import flashback as fb
from flashback.notebook import setup

setup()  # charts render offline in JupyterLab (no CDN)

# %% [markdown]
# ## The review procedures flashback knows
# Every row is a test procedure from one of the reviews, with the simulated drive it runs on
# by default. The other notebooks replay them one at a time.

# %%
fb.protocols().select("name", "title", "default_target")

# %% [markdown]
# ## One capture
# A workload uses fio's words: 4 KiB random writes at queue depth 32 over the whole drive,
# stopping once `written` bytes — about three fills here — have gone to it. Incompressible
# data, so a compressing controller gets no help.

# %%
w = fb.Workload(
    rw="randwrite",
    bs="4k",
    iodepth=32,
    size=size,
    written=written,
    data="random",
    interval=interval,
)
cap = fb.run(target or f"sim:generic?scale={scale}", w)
cap.intervals.select("t_s", "write_iops", "write_mbps", "write_lat_p99_us", "host_written_bytes")

# %% [markdown]
# Latency tells the story before throughput does: once the drive has no erased blocks left,
# some writes wait for garbage collection and the 99.9th percentile and the maximum climb.

# %%
fb.figures.latency_percentiles(cap.intervals)

# %% [markdown]
# If the throughput rises and falls once per pass over the drive (a saw-tooth), that is the
# workload, not noise: flashback's random writes are random *without replacement* by default
# — every block once per pass, in a shuffled order, as fio's default random map — so how much
# stale data garbage collection finds changes in step with the passes. `random="uniform"`
# (fio's `norandommap`) draws every offset independently instead.

# %% [markdown]
# ## Where did the speed change?
# `fb.changepoints` segments the curve along host bytes written (not time, which depends on
# how fast the drive is). Each segment has a level with a confidence interval.

# %%
seg = fb.changepoints(cap, x="host_written_bytes", y="write_mbps")
seg.to_frame()

# %%
fb.figures.performance_vs_written(
    cap.intervals, y="write_mbps", segments=seg.to_frame(), breakpoints=seg.breakpoint_frame()
)

# %% [markdown]
# ## The reviews' numbers
# `fb.published()` holds every number the five reviews printed, as a tidy table. Here is
# AnandTech's TRIM check of the Intel SSD 530: an incompressible sequential write that ran
# at about 315 MB/s clean fell to about 183 MB/s after an hour of random writes, and one TRIM
# pass only brought it back to about 193 MB/s.

# %%
trim_rows = fb.published(test="as_ssd_seq_write")
fb.figures.condition_bars(trim_rows, title="AnandTech: Intel SSD 530, AS-SSD sequential write")
