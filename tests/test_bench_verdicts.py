"""The QD1 and ``t/io_uring`` bench rows' verdicts (``tests/bench/engine_ring.py``) on made-up
rotations: a verdict stands only where the anchor against itself (the control) shows the
rotation can tell, so a regime whose runs swing by orders of magnitude, or a row of too few
pairs, cannot hand flashback a "met" (issue 29)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))

import engine_ring


def runs_of(iops: list[float], p50_us: list[float]) -> list[dict]:
    return [{"ios": i, "duration_s": 1.0, "p50_us": p} for i, p in zip(iops, p50_us, strict=True)]


def rotation(fb_x: float, fb_p50_x: float, control_swing: list[float]) -> dict[str, list[dict]]:
    """16 pairs: fio at 30k IOPS and 10 µs (±1 %), flashback at ``fb_x`` × fio's IOPS and
    ``fb_p50_x`` × its p50, fio again at fio × ``control_swing`` (cycled) in both."""
    base = [30_000 * (1 + 0.01 * ((k % 5) - 2)) for k in range(16)]
    lat = [10.0 * (1 + 0.01 * ((k % 3) - 1)) for k in range(16)]
    swing = [control_swing[k % len(control_swing)] for k in range(16)]
    return {
        "fio": runs_of(base, lat),
        "fb": runs_of([b * fb_x for b in base], [x * fb_p50_x for x in lat]),
        "fio_again": runs_of(
            [b * s for b, s in zip(base, swing, strict=True)],
            [x / s for x, s in zip(lat, swing, strict=True)],
        ),
    }


def test_a_tight_control_lets_the_verdicts_stand():
    row: dict = {}
    text = engine_ring.verdicts(row, rotation(1.10, 1.5, [0.99, 1.0, 1.01]), "fb", "fb")
    assert row["fb_iops_verdict"].endswith(" met"), text
    assert row["fb_p50_verdict"].endswith(" missed"), text


def test_a_control_that_swings_leaves_no_verdict():
    row: dict = {}
    # fio against itself from 0.02× to 78×, as in the loaded regime on this VM (session 18)
    text = engine_ring.verdicts(row, rotation(2.5, 0.9, [0.02, 1.0, 78.0, 0.5, 3.0]), "fb", "fb")
    for key in ("fb_iops_verdict", "fb_p50_verdict"):
        assert row[key].endswith("no verdict (the control's is not met)"), text
        assert " met" not in row[key].replace("not met", ""), text


def ratios(centre: float, n: int = 16, spread: float = 0.01) -> list[float]:
    """``n`` pair ratios around ``centre`` (±``spread``, cycled)."""
    return [centre * (1 + spread * ((k % 5) - 2)) for k in range(n)]


def test_a_ring_row_with_a_control_holding_1_gets_its_verdict():
    assert engine_ring.ring_verdict(ratios(0.95), ratios(1.0)).endswith(" met")
    assert engine_ring.ring_verdict(ratios(1.05), ratios(1.0)).endswith(" missed")
    assert engine_ring.ring_verdict(ratios(1.0, spread=0.05), ratios(1.0)).endswith(" unresolved")


def test_a_ring_row_of_two_pairs_gets_no_verdict():
    # 2 pairs of 1 s gave flashback "met" (0.85-0.98) beside t/io_uring against itself 0.83-1.01
    text = engine_ring.ring_verdict([0.85, 0.98], [0.83, 1.01])
    assert "no verdict (2 pairs: 8 at least)" in text, text


def test_a_ring_row_whose_control_excludes_1_gets_no_verdict():
    # the rotation told t/io_uring from itself (0.90-0.99): flashback's 0.92-0.99 says nothing
    text = engine_ring.ring_verdict(ratios(0.95), ratios(0.94))
    assert "no verdict (the control's interval" in text, text
    assert not text.endswith(" met"), text
