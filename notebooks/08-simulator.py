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
# # Inside the simulated SSD
#
# The reviews could only watch a drive from the outside. The simulator shows what causes
# what they saw: every `sim:` capture also carries the ground truth — NAND bytes written,
# write amplification (WA), free blocks and the bytes garbage collection copied. This
# notebook turns the knobs one at a time:
#
# * **over-provisioning** — more spare area, later cliff, lower WA in steady state;
# * **garbage-collection policy** — which victim block to clean;
# * **compression** — a SandForce-style controller writes less NAND for compressible data;
# * **TRIM** — telling the drive what is free gives it spare area back.
#
# Key names follow the target string: `sim:<preset>?op=0.28&gc=greedy&compression=on...`.

# %% tags=["parameters"]
preset = "generic"  # a plain 7 % OP client drive; `flashback presets` lists the others
scale = "1/512"  # full size: 1
fills = 8.0  # capacities of random writes per run (steady state needs several); full size: 10
ops = (0.07, 0.28)  # over-provisioning ratios to compare; full size: (0.07, 0.15, 0.28, 0.5)
policies = ("greedy", "fifo")  # full size: ("greedy", "fifo", "random", "cost-benefit")

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup

setup()
base = f"sim:{preset}?scale={scale}"


def torture(spec: str, data: str = "random") -> pl.DataFrame:
    """4 KiB uniform random writes for `fills` capacities on a freshly opened sim drive."""
    t = fb.Target(spec)
    w = fb.Workload(
        rw="randwrite",
        bs="4k",
        iodepth=32,
        written=int(fills * t.size_bytes),
        data=data,
        random="uniform",
    )
    return t.run(w).intervals.with_columns(fills=pl.col("host_written_bytes") / t.size_bytes)


# %% [markdown]
# ## Over-provisioning
# Write amplification against host data written, one line per OP ratio. For greedy garbage
# collection under uniform random writes there is a classic estimate of the steady-state WA,
# (1 + ρ) / (2ρ) with ρ the spare fraction (Desnoyers, 2012); its values are printed beside
# the simulated ones.

# %%
op_runs = pl.concat(
    [torture(f"{base}&op={op}").with_columns(op=pl.lit(f"OP {op:.0%}")) for op in ops]
)
last_fill = op_runs.filter(pl.col("fills") > fills - 1)
simulated = last_fill.group_by("op").agg(pl.col("wa").mean().alias("simulated_wa"))
analytic = pl.DataFrame(
    {"op": [f"OP {r:.0%}" for r in ops], "analytic_wa": [(1 + r) / (2 * r) for r in ops]}
)
analytic.join(simulated, on="op")

# %% [markdown]
# Expect the simulated values to sit somewhat above the estimate, more so at high OP: the
# estimate assumes a drive of infinitely many blocks, while this small simulated drive has
# only a hundred or so erase blocks and keeps a few of them in reserve for garbage
# collection, which takes a real bite out of its spare area. Scale up (`scale = "1/16"`) and
# the two move closer.

# %%
fb.figures.performance_vs_written(op_runs, y="write_iops", test=None, data="op")

# %%
fb.figures.wa_free_blocks(op_runs.filter(pl.col("op") == f"OP {ops[0]:.0%}"))

# %% [markdown]
# ## Garbage-collection policy

# %%
gc_runs = pl.concat([torture(f"{base}&gc={g}").with_columns(gc=pl.lit(g)) for g in policies])
fb.figures.performance_vs_written(gc_runs, y="wa", test=None, data="gc")

# %% [markdown]
# ## Compression
# With a compressing controller, zeros barely touch the NAND; random data gets no help —
# the gap Puget measured on the SF-2281.

# %%
comp = pl.concat(
    [
        torture(f"{base}&compression=on", data=d).with_columns(data=pl.lit(d))
        for d in ("random", "compress:50", "zeros")
    ]
)
fb.figures.performance_vs_written(comp, y="write_mbps", test=None, data="data")

# %% [markdown]
# ## TRIM gives spare area back
# The same drive written full, half of it TRIMmed, then written again: the WA of the second
# pass drops while the trimmed space lasts.

# %%
drive = fb.Target(base)
half = drive.size_bytes // 2
first = drive.run(fb.Workload(rw="randwrite", bs="4k", iodepth=32, written=2 * drive.size_bytes))
drive.discard(offset=0, size=half)
second = drive.run(fb.Workload(rw="randwrite", bs="4k", iodepth=32, written=drive.size_bytes))
trim = pl.concat(
    [
        first.intervals.with_columns(run=pl.lit("before TRIM")),
        second.intervals.with_columns(run=pl.lit("after TRIM of half")),
    ]
)
fb.figures.performance_vs_written(trim, y="wa", test=None, data="run")
