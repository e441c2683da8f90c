"""Replays hold at every scale: each protocol replayed at two small scales in ``make test``
(its ``min_held_scale`` and twice it: 1/64 and 1/32, 1/16 and 1/8 for AnandTech's TRIM
validation; below the floor compare() gives no within/outside) gives every compared row
within 3 % (or 1 percentage point for a row in %, one reporting interval for a time, one
loop for a knee sampled once per loop); under ``-m slow``
each protocol runs at 1/64, 1/16 and 1/8 against full size (a full-size replay of SNIA PTS
takes 92 s, Puget's loop with PARAMS 74 s, under nice on 2 shared cores).

Compared (published) rows, measured on 79d544e and on 6dcbca2 (only the BeHardware early
minimum changed: ``common.resolved_mbps``), each ``fb.replay(name, scale=s).compare()`` on the
protocol's default drive and parameters; drift against full size, or against 1/8 where no
full size is given:

==========================================================  =======  =======  =======  ======
row                                                          1/64     1/16     1/8      full
==========================================================  =======  =======  =======  ======
anand2009 seq2m_read fresh avg_mbps                          +0.5 %   +0.1 %   +0.1 %   249.2
anand2009 seq2m_read used avg_mbps                           +0.8 %   +0.4 %   -0.1 %   248.5
anand2009 seq2m_read used drop_pct (pp)                      -0.28    -0.28    +0.17    0.28
anandtech-trim clean avg_mbps                                +1.2 %   +0.3 %   +0.1 %   315.1
anandtech-trim torture avg_mbps (open, KNOWN_DRIFTS)         -6.7 %   -4.2 %   -4.2 %   62.63
anandtech-trim after_trim avg_mbps                           -0.5 %   -0.4 %   +0.0 %   217.7
anandtech-trim torture drop_pct (pp; open)                   +1.54    +0.88    +0.85    80.13
anandtech-trim after_trim relative_to_clean_pct (pp; open)   -1.15    -0.47    -0.06    69.08
behardware used dip_time_s (open)                            +4.3 %   0.0 %    0.0 %    47
behardware used dip_written_gb (open)                        +3.7 %   +0.0 %   -0.0 %   9.31
behardware fresh written_min/max_gb                          +1.0 %   +0.1 %   +0.1 %   36.0
behardware used early_min_mbps, before                       -16.7 %  -7.0 %   -2.1 %   151.0
behardware used early_min_mbps, after                        +1.1 %   -2.1 %   -2.1 %   151.0
puget written_per_loop_gb (vs 1/8)                           -0.3 %   +0.0 %   7.514
puget seq max_mbps / max_pct_of_advertised (vs 1/8)          0.0 %    0.0 %    193.0
puget seq avg_mbps, range_low/high_mbps (vs 1/8)             +1.2 %   +0.1 %   131.8
puget seq breakpoint_1_gb (vs 1/8)                           -0.7 %   -0.1 %   148.3
puget rnd512k breakpoint_1_gb (vs 1/8; < one loop)           +4.5 %   -0.1 %   140.9
puget rnd512k level_after_breakpoint_1_mbps (vs 1/8)         +2.1 %   +0.8 %   131.5
puget rnd4k_qd32 breakpoint_1_gb (vs 1/8)                    -0.8 %   -0.1 %   140.9
puget rnd4k_qd32 breakpoint_2_gb (vs 1/8)                    +0.9 %   -0.0 %   567.5
puget rnd4k_qd32 level_after_breakpoint_1_mbps (vs 1/8)      +2.3 %   +0.5 %   128.2
puget rnd512k breakpoint_2_gb (NOT_SCALE_INVARIANT)          none     162.8    none
xbit used relative_to_fresh_pct / loss_vs_fresh_pct          0.0      0.0      0.0      100 / 0
==========================================================  =======  =======  =======  ======

On e7861a6 (a scaled drive no longer gets ~2.4 blocks of spare the full drive lacks:
``native/src/sim/spec.rs`` ``fixed_blocks``) the rows above that moved: behardware used
dip_time_s and dip_written_gb 0.0 % at 1/64, 1/16 and 1/8 (were +4.3 / +3.7 % at 1/64);
anandtech-trim torture avg_mbps -6.2 / -2.7 / -2.5 % (seed spread, see KNOWN_DRIFTS), torture
drop_pct +1.46 / +0.58 / +0.52 pp, after_trim relative_to_clean_pct -0.59 / -0.17 / -0.06 pp,
after_trim avg_mbps +0.3 / 0.0 / 0.0 %; behardware used early_min_mbps -0.3 / -2.8 / -1.4 %.

On 8634aa3 (a scaled drive's spare counted in 4 KiB slots, ``spec/sizes.rs``; a timed run on
a scaled drive reaps scale × the commands in flight, ``sim/drive/run.rs``) SNIA PTS and Puget
against full size, the procedures' seeds (Puget's "vs 1/8" rows above were 1/8's drift from
full size too: 7.514 GB per loop at 1/8 against 7.930 at full size, -5.2 %, from CDM's timed
QD32 runs draining a full drive's commands):

==========================================================  =======  =======  =======  ======
row                                                          1/64     1/16     1/8      full
==========================================================  =======  =======  =======  ======
puget written_per_loop_gb                                    -1.3 %   -0.0 %   +0.1 %   7.930
puget seq max_mbps / max_pct_of_advertised                   0.0 %    0.0 %    0.0 %    193.0
puget seq avg_mbps, range_low/high_mbps                      +1.2 %   +0.1 %   0.0 %    131.8
puget seq breakpoint_1_gb                                    -1.4 %   -0.2 %   +0.0 %   148.2
puget rnd512k breakpoint_1_gb (< one loop)                   +3.8 %   -0.2 %   +0.0 %   140.8
puget rnd512k level_after_breakpoint_1_mbps                  +1.2 %   +0.8 %   +0.0 %   131.4
puget rnd4k_qd32 breakpoint_1_gb                             -1.4 %   -0.2 %   +0.0 %   140.8
puget rnd4k_qd32 breakpoint_2_gb (NOT_SCALE_INVARIANT)       +0.6 %   +9.1 %   -1.7 %   397.9
puget rnd4k_qd32 level_after_breakpoint_1_mbps               +1.4 %   +0.4 %   -0.0 %   130.7
puget rnd512k breakpoint_2_gb (NOT_SCALE_INVARIANT)          none     162.6    none     none
snia pts_iops avg_iops                                       -0.6 %   +1.6 %   -0.9 %   5951
snia pts_iops rounds (KNOWN_DRIFTS)                          7        8        7        7
snia pts_wsat avg_iops                                       -0.3 %   +0.2 %   -0.2 %   6930
snia pts_hir idle_5s (pp; KNOWN_DRIFTS)                      -5.35    -0.21    -0.38    71.15
snia pts_hir idle_10s (pp; KNOWN_DRIFTS)                     -2.88    -1.40    -3.78    113.89
snia pts_hir idle_15s (pp; KNOWN_DRIFTS)                     -6.08    -2.22    -4.56    117.58
snia pts_hir idle_25s (pp)                                   -0.64    -0.90    -0.51    124.92
snia pts_hir idle_50s (pp; KNOWN_DRIFTS)                     +1.39    +0.07    -0.27    124.95
==========================================================  =======  =======  =======  ======

With knees found by lines per segment (``flashback.analysis.knees``: a step or a bend, a loop
that straddled a step left out) and CDM's test file scaled to a 4 KiB sector (15.625 MiB at
1/64, was 15: 119 rotation slots for the review drive's 114), Puget against full size, the
procedure's seed; PARAMS' 600 GB and the review's 1.8 TB (``SLOW_PARAMS``, the slow sweep):

==========================================================  =======  =======  =======  ======
row (600 GB; 1.8 TB where it differs)                        1/64     1/16     1/8      full
==========================================================  =======  =======  =======  ======
puget written_per_loop_gb                                    +0.4 %   +0.3 %   +0.1 %   7.93
puget written_per_loop_gb, 1.8 TB                            +0.6 %   +0.4 %   +0.2 %   7.49
puget seq avg_mbps, range_low/high_mbps                      +1.2 %   0.0 %    0.0 %    131.8
puget seq breakpoint_1_gb                                    +0.2 %   +0.1 %   0.0 %    148.2
puget rnd512k breakpoint_1_gb (was +3.8 % at 1/64)           +0.2 %   0.0 %    0.0 %    140.8
puget rnd512k level_after_breakpoint_1_mbps                  +1.1 %   +0.4 %   0.0 %    131.4
puget rnd4k_qd32 breakpoint_1_gb (was -1.4 % at 1/64)        +0.2 %   0.0 %    0.0 %    140.8
puget rnd4k_qd32 level_after_breakpoint_1_mbps               +1.2 %   +0.4 %   -0.0 %   130.7
puget rnd4k_qd32 breakpoint_2_gb, 600 GB                     none     none     none     none
puget rnd4k_qd32 breakpoint_2_gb, 1.8 TB (NOT_SCALE_INV.)    -6.8 %   -5.4 %   +0.1 %   901.4
puget rnd512k breakpoint_2_gb, 600 GB                        none     none     none     none
puget rnd512k breakpoint_2_gb, 1.8 TB (NOT_SCALE_INV.)       862.0    none     none     none
==========================================================  =======  =======  =======  ======

Every other Puget row on 1.8 TB moves as on 600 GB (within 0.2 pp). A knee at a *step* is
sampled once per loop (the loop whose run the change falls in), so one loop stays its
resolution; the first knees now agree to 0.2 %. A knee at a *bend* is not sampled by loops
but placed by the fit on a gentle slope change, and one loop is not its resolution: see
NOT_SCALE_INVARIANT.

Rows without a published number (SNIA PTS, AnandTech consistency, the rest) are held by the
slow sweep too; their open drifts are in KNOWN_DRIFTS with the numbers.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

import flashback as fb
from flashback.replay.base import protocols, registered

NAMES = sorted(protocols()["name"].to_list())
#: Rows a scaled replay cannot hold to 3 %, with the reason (reported, not hidden).
#: Keyed by (protocol, test, condition, metric): keyed without the test, Puget's 512 KiB entry
#: also hid the 4K QD32 second breakpoint, a published row, from both sweeps.
NOT_SCALE_INVARIANT: dict[tuple[str, str, str, str], str] = {
    ("puget-cdm-loop", "cdm_rnd4k_qd32_write", "incompressible", "breakpoint_2_gb"): "a "
    "gentle bend, placed to +-5 % by one replay at any scale, unbiased in the mean: the 4 KiB "
    "QD32 level declines 131.8 -> 126.6 MB/s from ~270 to ~870 GB (where the rotating test file "
    "wraps to slot 0, loop 114) and stays; the bend where the decline ends reads, with six seeds "
    "(the procedure's own, 1-5) on the 1.8 TB procedure, 840.0 / 905.9 / 840.1 / 920.7 / 884.0 / "
    "964.6 GB at 1/64, 905.7 / 817.9 / 898.4 / 905.7 / 891.0 / 869.2 at 1/32, 853.0 / 896.9 / "
    "809.2 / 853.0 / 896.9 / 860.3 at 1/16, 902.6 / 880.7 / 888.0 / 858.8 / 873.4 / 895.3 at 1/8 "
    "and 901.4 / 879.5 / 850.4 at full size (the procedure's, 1, 2): six-seed means +1.8 / +0.5 "
    "/ -1.8 / +0.7 % against full size's three-seed 877.1, so compare(seeds=N) holds the row "
    "where one replay cannot. The slope changes by ~0.6 MB/s per 100 GB (0.05 per loop) "
    "against loop-to-loop noise of 0.45 / 0.13 / 0.03 MB/s at 1/64 / 1/16 / full (a CDM run "
    "is scale x the commands: 3,000 4 KiB writes at 1/64, 192,000 at full size). A continuous "
    "hinge (the two lines meeting at the bend) was tried and not adopted: tighter at 1/16 - full "
    "(846.6 - 879.6 GB, full 853.3 - 865.0) but -7.5 % in the six-seed mean at 1/64 (769.6 - "
    "838.2) and -3.3 % at 1/32, where the level undershoots ~0.3 MB/s after the bend (0.12 at "
    "full size; unchanged with 4x smaller erase blocks at 1/64). On PARAMS' 600 GB the decline "
    "has not ended and no scale finds a second knee",
    ("puget-cdm-loop", "cdm_rnd512k_write", "incompressible", "breakpoint_2_gb"): "a 1 % "
    "step at the fit's 1 % noise floor, present at every scale: after the knee the 512 KiB "
    "level sinks ~1.5 MB/s to the test file's wrap (~875 GB) and steps up after it (six-seed "
    "means, 850 -> 900 GB: +0.85 / +1.5 / +1.05 / +1.1 MB/s at 1/64 / 1/32 / 1/16 / 1/8, +1.1 "
    "at full size, three seeds); on the 1.8 TB procedure the fit finds it with five of six seeds at 1/64 (862.0 / 883.9 / 891.3 / 862.1 / - / "
    "891.3 GB), six of six at 1/32, three of six at 1/16, one of six at 1/8 and none of three at "
    "full size, so whether a replay reports it is the threshold's call, not the scale's. On 600 GB none at any "
    "scale (the spurious 162.6 GB at 1/16 and 1/32 was a loop that straddled the first knee)",
}


#: The two scales each protocol is held between: its ``min_held_scale`` (one home, the
#: protocol definition; below it compare() withholds within/outside) and twice it.
SCALES = {p.name: (p.min_held_scale, str(Fraction(p.min_held_scale) * 2)) for p in registered()}
#: Shorter procedures for make test's time (past every published number they check but
#: Puget's second knees, which need the decline that ends at ~890 GB).
PARAMS = {"puget-cdm-loop": {"total_written_bytes": 6e11}}
#: The slow sweep runs each review's own procedure (Puget's 1.8 TB: 107 s at full size).
SLOW_PARAMS: dict[str, dict] = {"puget-cdm-loop": {}}


def slow_params(name: str) -> dict:
    """The parameters the slow sweep replays ``name`` with."""
    return SLOW_PARAMS.get(name, PARAMS.get(name, {}))


def rows(rep: fb.Replay) -> dict[tuple, tuple[float, str]]:
    cmp = rep.compare()
    cmp = cmp.filter(
        pl.col("replayed").is_not_null()
        & pl.col("published").is_not_null()
        & (pl.col("status") != "setting")
    )
    return {
        (r["test"], r["condition"], r["metric"], r["drive"]): (r["replayed"], r["unit"])
        for r in cmp.iter_rows(named=True)
    }


def moved_too_far(a: float, b: float, unit: str, *, step_gb: float) -> bool:
    """Beyond 3 %, or beyond the measurement's resolution: 1 percentage point for a %, one
    reporting interval (1 s at the review's scale) for a time, one loop's bytes (``step_gb``)
    for a knee position sampled once per loop."""
    if unit == "%":
        return abs(a - b) > 1.0
    if unit == "s":
        return abs(a - b) > max(0.03 * abs(b), 1.0)
    if unit == "GB" and step_gb:
        return abs(a - b) > max(0.03 * abs(b), step_gb)
    return abs(a - b) > 0.03 * max(abs(b), 1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_every_compared_row_holds_between_two_scales(name):
    lo, hi = SCALES[name]
    small = rows(fb.replay(name, scale=lo, **PARAMS.get(name, {})))
    larger = rows(fb.replay(name, scale=hi, **PARAMS.get(name, {})))

    def held(key: tuple) -> bool:
        return (name, *key[:3]) not in NOT_SCALE_INVARIANT

    assert {k for k in small if held(k)} == {k for k in larger if held(k)}
    step_gb = next((v for k, (v, _) in larger.items() if k[2] == "written_per_loop_gb"), 0.0)
    bad = []
    for key, (b, unit) in larger.items():
        if not held(key):
            continue
        a = small[key][0]
        if moved_too_far(a, b, unit, step_gb=step_gb if key[2].startswith("breakpoint") else 0):
            bad.append(f"{key}: {lo} {a:.4g} vs {hi} {b:.4g} {unit}")
    assert not bad, "\n".join(bad)


def _step(rates_mbps: list[float], interval_s: float) -> pl.DataFrame:
    n = len(rates_mbps)
    return pl.DataFrame(
        {
            "interval_s": [interval_s] * n,
            "step_t_s": [interval_s * (i + 1) for i in range(n)],
            "write_mbps": rates_mbps,
            "write_bytes": [r * 1e6 * interval_s for r in rates_mbps],
        }
    )


def test_resolved_windows_average_jitter_but_keep_a_clean_drop():
    from flashback.replay.procedures.common import resolved_mbps

    # a scaled step whose intervals swing ±10 % around 150 MB/s (one GC victim per interval)
    jitter = _step([135.0, 165.0] * 40, 1 / 64)
    low = float(resolved_mbps(jitter, scale=1 / 64)["write_mbps"].min())
    assert low > 0.98 * 150.0  # the single lowest interval would say 135
    # a smooth step with a real 6 % drop keeps single intervals: the drop is the minimum
    drop = _step([252.0] * 60 + [236.0] * 20, 1 / 64)
    assert float(resolved_mbps(drop, scale=1 / 64)["write_mbps"].min()) == 236.0
    # at full size a window is one interval, however noisy (the review's own resolution)
    assert float(resolved_mbps(jitter, scale=1.0)["write_mbps"].min()) == 135.0


#: Against what each protocol's scaled replays are held in the slow sweep where full size is
#: not practical (none: every protocol's full-size replay takes at most ~1.5 min; SNIA PTS and
#: Puget were held against 1/8 until 8634aa3).
REFERENCE: dict[str, str] = {}
#: Drifts measured and NOT fixed (protocol → rows → what moved and the cause). They are not
#: exceptions for a parameter that cannot scale: each is an open defect of the replay or the
#: model, or a row a scaled drive cannot resolve, listed so the sweep fails on any new one.
#: Measured on 8634aa3 against full size, every row with a replayed value (published or not);
#: "six-seed" means ``fb.replay(seed=1..6)``; the history before it is in git (e7861a6,
#: 4bbf001):
#:
#: - Fixed by c1c7d3b and 8634aa3 and gone from this list: snia-pts pts_iops avg_iops, +3.4 /
#:   +1.5 / +0.8 % at 1/64, 1/16, 1/8 (six-seed means vs full size's 5985) -> +0.9 / +0.5 /
#:   +0.9 % (6039 / 6013 / 6038; one-sd spread 147 / 63 / 55, full 80), the procedure's seeds
#:   5915 / 6048 / 5899 vs 5951. Removed one at a time at 1/64: the 1 MiB steps
#:   (block_sizes 4k, 64k: 5597 / 5587 / 5592 vs 5617 at full size, flat, so the rest was in
#:   them); a scaled drive's spare (the user area rounded up to a block and the spare rounded
#:   on its own: 67.3 blocks for 66.6 at 1/64, steady 4 KiB WA 7.60 vs 7.71; c1c7d3b:
#:   +3.4 -> +2.6 %); the drain (fio reaps iodepth × bs at any scale: 32 MiB after a 0.94 s
#:   1 MiB step at 1/64, which ran 80 - 84 s full-size equivalent for 60; 8634aa3: a scaled
#:   drive stops issuing early so it reaps scale × that: +2.6 / +1.5 / +0.4 -> +0.9 / +0.5 /
#:   +0.9 %). pts_hir idle_25s holds too (-0.6 / -0.9 / -0.5 pp). Puget's bytes per loop,
#:   7.514 GB at 1/8 vs 7.930 at full size (-5.2 %, CDM's timed QD32 runs), is 7.940.
#: - anandtech-trim-validation torture avg_mbps: sampling, not a bias. The
#:   after-torture AS-SSD file is 1 GiB × scale, 4 erase blocks at 1/64; which victims GC
#:   finds while it is written moves the pass from seed to seed. Six-seed means 60.95 /
#:   62.36 / 62.28 vs 62.30 MB/s at 1/64, 1/32, 1/16 and full (-2.2 / +0.1 / 0.0 %), one-sd
#:   spread 3.99 / 1.47 / 2.36 / 0.57 MB/s. One replay at 1/64 cannot be held to 3 %;
#:   ``compare(seeds=N)`` gives the row its spread. drop_pct (80.89 / 80.33 / 80.29 vs 80.23,
#:   sd 1.25 pp at 1/64) holds to 1 pp with the procedure's seeds and left this list.
#: - anandtech-trim-validation after_trim relative_to_clean_pct at 1/64: six-seed mean 67.98
#:   vs 69.08 % (-1.1 pp, sd 0.47; 1/32 -0.6, 1/16 -0.2 pp). The clean pass reads 318.9 vs
#:   315.1 MB/s at every seed (+1.2 %): the 530's 512 KiB write buffer is its full size at
#:   every scale (a fixed structure), 3 % of AS-SSD's 16 MiB file at 1/64 and 0.05 % of 1
#:   GiB, and acknowledges that share ahead of the NAND. With buffer=16k at both scales the
#:   row reads 69.4 vs 69.2 % (the rates themselves then drop, 244 vs 309 MB/s clean).
#: - snia-pts pts_iops rounds: 7 or 8 at every scale with seeds 1-6 (full size 8, 7, 7, 7,
#:   7, 8); the procedure's seed takes 8 at 1/16, 7 elsewhere. One replay's count cannot be
#:   held to one round.
#: - snia-pts pts_hir relative_to_baseline_pct, six-seed means against full size's 71.32 /
#:   112.82 / 113.81 / 124.90 / 124.92 % at idle 5 / 10 / 15 / 25 / 50 s: 1/64 -4.0 / -2.6 /
#:   -2.9 / -1.2 / +1.0 pp, 1/16 -1.0 / -0.5 / +1.4 / -0.6 / +0.1, 1/8 -0.5 / -2.8 / -0.7 /
#:   -0.6 / -0.2. idle_10s and idle_15s are sampling: their one-sd seed spread is 1.6 and
#:   3.0 pp at full size itself (1.5 / 1.5 at 1/8), beyond the 1 pp a row in % is held to.
#:   idle_5s (and idle_50s, +1.0 pp) at 1/64 are a bias: a 5 s burst is 78 ms at 1/64
#:   (~470 commands, under one 512-command erase block; 0.31 s and ~3.7 blocks at 1/16); its
#:   rate is how many whole victims GC collects inside it, which a smaller drive cannot scale
#:   (the erase block is the NAND's).
#:
#: Session 16: the sweep runs each protocol from its ``min_held_scale`` (1/16 for
#: anandtech-trim-validation and snia-pts) and adds 1/32; the anandtech-trim-validation rows
#: and snia-pts idle_5s / idle_50s above drift only below 1/16 and left this list (the sweep
#: at 1/16 and 1/8 held them: ``-m slow -k every_row_holds``, 7 passed).
KNOWN_DRIFTS: dict[str, set[tuple[str, str, str]]] = {
    "snia-pts": {
        ("pts_iops", "round", "rounds"),
        ("pts_hir", "idle_10s", "relative_to_baseline_pct"),
        ("pts_hir", "idle_15s", "relative_to_baseline_pct"),
    },
}


def all_rows(rep: fb.Replay) -> dict[tuple, tuple[float, str]]:
    """Every row with a replayed value, published or not (settings left out)."""
    cmp = rep.compare().filter(pl.col("replayed").is_not_null() & (pl.col("status") != "setting"))
    return {
        (r["test"], r["condition"], r["metric"]): (r["replayed"], r["unit"])
        for r in cmp.iter_rows(named=True)
    }


#: The scales the slow sweep holds against full size: the demo's and notebooks' (1/64 - 1/16),
#: and 1/8; each protocol from its ``min_held_scale`` up (below it compare() compares nothing).
SWEEP_SCALES = ("1/64", "1/32", "1/16", "1/8")


def held_scales(name: str) -> list[str]:
    """The sweep's scales at or above ``name``'s ``min_held_scale``."""
    floor = Fraction(SCALES[name][0])
    return [s for s in SWEEP_SCALES if Fraction(s) >= floor]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_row_holds_from_one_64th_to_full_size(name):
    """Each protocol at SWEEP_SCALES from its floor against full size (or REFERENCE): every row with a
    replayed value within 3 % (or the unit's resolution, :func:`moved_too_far`), except the
    drifts listed, measured and open in KNOWN_DRIFTS. A row listed there that now holds is
    reported so the entry can go."""
    params = slow_params(name)
    ref = all_rows(fb.replay(name, scale=REFERENCE.get(name, "1"), **params))
    step_gb = next((v for k, (v, _) in ref.items() if k[2] == "written_per_loop_gb"), 0.0)
    known = KNOWN_DRIFTS.get(name, set())
    drifted: set[tuple] = set()
    bad = []
    for scale in held_scales(name):
        if scale == REFERENCE.get(name):
            continue
        got = all_rows(fb.replay(name, scale=scale, **params))
        for key, (b, unit) in ref.items():
            if (name, *key) in NOT_SCALE_INVARIANT or key not in got:
                continue
            a = got[key][0]
            gb = step_gb if key[2].startswith("breakpoint") else 0
            if moved_too_far(a, b, unit, step_gb=gb):
                drifted.add(key)
                if key not in known:
                    bad.append(f"{key}: {scale} {a:.4g} vs {b:.4g} {unit}")
    assert not bad, "\n".join(bad)
    if known - drifted:
        import warnings

        warnings.warn(
            f"{name}: listed drifts now hold, remove them: {sorted(known - drifted)}",
            stacklevel=2,
        )


def test_behardware_used_dip_holds_from_1_64_to_1_16():
    # The scaled drive's spare was ~2.4 blocks too large (native/src/sim/spec.rs
    # fixed_blocks): at 1/64 the first intervals after GC started copied 0.22-0.35 of the host
    # bytes (full size 0.52), the rate sat on the 70 % line and the dip came at 49 s / 9.66 GB
    # against 47 s / 9.31 GB at 1/16 and at full size.
    got = {}
    for scale in ("1/64", "1/16"):
        cmp = fb.replay("behardware-used-trim", scale=scale).compare()
        used = cmp.filter((pl.col("test") == "iometer_rnd_write") & (pl.col("condition") == "used"))
        got[scale] = {r["metric"]: r["replayed"] for r in used.iter_rows(named=True)}
    for metric, unit in (("dip_time_s", "s"), ("dip_written_gb", "GB")):
        a, b = got["1/64"][metric], got["1/16"][metric]
        assert not moved_too_far(a, b, unit, step_gb=0), (metric, a, b)


def test_behardware_early_minimum_holds_from_1_16_to_1_8():
    # The windows were sized by the whole step's noise, lower than the first 30 s' (its later
    # intervals are smoother): at 1/16 they read the m4's early jitter, 142.6 MB/s against
    # 148.9 at 1/8 and 151.0 at full size. Sized by the 30 s' own noise: 150.3.
    got = {}
    for scale in ("1/16", "1/8"):
        cmp = fb.replay("behardware-used-trim", scale=scale).compare()
        row = cmp.filter(
            (pl.col("test") == "iometer_seq_write")
            & (pl.col("condition") == "used")
            & (pl.col("metric") == "early_min_mbps")
        )
        got[scale] = row["replayed"][0]
    assert not moved_too_far(got["1/16"], got["1/8"], "MB/s", step_gb=0), got


#: Rows one replay cannot hold to 3 % at every scale because a seed moves them more than that
#: (sampling, not a bias), held instead in the mean over fixed seeds: the scaled replays' mean
#: against full size's. The seeds are the first ones (1..N), not picked; the full-size mean
#: has fewer for time. Resolution-bound rows (SNIA PTS HIR at 1 pp, whose seed sd is 1.6 -
#: 3.0 pp at full size) and the biases KNOWN_DRIFTS explains are not here: their means differ.
SEED_MEANS: dict[tuple[str, str, str, str], dict] = {
    # one replay +-5 % (NOT_SCALE_INVARIANT)
    ("puget-cdm-loop", "cdm_rnd4k_qd32_write", "incompressible", "breakpoint_2_gb"): {
        "scales": ("1/64", "1/16", "1/8"),
        "seeds": 6,
        "full_seeds": 3,
    },
    # one replay +-6.6 % at 1/64 (KNOWN_DRIFTS)
    ("anandtech-trim-validation", "as_ssd_seq_write", "torture", "avg_mbps"): {
        "scales": ("1/64", "1/16", "1/8"),
        "seeds": 6,
        "full_seeds": 3,
    },
}


def _seed_values(name: str, key: tuple[str, str, str], scale: str, seeds: int) -> list[float]:
    params = slow_params(name)
    return [
        all_rows(fb.replay(name, scale=scale, seed=s, **params))[key][0]
        for s in range(1, seeds + 1)
    ]


def _mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and its standard error (sample sd / sqrt n)."""
    n = len(values)
    mean = sum(values) / n
    return mean, (sum((v - mean) ** 2 for v in values) / (n - 1) / n) ** 0.5


@pytest.mark.slow
@pytest.mark.parametrize("row", sorted(SEED_MEANS), ids=lambda r: f"{r[0]}-{r[3]}")
def test_seed_noisy_rows_hold_in_the_mean_from_one_64th_to_full_size(row):
    """A row listed in SEED_MEANS: its mean over the first N seeds at each scale against full
    size's mean, held to 3 % or, where the seeds cannot resolve 3 %, to two standard errors of
    the difference (no bias the seeds can see): the scaled replays are unbiased within the
    spread ``compare(seeds=N)`` reports. Measured on e3f52c7 (746 s), seeds 1-6 against full
    size's 1-3: Puget's bend 895.0 / 859.1 / 883.1 GB at 1/64 / 1/16 / 1/8 against 862.5 (+3.8
    / -0.4 / +2.4 %; 1/64 holds by the two standard errors only: 41 GB allowed, SE 18.6 and
    8.7); AnandTech's after-torture pass 60.95 / 62.28 / 62.12 MB/s against 62.46 (-2.4 / -0.3
    / -0.5 %)."""
    name, key, spec = row[0], row[1:], SEED_MEANS[row]
    ref, ref_se = _mean_se(_seed_values(name, key, "1", spec["full_seeds"]))
    bad = []
    for scale in spec["scales"]:
        got, se = _mean_se(_seed_values(name, key, scale, spec["seeds"]))
        allowed = max(0.03 * abs(ref), 2 * (se**2 + ref_se**2) ** 0.5)
        print(f"{name} {key} {scale}: {got:.4g} (se {se:.3g}) vs full {ref:.4g} (se {ref_se:.3g})")
        if abs(got - ref) > allowed:
            bad.append(
                f"{scale} {got:.4g} vs {ref:.4g} ({(got - ref) / ref:+.1%}, allowed {allowed:.3g})"
            )
    assert not bad, "\n".join(bad)
