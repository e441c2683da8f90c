"""The io_uring engine's accounting on real files and loop devices: I/Os in flight, set-up
outside the clock, system calls per I/O, and whole-run latency that is every I/O's.

Figures measured with strace, Little's law and fio are in native/src/engine/uring/; these
tests assert the behaviour with margins wide enough for a loaded 2-core machine.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import subprocess
import sys

import polars as pl
import pytest

import flashback as fb

MiB = 1 << 20


def in_flight(cap: fb.Capture) -> float:
    """Mean I/Os in flight by Little's law: the sum of every I/O's latency over the run time."""
    iv = cap.intervals
    lat_s = sum(
        (iv[f"{d}_ios"] * iv[f"{d}_lat_mean_us"].fill_null(0)).sum() / 1e6
        for d in ("read", "write")
    )
    return lat_s / iv["interval_s"].sum()


def ios(cap: fb.Capture) -> int:
    t = cap.meta["totals"]
    return t["read_ios"] + t["write_ios"] + t["trim_ios"]


def test_qd1_makes_two_io_uring_enters_per_io(loopdev):
    """At QD1 the I/O is handed over in one enter and waited for in a second, as fio does
    (issue 29: one enter doing both ran at 0.53x fio's IOPS on a quiet machine). The consumed
    completion-queue head is published before the next enter; while it was published late, the
    enter after each completion returned at once on the stale entry and another waited (the
    engine of commit 4e7b16d made 2047 `io_uring_enter` calls for 1024 I/Os in one enter each
    by `strace -f -c`): that would be three per I/O here. The run's multishot timeout, armed
    and removed once each, adds two."""
    dev = loopdev(8 * MiB)
    w = fb.Workload(rw="randread", bs="4k", iodepth=1, loops=1)
    cap = fb.run(dev, w, destroy=dev)
    assert cap.status == "complete" and ios(cap) == 2048
    # the timeout's completion (every 20 ms) wakes one more wait now and then: one per 20 ms
    # of run time, far from the stale head's third enter per I/O
    assert 2 * ios(cap) <= cap.meta["io_uring_enters"] < 2.5 * ios(cap)


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_qd1_system_calls_counted_by_strace(loopdev, tmp_path):
    """The engine's own count agrees with the kernel's: strace -c counts io_uring_enter."""
    dev = loopdev(4 * MiB)
    out = tmp_path / "strace.txt"
    code = (
        "import flashback as fb, json, sys\n"
        f"cap = fb.run({dev!r}, fb.Workload(rw='randread', bs='4k', iodepth=1, loops=1),"
        f" destroy={dev!r}, progress=False)\n"
        "print(json.dumps({'enters': cap.meta['io_uring_enters'],"
        " 'ios': cap.meta['totals']['read_ios']}))\n"
    )
    p = subprocess.run(
        ["strace", "-f", "-c", "-e", "trace=io_uring_enter", "-o", str(out), sys.executable, "-c", code],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["ios"] == 1024
    row = next(line.split() for line in out.read_text().splitlines() if "io_uring_enter" in line)
    calls = int(row[3])
    # strace counts every enter of the process (the capability probes add a few)
    assert got["enters"] <= calls <= got["enters"] + 8
    # under strace the run is slower and the 20 ms timeout wakes more waits (2168 measured)
    assert calls < 2.5 * 1024


@pytest.mark.parametrize("rw", ["randread", "randwrite"])
def test_qd32_keeps_32_ios_in_flight(loopdev, rw):
    """A slot reaped is refilled before anything else: the completions are reported, and
    spent write buffers filled with fresh data, after the refills are handed over, while they
    are in flight. Measured twice: the engine's own time-weighted count (`inflight_mean`) and
    Little's law over the capture (IOPS × mean latency). With reporting and data generation
    between the reap and the refill (commit 29c251d), 4k QD32 on a loop device at load 13-16
    held 29.3-32.0 (randread) and 31.1-31.8 (randwrite) in four 2 s runs each."""
    dev = loopdev(64 * MiB)
    w = fb.Workload(rw=rw, bs="4k", iodepth=32, time="2s")
    cap = fb.run(dev, w, destroy=dev)
    assert cap.status == "complete"
    engine = cap.meta["inflight_mean"]
    little = in_flight(cap)
    # the same integral (each I/O from its latency's start to its reap) counted two ways; the
    # engine's also covers the drain after the deadline
    assert engine == pytest.approx(little, rel=0.02)
    assert 31.5 <= engine <= 32.0 + 1e-9, (engine, little)


def test_in_flight_is_the_depth_that_can_be_kept(loopdev):
    """The engine's count is no constant: at QD1 the slot is empty while each completion is
    reported, so the mean is below 1; at QD4 below 4 and above 1."""
    dev = loopdev(16 * MiB)
    got = {}
    for qd in (1, 4):
        cap = fb.run(dev, fb.Workload(rw="randread", bs="4k", iodepth=qd, time="0.5s"), destroy=dev)
        got[qd] = cap.meta["inflight_mean"]
        assert got[qd] == pytest.approx(in_flight(cap), rel=0.02)
    assert 0.5 < got[1] < 1.0 and 1.0 < got[4] <= 4.0, got


def test_first_interval_is_not_slowed_by_set_up(loopdev):
    """Buffers are allocated, touched, filled with the first writes' data and registered
    before the clock starts: at bs=1m QD128 that set-up (128 MiB and the spare buffers) ran
    inside the first interval. The metadata says how long set-up took and when the first I/O
    started on the run's clock: were set-up inside the clock, the first would come after the
    second. The device is written once first, so its backing file's own first-write cost
    (block allocation) is not measured.

    The first interval's throughput is not compared with the rest: that is a timing, and at
    load 13-14 (CI with other work on the machine) first intervals came out at 0.36-0.68 of
    the median on three runs in a row while the metadata showed set-up outside the clock; the
    metadata is the deterministic form of the same check."""
    dev = loopdev(256 * MiB)
    t = fb.Target(dev, destroy=dev)
    t.run(fb.Workload(rw="write", bs="1m", iodepth=8))
    w = fb.Workload(rw="write", bs="1m", iodepth=128, time="1.5s", interval="0.25s")
    cap = t.run(w)
    # filling and registering ≥ 128 MiB takes tens of ms; the first I/O follows the clock's
    # start by the few µs of the loop's first pass
    assert cap.meta["setup_ns"] > 5_000_000
    assert cap.meta["first_submit_ns"] < cap.meta["setup_ns"] / 10, cap.meta
    assert len(cap.intervals) == 6


def test_whole_run_latency_in_meta_and_summary(tmp_path):
    """The run's merged histogram is kept in the metadata; its percentiles reach summary()
    and never exceed the max; every interval's percentiles stay under its own max."""
    path = tmp_path / "t.bin"
    fb.Target(str(path), size=8 * MiB)
    w = fb.Workload(rw="randrw", bs="4k", iodepth=8, loops=2, interval="0.05s", direct=False)
    cap = fb.run(str(path), w)
    lat = cap.meta["latency"]
    for d in ("read", "write"):
        s = lat[d]
        assert s["ios"] == cap.meta["totals"][f"{d}_ios"] == sum(c for _, c in s["hist_ns"])
        qs = [s[f"{k}_us"] for k in ("p50", "p99", "p999", "p9999", "max")]
        assert qs == sorted(qs)
        assert s["max_us"] == cap.intervals[f"{d}_lat_max_us"].max()
        row = cap.summary().row(0, named=True)
        assert row[f"{d}_lat_p99_us"] == s["p99_us"]
        assert row[f"{d}_lat_max_us"] == s["max_us"]
        iv = cap.intervals.drop_nulls(f"{d}_lat_max_us")
        for p in ("p50", "p99", "p999"):
            assert (iv[f"{d}_lat_{p}_us"] <= iv[f"{d}_lat_max_us"]).all()


def hist_quantile(pairs: list[list[int]], q: float) -> int:
    """The value at quantile ``q`` of [value, count] pairs, as a histogram counts."""
    n = sum(c for _, c in pairs)
    rank = max(1, math.ceil(q * n))
    seen = 0
    for v, c in pairs:
        seen += c
        if seen >= rank:
            return v
    raise AssertionError("rank beyond the count")


def fio_randread_min_us(fio_path: str, dev: str) -> float:
    """fio's whole-run shortest latency (``lat``: from queueing to completion, flashback's
    span; µs) of 1 s of 4K random reads at QD4 on ``dev``."""
    p = subprocess.run(
        [fio_path, "--name=x", f"--filename={dev}", "--rw=randread", "--bs=4k", "--iodepth=4",
         "--ioengine=io_uring", "--direct=1", "--runtime=1", "--time_based",
         "--output-format=json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    job = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]["read"]
    return job["lat_ns"]["min"] / 1e3


def test_whole_run_percentiles_agree_with_fio(loopdev, fio_path):
    """The same workload on the same device, fio's latencies of the whole run beside
    flashback's: the median over three alternating runs of each tool's shortest latency
    within a factor 10 (the same unit and the same measured span), and flashback's stored
    histogram gives back the percentiles it reports.

    The shortest latency, not the median: with the machine's CPUs busy, either tool's p50 at
    QD4 becomes a scheduler tick (the fresh-clone test suite run here beside two busy loops:
    flashback 4,016, 4,878 and 4,004 µs against fio's 18.3, 18.8 and 3,981 µs; by hand, each
    tool 4 ms in 2 runs of 3) and even its 5th percentile 1–2 ms (flashback 15.4, 981 and
    1,309 µs against fio's 16.5, 2,212 and 16.8), while the shortest stayed at 9.9–13.6 µs for
    both; a unit error (10^3) moves it as it moves every percentile.

    The loop device is buffered, so whichever tool reads first pays for filling the backing
    file's page cache (a CI run once measured 243 µs against fio's 103 µs on the warm cache
    that flashback had just filled). A sequential pass warms the cache first, and the tools
    alternate so load on the shared machine falls on both."""
    dev = loopdev(32 * MiB)
    fb.run(dev, fb.Workload(rw="read", bs="1m", iodepth=4, size="32m"), destroy=dev)
    w = fb.Workload(rw="randread", bs="4k", iodepth=4, time="1s")
    ours, theirs, caps = [], [], []
    for _ in range(3):
        cap = fb.run(dev, w, destroy=dev)
        caps.append(cap)
        ours.append(hist_quantile(cap.meta["latency"]["read"]["hist_ns"], 0.0) / 1e3)
        theirs.append(fio_randread_min_us(fio_path, dev))
    ratio = statistics.median(ours) / statistics.median(theirs)
    # how close the two tools' latencies are is a speed target, measured in `make bench`
    # (issue "Performance where users wait")
    assert 0.1 <= ratio <= 10.0, (ours, theirs)
    s = caps[-1].meta["latency"]["read"]
    for q, key in ((0.5, "p50_us"), (0.99, "p99_us"), (0.9999, "p9999_us")):
        assert min(hist_quantile(s["hist_ns"], q) / 1e3, s["max_us"]) == s[key]


def test_summary_without_run_latency_has_null_columns():
    """A capture whose metadata has no histogram (imported, concatenated) gets null columns,
    not numbers from elsewhere."""
    iv = pl.DataFrame(
        {"step": ["a"], "interval_s": [1.0], "write_bytes": [4096], "read_bytes": [0],
         "write_ios": [1], "read_ios": [0]}
    )  # fmt: skip
    s = fb.Capture(intervals=iv, meta={}).summary()
    assert s["write_lat_p99_us"].null_count() == 1 and s["read_lat_max_us"].null_count() == 1


def test_cli_run_prints_whole_run_latency(tmp_path):
    """`flashback run` prints every summary column, the whole-run percentiles included, with
    the values the saved capture's metadata holds."""
    out = tmp_path / "c.arrow"
    p = subprocess.run(
        [sys.executable, "-m", "flashback", "run", str(tmp_path / "t.bin"), "--rw", "randwrite",
         "--bs", "4k", "--iodepth", "4", "--size", "4m", "--loops", "1", "--direct", "false",
         "--no-progress", "-o", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    s = fb.load(out).meta["latency"]["write"]
    for key in ("write_lat_p50_us", "write_lat_p9999_us", "write_lat_max_us"):
        assert key in p.stdout
    # the table shows the metadata's value to the CLI's own precision (3-4 significant figures)
    from flashback.cli._output import fmt_value

    assert s["max_us"] > 0 and fmt_value(float(s["max_us"])) in p.stdout
