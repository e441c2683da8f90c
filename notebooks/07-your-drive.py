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
# # Your drive
#
# Everything in the other notebooks also runs on real storage. This notebook captures a
# random-write torture on a target you choose and looks for its write cliff.
#
# ## Safety first — a benchmark that writes destroys data
# * By default the target is a **regular temporary file** that flashback creates and deletes,
#   so this notebook runs anywhere without harming anything. A file on a file system does
#   not show the drive's own behaviour (the page cache and the file system sit in between),
#   but the whole pipeline is the same.
# * To test a whole **block device** (`/dev/sdX`, `/dev/nvme0n1`) set `device` below **and**
#   repeat its path in `destroy`. Everything on it is lost. flashback refuses — with one
#   sentence saying why, and without writing a byte — when the two do not match, or when the
#   device or any of its partitions is mounted, used as swap, held by RAID/LVM, or backs the
#   running system.
# * flashback never grows, truncates or overwrites a regular file it did not create unless
#   you say so (`overwrite=True`).
# * Secure-erase the drive first if you want a fresh-out-of-box curve; use a drive you can
#   afford to wear.

# %% tags=["parameters"]
device = None  # e.g. "/dev/sdX" — a whole drive you are willing to wipe; None: a temp file
destroy = None  # must repeat `device` exactly to confirm, e.g. "/dev/sdX"
size = "32m"  # LBA span (file size); full size on a device: None, the whole drive
written = "96m"  # stop after this many bytes; full size: 3-5 × the capacity
iodepth = 32
interval = "5ms"  # one row per interval, several per round even at GB/s; full size: "1s"
round_size = "0.25fill"  # a steady-state round: a quarter of the capacity written; full size: "60s"
keep = "my-drive.arrow"  # the capture is saved here (beside the notebook); None: not kept

# %%
import tempfile
from pathlib import Path

import flashback as fb
from flashback.notebook import setup

setup()
scratch = tempfile.TemporaryDirectory(prefix="flashback-your-drive-")
target = device or str(Path(scratch.name) / "scratch.bin")
print("writing to", target)

# %% [markdown]
# ## Capture
# 4 KiB random writes of incompressible data at queue depth 32, one row per `interval`. The
# capture is streamed to an Arrow file while it runs, so an interrupted run keeps its data
# (`fb.recover` salvages a torn tail).

# %%
w = fb.Workload(
    rw="randwrite", bs="4k", iodepth=iodepth, size=size, written=written, interval=interval
)
cap = fb.run(target, w, destroy=destroy, capture_path=Path(scratch.name) / "capture.arrow")
print(cap.status)
cap.summary()

# %% [markdown]
# ## Throughput against data written, with change points

# %%
seg = fb.changepoints(cap, x="host_written_bytes", y="write_mbps")
fb.figures.performance_vs_written(
    cap.intervals, y="write_mbps", segments=seg.to_frame(), breakpoints=seg.breakpoint_frame()
)

# %% [markdown]
# ## Latency percentiles

# %%
fb.figures.latency_percentiles(cap.intervals)

# %% [markdown]
# ## Is it steady?
# The SNIA PTS rule on rounds (a quarter of the capacity written each here; the PTS uses 60 s
# rounds): the last five round means must lie within a 20 % band around their mean, and their
# fitted line must not move by more than 10 % across the window.

# %%
rounds = fb.to_rounds(cap, round=round_size)
ss = fb.steady_state(rounds, y="write_iops")
print("steady state reached:", ss.reached)
fb.figures.steady_state_window(rounds, y="write_iops", window=ss.window if ss.reached else None)

# %%
if keep:  # outside the scratch directory, which is removed next: fb.load(keep) reads it back
    print("capture kept in", cap.save(keep).resolve())
scratch.cleanup()  # the scratch file target (a device is left as it is)
