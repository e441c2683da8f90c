"""Puget Systems (2013): CrystalDiskMark 3 looped from a secure erase to ≈ 1.8 TB written."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from flashback.replay.scaling import idema_bytes
from flashback.replay.base import Protocol, Replay, check_row, register, require
from flashback.replay.procedures.common import GB
from flashback.workload import Workload

MIB = 1 << 20
ADVERTISED_WRITE_MBPS = 500.0
# CrystalDiskMark 3 order: each test's read passes, then its write passes.
TESTS = (
    ("seq", "read", "write", "1m", 1),
    ("rand512k", "randread", "randwrite", "512k", 1),
    ("rand4k", "randread", "randwrite", "4k", 1),
    ("rand4k_qd32", "randread", "randwrite", "4k", 32),
)

PROCEDURE = """\
secure_erase: secure erase (a whole-span discard on a real target)
cdm_loop_NNNN/prepare: CrystalDiskMark writes its test file (test_size, sequential 1 MiB)
cdm_loop_NNNN/<test>_<read|write>/pass_P: Seq 1 MiB QD1, 512 KiB random QD1, 4 KiB random
  QD1, 4 KiB random QD32; each read then write, `passes` times, one pass over the test file
cdm_loop_NNNN/trim: the test file is deleted and TRIMmed (trim=True) or just left (False)
repeat until total_written_bytes (1.8 TB at full scale) have been written
assumed: test_size 1000 MiB and 2 passes, so one loop writes 9 × 1000 MiB ≈ 9.4 GB (the review
  says ≈ 9.2 GB); the test file moves to the next free slot each loop (placement="rotate"),
  as a file system allocates new space, or stays at offset 0 (placement="fixed")"""


def _params(size_bytes: int, scale: float, p: dict[str, Any]) -> tuple[int, int]:
    test = max(int(p["test_size_bytes"] * scale) // MIB * MIB, MIB)
    total = int(p["total_written_bytes"] * scale)
    return test, total


def estimate(size_bytes: int, scale: float, p: dict[str, Any]) -> float:
    test, total = _params(size_bytes, scale, p)
    per_loop = test * (1 + 4 * p["passes"])
    if p["loops"] is not None:
        return per_loop * p["loops"]
    return float(-(-total // per_loop) * per_loop)


def run(r: Any, p: dict[str, Any]) -> None:
    require(p["data"] in ("random", "zeros"), f"data={p['data']!r}: use 'random' or 'zeros'")
    require(p["placement"] in ("rotate", "fixed"), "placement must be 'rotate' or 'fixed'")
    test, total = _params(r.size_bytes, r.scale, p)
    require(test <= r.size_bytes, f"the test file ({test} bytes) does not fit on the target")
    slots = r.size_bytes // test
    r.erase("secure_erase")
    loop = 0
    while True:
        if p["loops"] is not None and loop >= p["loops"]:
            break
        if p["loops"] is None and r.written_bytes >= total:
            break
        offset = (loop % slots) * test if p["placement"] == "rotate" else 0
        head = f"cdm_loop_{loop:04d}"
        common = {"offset": offset, "size": test, "data": p["data"], "interval": p["interval_s"]}
        r.run(
            f"{head}/prepare",
            Workload(rw="write", bs="1m", iodepth=1, **common),
            loop=loop,
            test="prepare",
            direction="write",
            offset_bytes=offset,
        )
        for name, read_rw, write_rw, bs, qd in TESTS:
            for direction, rw in (("read", read_rw), ("write", write_rw)):
                for k in range(1, p["passes"] + 1):
                    w = Workload(rw=rw, bs=bs, iodepth=qd, seed=loop * 100 + k, **common)
                    r.run(
                        f"{head}/{name}_{direction}/pass_{k}",
                        w,
                        loop=loop,
                        test=name,
                        direction=direction,
                        cdm_pass=k,
                        offset_bytes=offset,
                    )
        if p["trim"]:
            r.discard(f"{head}/trim", offset=offset, size=test, loop=loop)
        loop += 1


def loops_frame(rep: Replay) -> pl.DataFrame:
    """Per loop and test: CrystalDiskMark's result (the best pass, MB/s) and the host GB
    written at the end of the loop (quoted at the review drive's scale in ``gb_written_full``)."""
    steps = rep.steps.filter((pl.col("kind") == "run") & (pl.col("test") != "prepare"))
    if steps.is_empty():
        return pl.DataFrame()
    steps = steps.with_columns(
        pl.when(pl.col("direction") == "write")
        .then(pl.col("write_mbps"))
        .otherwise(pl.col("read_mbps"))
        .alias("mbps")
    )
    end = steps.group_by("loop").agg(pl.col("host_written_end_bytes").max().alias("end_bytes"))
    out = (
        steps.group_by("loop", "test", "direction")
        .agg(pl.col("mbps").max())
        .join(end, on="loop")
        .with_columns(
            (pl.col("end_bytes") / GB).alias("gb_written"),
            (pl.col("end_bytes") / GB / rep.scale).alias("gb_written_full"),
        )
        .sort("loop", "test", "direction")
    )
    return out


PUB_TEST = {
    "seq": "cdm_seq",
    "rand512k": "cdm_rnd512k",
    "rand4k": "cdm_rnd4k",
    "rand4k_qd32": "cdm_rnd4k_qd32",
}


def checks(rep: Replay) -> list[dict[str, Any]]:
    p = rep.meta["params"]
    drive = rep.meta["drive"]
    scale = rep.scale
    cond = "incompressible" if p["data"] == "random" else "compressible"
    loops = loops_frame(rep)
    rows: list[dict[str, Any]] = []

    def series(test: str, direction: str) -> pl.DataFrame:
        if loops.is_empty():
            return loops
        return loops.filter((pl.col("test") == test) & (pl.col("direction") == direction))

    def best(test: str, direction: str) -> float | None:
        s = series(test, direction)
        return None if s.is_empty() else float(s["mbps"].max())

    # Procedure: bytes per loop, total written, drive fills (at the review drive's scale).
    n_loops = 0 if loops.is_empty() else loops["loop"].n_unique()
    total_gb = rep.meta["host_written_bytes"] / GB / scale
    rows.append(
        check_row(
            "cdm_loop",
            "all",
            "written_per_loop_gb",
            total_gb / n_loops if n_loops else None,
            "GB",
            drive=drive,
            tolerance=0.05,
            note="assumed test size 1000 MiB × (1 + 4 × 2 passes)",
        )
    )
    rows.append(
        check_row(
            "cdm_loop",
            "all",
            "total_written_gb",
            total_gb,
            "GB",
            drive=drive,
            tolerance=0.02 if p["loops"] is None else None,
        )
    )
    rows.append(
        check_row(
            "cdm_loop",
            "all",
            "drive_fills",
            rep.meta["host_written_bytes"] / rep.meta["target_size_bytes"],
            "fills",
            drive=drive,
            tolerance=0.10 if p["loops"] is None else None,
        )
    )
    sw_max = best("seq", "write")
    rows.append(
        check_row("cdm_seq_write", cond, "max_mbps", sw_max, "MB/s", drive=drive, tolerance=0.10)
    )
    rows.append(
        check_row(
            "cdm_seq_read",
            cond,
            "max_mbps",
            best("seq", "read"),
            "MB/s",
            drive=drive,
            tolerance=0.10,
        )
    )
    if cond != "incompressible":
        return rows
    adv = ADVERTISED_WRITE_MBPS
    rows.append(
        check_row(
            "cdm_seq_write",
            cond,
            "max_pct_of_advertised",
            None if sw_max is None else 100 * sw_max / adv,
            "%",
            drive=drive,
            tolerance=0.10,
        )
    )
    sw = series("seq", "write")
    late = sw.filter(pl.col("gb_written_full") >= 380.0) if sw.height else sw
    avg = float(late["mbps"].mean()) if late.height else None
    note = "mean of the loops after 380 GB written, where the review starts its average"
    rows.append(
        check_row(
            "cdm_seq_write", cond, "avg_mbps", avg, "MB/s", drive=drive, tolerance=0.15, note=note
        )
    )
    rows.append(
        check_row(
            "cdm_seq_write",
            cond,
            "avg_pct_of_advertised",
            None if avg is None else 100 * avg / adv,
            "%",
            drive=drive,
            tolerance=0.15,
            note=note,
        )
    )
    fit_note = (
        "three-level least-squares fit of the per-loop results against host GB "
        "written, at the review drive's scale"
    )
    for test in ("seq", "rand512k", "rand4k_qd32"):
        s = series(test, "write")
        fit = (
            _breakpoints(s["gb_written_full"].to_numpy(), s["mbps"].to_numpy())
            if s.height
            else None
        )
        pub_test = f"{PUB_TEST[test]}_write"
        for k in (1, 2):
            rows.append(
                check_row(
                    pub_test,
                    cond,
                    f"breakpoint_{k}_gb",
                    None if fit is None else fit[k - 1],
                    "GB",
                    drive=drive,
                    tolerance=0.25,
                    note=fit_note,
                )
            )
        mid = None
        if fit is not None:
            mid = s.filter(
                (pl.col("gb_written_full") >= fit[0]) & (pl.col("gb_written_full") < fit[1])
            )
        if test == "seq":
            for metric, fn in (("range_low_mbps", "min"), ("range_high_mbps", "max")):
                v = None if mid is None or mid.is_empty() else float(getattr(mid["mbps"], fn)())
                rows.append(
                    check_row(
                        pub_test,
                        cond,
                        metric,
                        v,
                        "MB/s",
                        drive=drive,
                        tolerance=0.25,
                        note="between the two fitted breakpoints",
                    )
                )
        else:
            v = None if mid is None or mid.is_empty() else float(mid["mbps"].mean())
            rows.append(
                check_row(
                    pub_test,
                    cond,
                    "level_after_breakpoint_1_mbps",
                    v,
                    "MB/s",
                    drive=drive,
                    tolerance=0.15,
                    note="mean between the two fitted breakpoints",
                )
            )
    return rows


def pair_checks(a: Replay, b: Replay) -> list[dict[str, Any]]:
    """Numbers that need two Puget replays: reads with zeros vs random data, TRIM on vs off."""
    pa, pb = a.meta["params"], b.meta["params"]
    drive = a.meta["drive"]
    la, lb = loops_frame(a), loops_frame(b)
    rows: list[dict[str, Any]] = []
    if la.is_empty() or lb.is_empty():
        return rows

    def best(frame: pl.DataFrame, test: str, direction: str) -> float | None:
        s = frame.filter((pl.col("test") == test) & (pl.col("direction") == direction))
        return None if s.is_empty() else float(s["mbps"].max())

    if pa["data"] != pb["data"]:
        comp, incomp = (la, lb) if pa["data"] == "zeros" else (lb, la)
        losses = []
        for test in PUB_TEST:
            c, i = best(comp, test, "read"), best(incomp, test, "read")
            if c and i is not None:
                losses.append(100.0 * (1 - i / c))
        rows.append(
            check_row(
                "cdm_read",
                "incompressible",
                "loss_vs_compressible_pct",
                sum(losses) / len(losses) if losses else None,
                "%",
                drive=drive,
                tolerance=1.0,
                note="mean over the four read tests of the best "
                "results; a few % compared loosely (±100 %)",
            )
        )
    if pa["trim"] != pb["trim"] and pa["data"] == pb["data"] == "random":
        on, off = (la, lb) if pa["trim"] else (lb, la)
        gains = []
        for test in PUB_TEST:
            x = on.filter((pl.col("test") == test) & (pl.col("direction") == "write"))
            y = off.filter((pl.col("test") == test) & (pl.col("direction") == "write"))
            if x.height and y.height and float(y["mbps"].mean()) > 0:
                gains.append(100.0 * (float(x["mbps"].mean()) / float(y["mbps"].mean()) - 1))
        note = "gain of the mean per-loop write result with TRIM, over the four write tests"
        for metric, fn in (("trim_gain_min_pct", min), ("trim_gain_max_pct", max)):
            rows.append(
                check_row(
                    "cdm_write",
                    "trim_on_vs_off",
                    metric,
                    fn(gains) if gains else None,
                    "%",
                    drive=drive,
                    tolerance=1.0,
                    note=note + "; compared loosely (±100 %)",
                )
            )
    return rows


def _breakpoints(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    from flashback.replay.procedures.common import three_levels

    return three_levels(x, y)


register(
    Protocol(
        name="puget-cdm-loop",
        title="Puget Systems: Intel 520 performance vs data written (CrystalDiskMark 3 looped)",
        source="000_2002a1564e89ff8a.txt",
        review_capacity_bytes=idema_bytes(120),
        default_target="sim:intel-520-120g",
        drives={"intel-520-120g": ("Intel SSD 520", idema_bytes(120))},
        params={
            "data": ("random", "random (incompressible) or zeros (compressible)"),
            "trim": (True, "TRIM the test file after each loop"),
            "test_size_bytes": (1000 * MIB, "CrystalDiskMark test size at full scale"),
            "passes": (2, "passes per test (CrystalDiskMark keeps the best)"),
            "total_written_bytes": (1.8e12, "stop after this many host bytes (full scale)"),
            "loops": (None, "stop after this many loops instead"),
            "placement": ("rotate", "rotate: the test file moves each loop; fixed: offset 0"),
            "interval_s": (None, "reporting interval (default 1 s)"),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        estimate_written_bytes=estimate,
        pair_checks=pair_checks,
    )
)
