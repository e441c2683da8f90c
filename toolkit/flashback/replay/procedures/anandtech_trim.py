"""AnandTech (2013): AS-SSD sequential write clean, after 60 min of torture, after TRIM."""

from __future__ import annotations

from typing import Any

from flashback.replay import params as P
from flashback.replay.api import Replay
from flashback.replay.base import Protocol, check_row, effect_pct, register, require
from flashback.replay.procedures.common import duration_row, mbps, rand_write, seq_fill, step_wa
from flashback.replay.scaling import idema_bytes
from flashback.workload import Workload

MIB = 1 << 20

PROCEDURE = """\
secure_erase: secure erase
clean: AS-SSD sequential write (its test file: 1 GiB, 16 MiB blocks QD1, incompressible)
seq_fill: the drive filled with incompressible sequential data
torture: 4 KiB random writes QD32, incompressible, for torture_s (60 min)
idle_before_torture_pass: idle_before_s idle (the review does not say how long the drive sat;
  default 0; a preset with idle GC recovers in it, the SandForce presets do not)
after_torture: AS-SSD sequential write
trim: one TRIM pass over the whole drive (what AS-SSD's free space looks like once deleted)
idle_before_trim_pass: idle_before_s idle again
after_trim: AS-SSD sequential write
the AS-SSD file scales with the target (at least 4 MiB); blocks are 16 MiB, or test size / 16
  when that is smaller"""


def _asssd(r: Any, p: dict[str, Any]) -> Workload:
    # scaled like every byte count (a 64 MiB floor made the 1/64 file 4x the review's share of
    # the drive and moved the after-torture pass +5.5 % against 1/8); 4 MiB at the least
    size = max(r.bytes(p["asssd_bytes"]), min(4 * MIB, r.size_bytes // 8 // MIB * MIB))
    bs = max(min(16 * MIB, size // 16) // (128 << 10) * (128 << 10), 128 << 10)
    return Workload(
        rw="write", bs=bs, iodepth=1, offset=0, size=size, data="random", interval=r.interval_s
    )


def run(r: Any, p: dict[str, Any]) -> None:
    require(r.size_bytes >= 8 * MIB, "the target is too small for this protocol")
    iv = r.interval_s
    r.erase("secure_erase")
    r.run("clean", _asssd(r, p), condition="clean")
    r.run("seq_fill", seq_fill(offset=0, size=r.size_bytes, interval_s=iv), condition="fill")
    r.run(
        "torture",
        rand_write(offset=0, size=r.size_bytes, time_s=r.seconds(p["torture_s"]), interval_s=iv),
        condition="torture",
    )
    _idle(r, p, "idle_before_torture_pass")
    r.run("after_torture", _asssd(r, p), condition="after_torture")
    r.discard("trim", offset=0, size=None, condition="trim")
    _idle(r, p, "idle_before_trim_pass")
    r.run("after_trim", _asssd(r, p), condition="after_trim")


def _idle(r: Any, p: dict[str, Any], name: str) -> None:
    if p["idle_before_s"] > 0:
        r.idle(name, r.seconds(p["idle_before_s"]), condition="idle")


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive = rep.meta["drive"]
    torture = rep.step("torture")
    secs = float(torture["interval_s"].sum()) / rep.scale if torture.height else None
    rows = [duration_row("trim_validation_torture", secs)]
    wa = {s: step_wa(rep, s) for s in ("after_torture", "after_trim")}

    def wa_note(step: str) -> str:
        return "" if wa[step] is None else f" (write amplification during it: {wa[step]:.2f})"

    notes = {
        "clean": "",
        "torture": "written right after the torture: the model's greedy GC must copy most of "
        f"each victim block{wa_note('after_torture')}; the SF-2281 lost less. The review does "
        "not say how long the drive sat before AS-SSD ran, and the SandForce presets have no "
        "idle-time GC (no source gives its rate): a real drive that freed 1 GiB of blocks in "
        "that pause writes AS-SSD's file at its dirty-state rate (0.691 × 315 = 218 MB/s, "
        "above the published 183.3), so the miss is the idle GC the model lacks; the "
        "sensitivity rows and idle_gc=on bound it. The replay writes AS-SSD's file once; "
        "descriptions of AS-SSD differ on whether its measured write is the file's first "
        "(one says the Seq test creates the file with 16 MiB writes, then reads it; others "
        "that results are means of several runs). A second pass over the same 1 GiB, whose "
        "first pass left whole blocks to invalidate, replays at 192 MB/s (1/16) and 212 "
        "(1/8) after the same torture, against 59 and 61 for the first",
        "after_trim": "predicted, not fitted: the SandForce presets' dirty state (dirty_rate, "
        "fitted once on ComputerBase's SSD 530 and AnandTech's Vertex 3 120 GB, neither "
        "replayed) keeps incompressible writes below the clean rate after TRIM, whatever "
        f"trim_efficacy{wa_note('after_trim')}",
    }
    for step, cond in (
        ("clean", "clean"),
        ("after_torture", "torture"),
        ("after_trim", "after_trim"),
    ):
        rows.append(
            check_row(
                "as_ssd_seq_write",
                cond,
                "avg_mbps",
                mbps(rep.step(step)),
                "MB/s",
                drive=drive,
                tolerance=0.15,
                note=notes[cond],
            )
        )
    clean = rows[1]["replayed"]
    key = {c: ("as_ssd_seq_write", c, "avg_mbps") for c in ("clean", "torture", "after_trim")}
    for cond, metric, kind, note in (
        ("torture", "drop_pct", "drop_pct", "the effect itself: the loss after the torture"),
        (
            "after_trim",
            "relative_to_clean_pct",
            "ratio_pct",
            "the effect itself: the share of the clean rate TRIM gives back",
        ),
    ):
        v = mbps(rep.step("after_torture" if cond == "torture" else cond))
        value = effect_pct(kind, clean, v)
        rows.append(
            check_row(
                "as_ssd_seq_write",
                cond,
                metric,
                value,
                "%",
                drive=drive,
                tolerance=0.15,
                note=note,
                effect=(kind, key["clean"], key[cond]),
            )
        )
    return rows


def pair_checks(a: Replay, b: Replay) -> list[dict[str, Any]]:
    """How much the after-torture and after-TRIM passes move with the unstated idle: ``b``
    minus ``a`` in MB/s, for replays that differ in ``idle_before_s``.

    Raises:
        ReplayError: the two replays have the same ``idle_before_s``.
    """
    ia, ib = a.meta["params"]["idle_before_s"], b.meta["params"]["idle_before_s"]
    require(ia != ib, "other= must be a replay with another idle_before_s")
    rows = []
    for step, cond in (("after_torture", "torture"), ("after_trim", "after_trim")):
        va, vb = mbps(a.step(step)), mbps(b.step(step))
        rows.append(
            check_row(
                "as_ssd_seq_write",
                cond,
                "idle_sensitivity_mbps",
                None if va is None or vb is None else vb - va,
                "MB/s",
                drive=a.meta["drive"],
                note=f"change of avg_mbps when idle_before_s goes from {ia:g} s to {ib:g} s "
                f"(unstated by the review): {va:.1f} -> {vb:.1f} MB/s"
                if va is not None and vb is not None
                else "a pass is missing",
            )
        )
    return rows


register(
    Protocol(
        name="anandtech-trim-validation",
        title="AnandTech: Intel SSD 530 TRIM validation (AS-SSD sequential write)",
        source="003_76d70b35b5160b0f.txt",
        review_capacity_bytes=idema_bytes(240),
        default_target="sim:intel-530-240g",
        drives={"intel-530-240g": ("Intel SSD 530", idema_bytes(240))},
        params={
            "torture_s": (
                3600.0,
                "random-write torture at full scale (60 minutes)",
                P.number(lo=0, lo_open=True),
            ),
            "asssd_bytes": (1 << 30, "AS-SSD test file at full scale (1 GiB)", P.size_bytes()),
            "idle_before_s": (
                0.0,
                "idle before the after-torture and after-TRIM passes at full scale; not stated "
                "by the review (compare(sensitivity=True) replays 30 s and 300 s too)",
                P.number(lo=0),
            ),
            "interval_s": P.interval_s(),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        pair_checks=pair_checks,
        headline=("as_ssd_seq_write", "torture", "avg_mbps"),
        estimate_written_bytes=lambda size, scale, p: 2.0 * size,
        unstated={"idle_before_s": (0.0, 30.0, 300.0)},
        # the AS-SSD file is 1 GiB x scale: 4 erase blocks of the 530 at 1/64, 8 at 1/32;
        # which victims GC finds while it is written moves the after-torture pass from seed to
        # seed by more than 3 % below 1/16 (sd over six seeds 6.6 % at 1/64, 4.0 % at 1/32,
        # 3.2 % at 1/16, 0.8 % at full size; tests/test_replay_scale.py KNOWN_DRIFTS)
        min_held_scale="1/16",
    )
)
