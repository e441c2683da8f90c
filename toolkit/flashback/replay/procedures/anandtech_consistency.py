"""AnandTech (2013): IOPS every second of 2000 s of 4 KiB QD32 random writes after a fill."""

from __future__ import annotations

from typing import Any

import polars as pl

from flashback.replay import params as P
from flashback.replay.api import Replay
from flashback.replay.base import Protocol, check_row, register, require
from flashback.replay.procedures.common import (
    dip,
    duration_row,
    iops,
    num,
    rand_write,
    regular,
    seq_fill,
)
from flashback.replay.scaling import idema_bytes

PROCEDURE = """\
secure_erase: secure erase
seq_fill: every LBA of the span written sequentially (incompressible)
random_write: 4 KiB random writes QD32 over the span, incompressible, for run_s (2000 s),
  IOPS recorded every second (every second × scale on a scaled drive)
op25=True: the span is 75 % of the capacity (25 % extra spare area by a smaller partition)"""


def _span(size: int, p: dict[str, Any]) -> int:
    frac = 0.75 if p["op25"] else 1.0
    return int(size * frac) // (1 << 20) * (1 << 20)


def run(r: Any, p: dict[str, Any]) -> None:
    span = _span(r.size_bytes, p)
    require(span > 0, "the target is too small for this protocol")
    iv = r.interval_s
    cond = "op_25" if p["op25"] else "default_op"
    r.erase("secure_erase")
    r.run("seq_fill", seq_fill(offset=0, size=span, interval_s=iv), condition="fill")
    r.run(
        "random_write",
        rand_write(offset=0, size=span, time_s=r.seconds(p["run_s"]), interval_s=iv),
        condition=cond,
    )


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive, scale = rep.meta["drive"], rep.scale
    op25 = rep.meta["params"]["op25"]
    cond = "op_25" if op25 else "default_op"
    test = "consistency_rnd4k_qd32_write"
    df = rep.step("random_write")
    note = "the review shows this only as a graph"
    first = late = cliff = None
    secs = None
    if df.height:
        secs = num(df["interval_s"].sum()) / scale
        steady = regular(df)
        first = num(steady.head(max(3, steady.height // 50))["write_iops"].median())
        late = iops(df.filter(pl.col("step_t_s") >= 1400.0 * scale))
        d = dip(df, col="write_iops", drop=0.5)
        cliff = None if d is None else d[0] / scale
    rows = [
        duration_row(test, secs),
        check_row(
            test,
            "all",
            "interval_s",
            rep.meta["interval_s"] / scale,
            "s",
            drive=None,
            tolerance=0.02,
            note="at the review drive's scale",
            setting=True,
        ),
        check_row(test, cond, "initial_iops", first, "IOPS", drive=drive, note=note),
        check_row(
            test,
            cond,
            "cliff_time_s",
            cliff,
            "s",
            drive=drive,
            note=note + "; first fall below half the initial IOPS, at the review drive's scale",
        ),
        check_row(
            test,
            cond,
            "steady_avg_iops",
            late,
            "IOPS",
            drive=drive,
            note=note + "; mean from t = 1400 s, where the review's zoom begins",
        ),
    ]
    if op25:
        span = rep.meta["params"]
        rows.append(
            check_row(
                test,
                "op_25",
                "extra_op_pct",
                25.0 if span else None,
                "%",
                drive=None,
                tolerance=0.01,
                note="the span tested is 75 % of the capacity",
                setting=True,
            )
        )
    return rows


def pair_checks(a: Replay, b: Replay) -> list[dict[str, Any]]:
    """The review's headline: the SSD 530 reaches its steady state about twice as late as the
    SSD 335 (both default OP): the ratio of the replayed cliff times, 530 over 335.

    Raises:
        ReplayError: the two replays are not one on the SSD 530 and one on the SSD 335, or
            differ in ``op25``.
    """
    drives = {a.meta["drive"]: a, b.meta["drive"]: b}
    require(
        set(drives) == {"Intel SSD 530", "Intel SSD 335"},
        "other= must pair a replay on the SSD 530 with one on the SSD 335 (sim:intel-335-240g)",
    )
    require(a.meta["params"]["op25"] == b.meta["params"]["op25"], "other= must have the same op25")
    cond = "op_25" if a.meta["params"]["op25"] else "default_op"
    times = {}
    for name, rep in drives.items():
        df = rep.step("random_write")
        d = dip(df, col="write_iops", drop=0.5) if df.height else None
        times[name] = None if d is None else d[0] / rep.scale
    t530, t335 = times["Intel SSD 530"], times["Intel SSD 335"]
    ratio = None if not t530 or not t335 else t530 / t335
    same = _same_model(drives["Intel SSD 530"], drives["Intel SSD 335"])
    return [
        check_row(
            "consistency_rnd4k_qd32_write",
            cond,
            "steady_state_onset_vs_ssd335_ratio",
            ratio,
            "ratio",
            drive="Intel SSD 530",
            tolerance=0.25,
            note="the review: the 530 reaches steady state about twice as late as the 335; "
            "onset read as the first fall below half the initial IOPS in each replay "
            f"({t530 if t530 is None else round(t530)} s and "
            f"{t335 if t335 is None else round(t335)} s at the review drives' scale)"
            + (
                "; the two simulated drives differ in no modelled parameter (their presets "
                "differ only in name and sources), so the replay cannot tell them apart"
                if same
                else ""
            ),
        )
    ]


def _same_model(a: Replay, b: Replay) -> bool:
    """Whether two replays ran on simulated drives with the same configuration (every
    parameter in effect), names, descriptions, cited sources and the overrides as spelled in
    the target aside (``False`` when either is not simulated)."""
    from flashback.replay.mechanisms import sim_config

    ca, cb = sim_config(dict(a.meta)), sim_config(dict(b.meta))
    if ca is None or cb is None:
        return False
    aside = ("name", "description", "sources", "overrides")  # overrides: as spelled
    return {k: v for k, v in ca.items() if k not in aside} == {
        k: v for k, v in cb.items() if k not in aside
    }


register(
    Protocol(
        name="anandtech-consistency",
        title="AnandTech: Intel SSD 530 performance consistency (IOPS per second, 2000 s)",
        source="003_76d70b35b5160b0f.txt",
        review_capacity_bytes=idema_bytes(240),
        default_target="sim:intel-530-240g",
        drives={
            "intel-530-240g": ("Intel SSD 530", idema_bytes(240)),
            "intel-335-240g": ("Intel SSD 335", idema_bytes(240)),
        },
        params={
            "op25": (
                False,
                "test 75 % of the capacity (25 % extra over-provisioning)",
                P.boolean(),
            ),
            "run_s": (2000.0, "random-write duration at full scale", P.number(lo=0, lo_open=True)),
            "interval_s": P.interval_s(),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        pair_checks=pair_checks,
        headline=(
            "consistency_rnd4k_qd32_write",
            "default_op",
            "steady_state_onset_vs_ssd335_ratio",
        ),
        estimate_written_bytes=lambda size, scale, p: 2.0 * size,
    )
)
