"""X-bit labs (2012): 4 KiB QD32 random writes fresh, after two fills, after idle, after TRIM."""

from __future__ import annotations

from typing import Any

from flashback.replay.base import Protocol, Replay, check_row, register
from flashback.replay.procedures.common import iops, rand_write, seq_fill

PROCEDURE = """\
secure_erase: secure erase (fresh out of box)
fresh: 4 KiB random writes QD32 for measure_s
fill_1, fill_2: the whole drive written sequentially twice (incompressible)
after_fill: 4 KiB random writes QD32 for measure_s
idle: 30 minutes idle (idle-time garbage collection)
after_idle: 4 KiB random writes QD32 for measure_s
trim: the whole drive TRIMmed
after_trim: 4 KiB random writes QD32 for measure_s
results: IOPS of each state relative to fresh = 100 %
assumed (not stated): measure_s = 60 s at full scale; random offsets uniform; incompressible"""

# X-bit quotes one loss per drive ("15 % slower", "10 % slower"); the text does not name the
# state, which on its chart is the degraded one (after filling twice).
REVIEW = {"Intel SSD 335 240GB": 90.0, "Intel SSD 330 240GB": 85.0}


def run(r: Any, p: dict[str, Any]) -> None:
    t = r.seconds(p["measure_s"])
    iv = r.interval_s
    size = r.size_bytes

    def measure(name: str, seed: int) -> None:
        r.run(
            name,
            rand_write(offset=0, size=size, time_s=t, interval_s=iv, seed=seed),
            condition=name,
        )

    r.erase("secure_erase")
    measure("fresh", 1)
    r.run("fill_1", seq_fill(offset=0, size=size, interval_s=iv), condition="fill")
    r.run("fill_2", seq_fill(offset=0, size=size, interval_s=iv, seed=2), condition="fill")
    measure("after_fill", 2)
    r.idle("idle", r.seconds(p["idle_s"]), condition="idle")
    measure("after_idle", 3)
    r.discard("trim", offset=0, size=None, condition="trim")
    measure("after_trim", 4)


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive = rep.meta["drive"]
    fresh = iops(rep.step("fresh"))
    rows = [
        check_row(
            "write_iops",
            "fresh",
            fresh,
            "IOPS",
            published=None,
            tolerance=None,
            test="4 KiB random write QD32",
            drive=drive,
            note="the review shows only relative values",
        )
    ]
    for state in ("after_fill", "after_idle", "after_trim"):
        v = iops(rep.step(state))
        rel = None if (v is None or not fresh) else 100.0 * v / fresh
        pub = REVIEW.get(drive) if state == "after_fill" else None
        note = (
            "the review's text gives one loss per drive without naming the state; it is "
            "compared with the after-filling state"
            if state == "after_fill"
            else "the review shows this only on its chart"
        )
        rows.append(
            check_row(
                "write_iops_pct_of_fresh",
                state,
                rel,
                "%",
                published=pub,
                tolerance=0.06,
                test="4 KiB random write QD32",
                drive=drive,
                note=note,
            )
        )
    return rows


register(
    Protocol(
        name="xbit-pts-degradation",
        title="X-bit labs: Intel 335/330 random-write degradation, idle and TRIM recovery",
        source="002_a117cd683a41e7c2.txt",
        review_capacity_bytes=240_000_000_000,
        default_target="sim:intel-335-240g",
        drives={
            "intel-335-240g": ("Intel SSD 335 240GB", 240_000_000_000),
            "intel-330-240g": ("Intel SSD 330 240GB", 240_000_000_000),
        },
        params={
            "measure_s": (60.0, "each measurement's duration at full scale"),
            "idle_s": (1800.0, "the idle period at full scale (30 minutes)"),
            "interval_s": (None, "reporting interval (default 1 s × scale on a sim drive)"),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        estimate_written_bytes=lambda size, scale, p: 2.3 * size,
    )
)
