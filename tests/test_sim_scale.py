"""A scaled-down simulated drive behaves as the full drive does, in the quantities that set
a replay's results (write amplification first)."""

from __future__ import annotations

import flashback as fb

GB = 1e9


def steady_random_write_wa(spec: str, *, fills: float, last: float) -> float:
    """Write amplification (NAND bytes / host bytes) over the last ``last`` of ``fills`` drive
    capacities of uniform 4 KiB QD32 random writes (with replacement: a random map's passes
    would rewrite every block once each, a far lower WA) after one sequential fill."""
    t = fb.Target(spec)
    size = int(t.size_bytes)
    t.run(fb.Workload(rw="write", bs="128k", iodepth=32, loops=1))
    cap = t.run(
        fb.Workload(
            rw="randwrite", bs="4k", iodepth=32, written=int(fills * size), random="uniform", seed=1
        )
    )
    df = cap.intervals
    host = df["host_written_bytes"].to_numpy().astype(float)
    nand = df["nand_written_bytes"].to_numpy().astype(float)
    i = int((host < host[-1] - last * size).sum())  # the row before the last fills
    return (nand[-1] - nand[i]) / (host[-1] - host[i])


def test_steady_random_write_wa_holds_from_1_128_to_1_16():
    # The raw NAND of a scaled drive is sized so the spare left for data is scale × the full
    # drive's once the blocks it keeps out of data use are set aside. Setting aside whole open
    # frontiers and the refilled GC pool (reserve + 3 blocks) where the drive holds about
    # reserve + 1 on average left ~2 blocks more spare at every scale: generic's steady WA
    # was 7.28 at 1/128 vs 7.66 at 1/16 (-5.0 %, this test on e7861a6~1's spec.rs) and 7.41
    # at 1/64 vs 7.68 at 1/8 (-3.6 %); counting what it holds: 7.67 vs 7.71 and 7.61 vs 7.71. Smaller drives still drift
    # (1/256: 7.20, -6.6 %: its spare, 16.65 blocks, is rounded to whole blocks, and fewer
    # blocks give greedy GC emptier victims).
    small = steady_random_write_wa("sim:generic?scale=1/128", fills=6, last=2)
    large = steady_random_write_wa("sim:generic?scale=1/16", fills=6, last=2)
    assert abs(small / large - 1) < 0.025, (small, large)


def test_a_scaled_preset_says_what_it_does_not_scale():
    # #25: "where a parameter cannot scale (a fixed-size structure of the real controller),
    # say so in the preset"
    src = fb.Target("sim:crucial-m4-128g?scale=1/64").meta["config"]["sources"]["scale"]
    assert "shrunk by 0.015625" in src
    for fixed in ("erase-block size", "channels", "dies", "planes", "timings", "erase-ahead"):
        assert fixed in src.split("not scaled", 1)[-1], fixed
    assert "scale" not in fb.Target("sim:crucial-m4-128g").meta["config"]["sources"]
