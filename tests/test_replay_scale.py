"""Replays hold at every scale: each protocol replayed at two small scales (1/64 and 1/32 in
``make test``; 1/8 against full size is ``make bench`` territory) gives every compared row
within 3 % (or 1 percentage point for a row in %, or one reporting interval for a time)."""

from __future__ import annotations

import polars as pl
import pytest

import flashback as fb
from flashback.replay.base import protocols

NAMES = sorted(protocols()["name"].to_list())
#: Rows a scaled replay cannot hold to 3 %, with the reason (reported, not hidden).
NOT_SCALE_INVARIANT: dict[tuple[str, str, str], str] = {
    ("puget-cdm-loop", "incompressible", "breakpoint_2_gb"): "the penalised fit finds a second "
    "change or not depending on one loop's result (512 KiB random write: 163 GB at 1/32, none "
    "at 1/64); where both find one it is held like the first",
}


#: Scales a protocol is held between, where 1/64 vs 1/32 cannot hold (the reason beside it).
SCALES = {
    # the AS-SSD file is 1 GiB × scale: 4 erase blocks of the 530 at 1/64, so whether a GC
    # pause falls inside it moves the after-torture pass 3.2 % against 1/32
    "anandtech-trim-validation": ("1/32", "1/16"),
}
#: Shorter procedures for make test's time (past every published number they check).
PARAMS = {"puget-cdm-loop": {"total_written_bytes": 6e11}}


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
    lo, hi = SCALES.get(name, ("1/64", "1/32"))
    small = rows(fb.replay(name, scale=lo, **PARAMS.get(name, {})))
    larger = rows(fb.replay(name, scale=hi, **PARAMS.get(name, {})))

    def held(key: tuple) -> bool:
        return (name, key[1], key[2]) not in NOT_SCALE_INVARIANT

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
