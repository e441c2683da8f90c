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
# # SNIA PTS: preconditioning, steady state, WSAT and host idle recovery
#
# The X-bit labs review borrowed its method from the SNIA Solid State Storage Performance
# Test Specification (PTS). flashback replays the specification's core tests in small form:
#
# * **IOPS** — purge, precondition with two sequential fills, then repeat rounds over block
#   sizes and read/write mixes until the 4 KiB random-write IOPS of the last five rounds is
#   steady: their range within 20 % of their mean and the fitted line's excursion within
#   10 % (at most 25 rounds).
# * **WSAT** (write saturation) — 4 KiB random writes from a purged drive for several
#   capacities, to watch the fall from fresh to steady state in the bytes-written domain.
# * **HIR** (host idle recovery) — short write bursts separated by growing idle periods: how
#   much does a pause give back?

# %% tags=["parameters"]
scale = "1/16"  # full size: 1 (sim:generic at its own size); its held scale
target = None  # None: sim:generic at `scale`; or an existing file, or a drive ("/dev/sdX")
destroy = None  # a drive only: its path again, confirming its data is lost
round_s = 2.0  # seconds per block size and mix per round; full size: 60
max_rounds = 8  # full size: 25
block_sizes = ("4k", "128k")  # full size: ("4k", "64k", "1m") or the PTS's eight sizes
wsat_fills = 2.0  # full size: 4 (capacities written in WSAT)

# %%
import polars as pl

import flashback as fb
from flashback.notebook import setup

setup()
res = fb.replay(
    "snia-pts",
    target=target or f"sim:generic?scale={scale}",
    destroy=destroy,
    round_s=round_s,
    max_rounds=max_rounds,
    block_sizes=block_sizes,
    wsat_fills=wsat_fills,
    tests=("iops", "wsat"),
)
res.steps.filter(pl.col("kind") == "run").select("step", "write_iops", "read_iops").head(10)

# %% [markdown]
# ## The steady-state window
# One point per round: the 4 KiB random-write IOPS. The window is the last five rounds;
# the bands are the PTS limits around its mean, the line its least-squares fit.

# %%
rounds = res.steps.filter(
    pl.col("test") == "iops",
    pl.col("condition") == "round",
    pl.col("bs") == "4k",
    pl.col("rwmix_read") == 0,
).select(pl.col("round").cast(pl.Int64), "write_iops")
ss = fb.steady_state(rounds, y="write_iops")
print("steady state reached:", ss.reached, "window:", ss.window)
fb.figures.steady_state_window(rounds, window=ss.window if ss.reached else None)

# %% [markdown]
# ## WSAT: IOPS against data written
# The fresh drive's burst, the cliff when the spare blocks run out, and the steady level, with
# the change points flashback finds.

# %%
wsat = res.step("wsat/random_write")
seg = fb.changepoints(wsat, x="host_written_bytes", y="write_iops")
fb.figures.performance_vs_written(
    wsat, y="write_iops", segments=seg.to_frame(), breakpoints=seg.breakpoint_frame()
)

# %%
res.compare().select("test", "condition", "metric", "replayed", "unit", "note")
