"""CrystalDiskMark 3 as it runs: the test file, the unscored preparation runs, timed runs,
random offsets drawn with replacement, the best run reported.

Source: CrystalDiskMark 3.0.2's own engine, ``DiskBench.cpp`` and ``DiskMarkDlg.cpp``
(github.com/ababycoder/CrystalDiskMark3_0_2Src, commit 183938c8fcd3; CrystalDiskMark ≤ 3
used this engine, version 4 onwards runs DiskSpd). What it does:

- ``Init`` writes the test file once, sequentially, in 1 MiB writes ("Preparing..."); no score.
- The data is one 1 MiB buffer filled once (``xor128`` words for "Random", or 0x00 / 0xFF) and
  written again and again; 4 KiB and 512 KiB writes send the start of that same buffer.
- Each of Seq, 512K, 4K and 4K QD32 runs reads, then writes. Each direction makes
  ``DiskTestNumber + 1`` runs: run 0 is unscored ("Preparing... Sequential Write"), runs 1..N
  score (N = "number of test runs", default 5; test size default 1000 MB).
- Every run is timed: ``DISK_TEST_TIME`` = 6 s, a Windows timer. Seq completes the pass over
  the file in progress before it looks at the timer, so a run is whole passes (≥ 6 s); random
  tests look at it every 20 (512 KiB) or 160 (4 KiB) I/Os; QD32 stops issuing and drains.
- Random offsets are ``(xor128() % split) × block``: uniform over the file, with replacement,
  from one xor128 stream with a fixed start that is never reseeded (it first fills the data
  buffer), so every run continues where the last one stopped.
- A run's score is bytes / elapsed ms; the test reports the maximum over its scored runs.

What the replay does differently: each random run draws from its own seeded stream (independent
offsets, as CDM's continuing stream gives, but not xor128's own numbers); flashback's ``data="random"`` refills each write with fresh
random bytes instead of resending one buffer; both are incompressible, and the simulator has
no deduplication, so a simulated drive sees no difference (a real drive that deduplicates
could). Random runs stop at the timer without finishing CDM's batch of 20/160 I/Os (< 0.1 %
of a 6 s run on an SSD).
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from flashback.workload import Rw, Workload

MIB = 1 << 20
#: CDM 3's ``DISK_TEST_TIME`` (DiskBench.cpp): seconds per run.
TEST_TIME_S = 6.0
#: CDM 3's default test size (``m_IndexTestSize`` 3 → 1000 MB, DiskMarkDlg.cpp), in MiB.
DEFAULT_TEST_BYTES = 1000 * MIB
#: CDM 3 order: each test's read runs, then its write runs.
#: (name, read rw, write rw, block size, queue depth)
TESTS: tuple[tuple[str, Rw, Rw, str, int], ...] = (
    ("seq", "read", "write", "1m", 1),
    ("rand512k", "randread", "randwrite", "512k", 1),
    ("rand4k", "randread", "randwrite", "4k", 1),
    ("rand4k_qd32", "randread", "randwrite", "4k", 32),
)


def prepare_workloads(
    *, offset: int, test_bytes: int, data: str, interval_s: float | None
) -> list[Workload]:
    """CDM's test-file preparation: one sequential pass of 1 MiB writes, QD1 (unscored)."""
    return _seq_pass(
        "write", offset=offset, test_bytes=test_bytes, data=data, interval_s=interval_s
    )


def _seq_pass(
    rw: Rw, *, offset: int, test_bytes: int, data: str, interval_s: float | None
) -> list[Workload]:
    """One sequential pass of 1 MiB ``rw`` I/O at QD1 over the test file: its whole MiB,
    then the rest as one shorter I/O. A scaled file is rarely whole MiB (1000 MiB / 64 =
    15.625 MiB) and a workload issues whole blocks only: without the tail the pass at 1/64
    left 4 % of the file unwritten."""
    whole = test_bytes // MIB * MIB
    parts: list[tuple[int, int, int | str]] = [
        (offset, whole, "1m"),
        (offset + whole, test_bytes - whole, test_bytes - whole),
    ]
    return [
        Workload(rw=rw, bs=bs, iodepth=1, offset=at, size=size, data=data, interval=interval_s)
        for at, size, bs in parts
        if size
    ]


def random_workload(
    rw: Rw,
    *,
    bs: str,
    iodepth: int,
    offset: int,
    test_bytes: int,
    time_s: float,
    data: str,
    interval_s: float | None,
    seed: int,
) -> Workload:
    """One timed random run of CDM: ``time_s`` seconds of ``bs`` I/O at ``iodepth``, offsets
    uniform over the test file with replacement (``random="uniform"``)."""
    return Workload(
        rw=rw,
        bs=bs,
        iodepth=iodepth,
        offset=offset,
        size=test_bytes,
        time=time_s,
        random="uniform",
        data=data,
        interval=interval_s,
        seed=seed,
    )


def run_tests(
    r: Any,
    *,
    head: str,
    offset: int,
    test_bytes: int,
    runs: int,
    time_s: float,
    data: str,
    seed: int,
    **labels: Any,
) -> None:
    """Runs one CrystalDiskMark "All" on runner ``r``: the preparation write of the test file,
    then each test's read and write runs (run 0 unscored, runs 1..``runs`` scored), every run
    timed at ``time_s`` (simulated seconds on a sim drive). Steps are labelled
    ``{head}/prepare`` and ``{head}/{test}_{read|write}/pass_{k}`` (``/part_{p}`` for a
    sequential run's further passes over the file, ``/tail`` for a pass's last, shorter I/O
    when the file is not whole MiB), with labels ``test``, ``direction``,
    ``cdm_pass`` (0 = unscored) and ``scored``. The n-th random run of the call (n from 1)
    draws its offsets with workload seed ``seed`` · 10⁶ + n.
    """
    iv = r.interval_s
    prep = prepare_workloads(offset=offset, test_bytes=test_bytes, data=data, interval_s=iv)
    for i, w in enumerate(prep):
        r.run(
            f"{head}/prepare" + ("/tail" if i else ""),
            w,
            test="prepare",
            direction="write",
            cdm_pass=-1,
            scored=False,
            offset_bytes=offset,
            **labels,
        )
    random_runs = 0
    for name, read_rw, write_rw, bs, qd in TESTS:
        for direction, rw in (("read", read_rw), ("write", write_rw)):
            for k in range(runs + 1):
                step = f"{head}/{name}_{direction}/pass_{k}"
                tags = dict(
                    test=name,
                    direction=direction,
                    cdm_pass=k,
                    scored=k > 0,
                    offset_bytes=offset,
                    **labels,
                )
                if name == "seq":
                    one_pass = _seq_pass(
                        rw, offset=offset, test_bytes=test_bytes, data=data, interval_s=iv
                    )
                    _seq_run(r, step, one_pass, time_s, tags)
                else:
                    # CDM 3 draws every offset from one xor128 stream that is never reseeded,
                    # so no two runs repeat each other's offsets: each random run gets its own
                    # seed (a shared one made the 4K QD32 write rewrite the 4K QD1 write's
                    # blocks in the same order, and each write revisit its read's)
                    random_runs += 1
                    w = random_workload(
                        rw,
                        bs=bs,
                        iodepth=qd,
                        offset=offset,
                        test_bytes=test_bytes,
                        time_s=time_s,
                        data=data,
                        interval_s=iv,
                        seed=seed * 1_000_000 + random_runs,
                    )
                    r.run(step, w, **tags)


def _seq_run(r: Any, step: str, w: list[Workload], time_s: float, tags: dict[str, Any]) -> None:
    """Whole passes ``w`` (the whole MiB, then the tail: ``/tail``) over the test file until
    ``time_s`` has passed (CDM looks at its timer only between passes)."""
    elapsed, part = 0.0, 1
    while True:
        name = step if part == 1 else f"{step}/part_{part}"
        took = 0.0
        for i, piece in enumerate(w):
            df = r.run(name + ("/tail" if i else ""), piece, part=part, **tags)
            took += float(df["interval_s"].sum()) if df.height else 0.0
        elapsed += took
        if elapsed >= time_s or took <= 0:
            break
        part += 1


def scores(steps: pl.DataFrame) -> pl.DataFrame:
    """Per run of each CDM test: MB/s = bytes / seconds over the run's passes, as CDM scores
    it. ``steps`` is :attr:`Replay.steps` (needs ``test``, ``direction``, ``cdm_pass``,
    ``written_gb``, ``read_gb``, ``seconds``); extra grouping columns (``loop``) are kept.
    The preparation write and the unscored run 0 are dropped."""
    runs = steps.filter(
        (pl.col("kind") == "run") & (pl.col("test") != "prepare") & (pl.col("cdm_pass") > 0)
    )
    keys = [c for c in ("loop", "test", "direction", "cdm_pass") if c in runs.columns]
    return (
        runs.group_by(keys, maintain_order=True)
        .agg(
            pl.col("written_gb").sum(),
            pl.col("read_gb").sum(),
            pl.col("seconds").sum(),
        )
        .with_columns(
            (
                pl.when(pl.col("direction") == "write")
                .then(pl.col("written_gb"))
                .otherwise(pl.col("read_gb"))
                * 1e3
                / pl.col("seconds")
            ).alias("mbps")
        )
    )


def best(scored: pl.DataFrame) -> pl.DataFrame:
    """CDM's reported result: the maximum score over the scored runs of each test."""
    keys = [c for c in ("loop", "test", "direction") if c in scored.columns]
    return scored.group_by(keys, maintain_order=True).agg(pl.col("mbps").max())


def estimate_bytes(*, test_bytes: int, runs: int, write_mbps: float, time_s: float) -> float:
    """Bytes one CDM "All" writes on a drive that writes ``write_mbps`` (for progress bars):
    the test file, then (runs + 1) timed runs of each of the four write tests."""
    per_run = write_mbps * 1e6 * time_s
    seq = math.ceil(per_run / test_bytes) * test_bytes if test_bytes else per_run
    return test_bytes + (runs + 1) * (seq + 3 * per_run)
