"""BeHardware (2011): a nearly full drive, 3-minute runs in a 10 GB span, used vs TRIM."""

from __future__ import annotations

from typing import Any

import polars as pl

from flashback.replay.base import Protocol, Replay, check_row, register, require
from flashback.replay.procedures.common import GB, dip, mbps, rand_write, seq_fill

PROCEDURE = """\
secure_erase: secure erase
fill: sequential incompressible writes over everything but the last span_bytes (10 GB)
random_write_new: random writes in the span for run_s (3 min)     -> "New" random graph
seq_write_used: sequential writes in the span for run_s             -> "Used" sequential
trim_1: TRIM the span
seq_write_trim: sequential writes                                     -> "TRIM" sequential
random_write_used: random writes                                      -> "Used" random
trim_2: TRIM the span
random_write_trim: random writes                                      -> "TRIM" random
reset/secure_erase, reset/fill: the drive put back in the same state
seq_write_new: sequential writes                                      -> "New" sequential
assumed (IOMeter settings not stated): random = 4 KiB QD32 uniform, sequential = 128 KiB QD32,
  incompressible data"""

REVIEW = {
    # drive: random dip (s, GB) | sequential used, first 30 s (MB/s) | sequential new level (MB/s)
    "Intel SSD 320 120GB": {"dip_s": 210.0, "dip_gb": 7.59},
    "OCZ Vertex 3 120GB": {
        "dip_s": 180.0,
        "dip_gb": 13.5,
        "seq_used_min": 48.3,
        "seq_new_start": 161.0,
        "seq_new_dip_s": 60.0,
        "seq_trim": 130.0,
    },
    "Intel SSD 510 120GB": {"dip_s": 60.0, "dip_gb": 3.9, "seq_used_min": 120.0},
    "Crucial M4 128GB": {"dip_s": 90.0, "dip_gb": 6.4, "seq_used_min": 83.1},
}


def _seq(offset: int, size: int, time_s: float, interval_s: float) -> Any:
    from flashback.workload import Workload

    return Workload(
        rw="write",
        bs="128k",
        iodepth=32,
        offset=offset,
        size=size,
        time=time_s,
        data="random",
        interval=interval_s,
    )


def run(r: Any, p: dict[str, Any]) -> None:
    span = r.bytes(p["span_bytes"])
    require(span < r.size_bytes, f"the span ({span} bytes) must be smaller than the target")
    start = (r.size_bytes - span) // (1 << 20) * (1 << 20)
    span = r.size_bytes - start
    run_s = r.seconds(p["run_s"])
    iv = r.interval_s

    def rnd(name: str, state: str, seed: int) -> None:
        r.run(
            name,
            rand_write(offset=start, size=span, time_s=run_s, interval_s=iv, seed=seed),
            condition=state,
            pattern="random",
        )

    def seq(name: str, state: str) -> None:
        r.run(name, _seq(start, span, run_s, iv), condition=state, pattern="sequential")

    def fill(prefix: str = "") -> None:
        r.erase(f"{prefix}secure_erase")
        r.run(f"{prefix}fill", seq_fill(offset=0, size=start, interval_s=iv), condition="fill")

    fill()
    rnd("random_write_new", "new", 1)
    seq("seq_write_used", "used")
    r.discard("trim_1", offset=start, size=span)
    seq("seq_write_trim", "trim")
    rnd("random_write_used", "used", 2)
    r.discard("trim_2", offset=start, size=span)
    rnd("random_write_trim", "trim", 3)
    fill("reset/")
    seq("seq_write_new", "new")


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive, scale = rep.meta["drive"], rep.scale
    want = REVIEW.get(drive, {})
    kw = {"drive": drive}
    rows: list[dict[str, Any]] = []
    note_scale = "time and GB at the review drive's scale"
    rnd = rep.step("random_write_new")
    d = dip(rnd) if rnd.height else None
    rows.append(
        check_row(
            "dip_time",
            "new",
            None if d is None else d[0] / scale,
            "s",
            published=want.get("dip_s"),
            tolerance=0.25,
            test="random write",
            note=note_scale + "; the review's text does not say whether its dip "
            "times are from the New or the Used random graph (they look alike)",
            **kw,
        )
    )
    rows.append(
        check_row(
            "dip_written",
            "new",
            None if d is None else d[1] / GB / scale,
            "GB",
            published=want.get("dip_gb"),
            tolerance=0.25,
            test="random write",
            note=note_scale,
            **kw,
        )
    )
    used = rep.step("seq_write_used")
    first = used.filter(pl.col("step_t_s") <= 30.0 * scale + 1e-9) if used.height else used
    low = None if first.is_empty() else float(first["write_mbps"].min())
    rows.append(
        check_row(
            "seq_write_min_first_30s",
            "used",
            low,
            "MB/s",
            published=want.get("seq_used_min"),
            tolerance=0.25,
            test="sequential write",
            **kw,
        )
    )
    new = rep.step("seq_write_new")
    start = None
    if new.height:
        head = new.head(max(3, new.height // 10))
        start = float(head["write_mbps"].median())
    rows.append(
        check_row(
            "seq_write_start",
            "new",
            start,
            "MB/s",
            published=want.get("seq_new_start"),
            tolerance=0.15,
            test="sequential write",
            **kw,
        )
    )
    nd = dip(new, drop=0.85) if new.height else None
    if "seq_new_dip_s" in want:
        rows.append(
            check_row(
                "dip_time",
                "new",
                None if nd is None else nd[0] / scale,
                "s",
                published=want["seq_new_dip_s"],
                tolerance=0.25,
                test="sequential write",
                note=note_scale,
                **kw,
            )
        )
    for step, cond in (
        ("seq_write_new", "new"),
        ("seq_write_used", "used"),
        ("seq_write_trim", "trim"),
    ):
        pub = want.get("seq_trim") if cond == "trim" else None
        rows.append(
            check_row(
                "seq_write_mean",
                cond,
                mbps(rep.step(step)),
                "MB/s",
                published=pub,
                tolerance=0.15,
                test="sequential write",
                **kw,
            )
        )
    for step, cond in (
        ("random_write_new", "new"),
        ("random_write_used", "used"),
        ("random_write_trim", "trim"),
    ):
        rows.append(
            check_row(
                "random_write_mean",
                cond,
                mbps(rep.step(step)),
                "MB/s",
                published=None,
                tolerance=None,
                test="random write",
                note="the review shows this only as a graph",
                **kw,
            )
        )
    return rows


register(
    Protocol(
        name="behardware-used-trim",
        title="BeHardware: new / used / TRIM in a 10 GB span of an otherwise full drive",
        source="001_3ee9a2719ff37343.txt",
        review_capacity_bytes=120_000_000_000,
        default_target="sim:crucial-m4-128g",
        drives={
            "crucial-m4-128g": ("Crucial M4 128GB", 128_000_000_000),
            "ocz-vertex3-120g": ("OCZ Vertex 3 120GB", 120_000_000_000),
            "intel-510-120g": ("Intel SSD 510 120GB", 120_000_000_000),
            "intel-320-120g": ("Intel SSD 320 120GB", 120_000_000_000),
        },
        params={
            "span_bytes": (10e9, "the span left free and tested (10 GB at full scale)"),
            "run_s": (180.0, "each run's duration at full scale (3 minutes)"),
            "interval_s": (None, "reporting interval (default 1 s × scale on a sim drive)"),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        estimate_written_bytes=lambda size, scale, p: 2.0 * size,
    )
)
