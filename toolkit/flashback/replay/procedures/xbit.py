"""X-bit labs (2012): 4 KiB QD32 random writes fresh, after two fills, after idle, after TRIM."""

from __future__ import annotations

from typing import Any

from flashback.replay import params as P
from flashback.replay.api import Replay
from flashback.replay.base import Protocol, check_row, effect_pct, register
from flashback.replay.procedures.common import iops, rand_write, seq_fill
from flashback.replay.scaling import idema_bytes

PROCEDURE = """\
secure_erase: secure erase (fresh out of box)
fresh: 4 KiB random writes QD32 for measure_s
fill_1, fill_2: the whole drive written sequentially twice (incompressible)
used: 4 KiB random writes QD32 for measure_s
idle: 30 minutes idle (idle-time garbage collection)
after_idle: 4 KiB random writes QD32 for measure_s
trim: the whole drive TRIMmed
after_trim: 4 KiB random writes QD32 for measure_s
results: IOPS of each state relative to fresh = 100 %
not stated by the review: measure_s (its method names IOMeter 1.1.0 RC1, 4 KiB writes aligned
  to flash pages, QD32, and no duration; 60 s assumed, compare(sensitivity=True) replays 30 s
  and 300 s too); random offsets uniform; incompressible data"""

#: Why the model's loss after the fills is no prediction of X-bit's numbers.
MEASURE_KNOB = (
    "X-bit does not state how long each IOMeter measurement ran, and in the model the loss "
    "after the two fills is set by that length (how far a measurement runs past the spare "
    "area), not by a documented mechanism: replayed at scale 1/16 the 335 loses 0 % for runs "
    "up to 150 s and 24 % at 240 s, the 330 0 % up to 90 s and 53 % at 240 s; tuned to the "
    "335's 10 % (≈ 195 s) the length gives ≈ 45 % for the 330 (published 15 %), so a match is "
    "a knob, not a prediction; the sensitivity rows give the replayed range"
)


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
    measure("used", 2)
    r.idle("idle", r.seconds(p["idle_s"]), condition="idle")
    measure("after_idle", 3)
    r.discard("trim", offset=0, size=None, condition="trim")
    measure("after_trim", 4)


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive = rep.meta["drive"]
    test = "iometer_rnd4k_qd32_write"
    fresh = iops(rep.step("fresh"))
    idle = [s for s in rep.step_records if s["step"] == "idle"]
    rows = [
        check_row(
            test,
            "after_idle",
            "idle_s",
            idle[0]["labels"]["idle_s"] / rep.scale if idle else None,
            "s",
            drive=None,
            tolerance=0.02,
            note="the idle replayed, at the review drive's scale",
            setting=True,
        ),
        check_row(
            test,
            "fresh",
            "avg_iops",
            fresh,
            "IOPS",
            drive=drive,
            note="the review shows only relative values",
        ),
    ]
    assumed = (
        f"each measurement ran {rep.meta['params']['measure_s']:g} s at full scale (assumed: "
        "X-bit does not say)"
    )
    for state in ("used", "after_idle", "after_trim"):
        v = iops(rep.step(state))
        rel = effect_pct("ratio_pct", fresh, v)
        rows.append(
            check_row(
                test,
                state,
                "relative_to_fresh_pct",
                rel,
                "%",
                drive=drive,
                tolerance=0.06,
                note=assumed + (f"; {MEASURE_KNOB}" if state == "used" else ""),
            )
        )
        rows.append(
            check_row(
                test,
                state,
                "loss_vs_fresh_pct",
                effect_pct("drop_pct", fresh, v),
                "%",
                drive=drive,
                tolerance=0.5,
                note="a loss of a few % is compared loosely (±50 %); "
                + assumed
                + (f"; {MEASURE_KNOB}" if state == "used" else ""),
            )
        )
    return rows


register(
    Protocol(
        name="xbit-pts-degradation",
        title="X-bit labs: Intel 335/330 random-write degradation, idle and TRIM recovery",
        source="002_a117cd683a41e7c2.txt",
        review_capacity_bytes=idema_bytes(240),
        default_target="sim:intel-335-240g",
        drives={
            "intel-335-240g": ("Intel SSD 335", idema_bytes(240)),
            "intel-330-120g": ("Intel SSD 330", idema_bytes(120)),
        },
        params={
            "measure_s": (
                60.0,
                "each measurement's duration at full scale; not stated by the review (60 s "
                "assumed; compare(sensitivity=True) replays 30 s and 300 s too)",
                P.number(lo=0, lo_open=True),
            ),
            "idle_s": (1800.0, "the idle period at full scale (30 minutes)", P.number(lo=0)),
            "interval_s": P.interval_s(),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        headline=("iometer_rnd4k_qd32_write", "used", "loss_vs_fresh_pct"),
        estimate_written_bytes=lambda size, scale, p: 2.3 * size,
        unstated={"measure_s": (30.0, 60.0, 300.0)},
    )
)
