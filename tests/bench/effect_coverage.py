"""Coverage of the effect CIs (fb.analysis.effects.ratio_ci) on SSD-like autocorrelated series.

    .venv/bin/python tests/bench/effect_coverage.py [--trials 400]

Two designs, each a ratio of two independent series of the same noise law, so the true ratio
is exactly 450/500 = 0.9:
- ``ssd``: n = 1200, AR(1) φ = 0.9 (sd 8 %), a two-state GC oscillation (±6 %, mean dwell 20 s),
  Pareto stalls (0.5 % of seconds start one; depth 5–60 %);
- ``ar97``: n = 300, AR(1) φ = 0.97 (sd 8 %).
Prints the share of nominal 95 % intervals that contain 0.9, and the median width.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.ssd_series import ar1, gc_oscillation

from flashback.analysis.effects import ratio_ci


def ssd_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    z = (1 + ar1(rng, n, 0.9, 0.08)) * gc_oscillation(rng, n, depth=0.12, mean_dwell_s=20)
    for s in np.flatnonzero(rng.random(n) < 0.005):
        z[s : s + min(int(rng.pareto(1.5)) + 1, 20)] *= rng.uniform(0.05, 0.6)
    return z


def ar97_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    return 1 + ar1(rng, n, 0.97, 0.08)


DESIGNS = {"ssd": (ssd_noise, 1200), "ar97": (ar97_noise, 300)}


def coverage(design: str, trials: int, seed: int = 0, **kw) -> tuple[float, float, float]:
    """(coverage, median width, share of trials with a small-blocks warning)."""
    import warnings

    noise, n = DESIGNS[design]
    rng = np.random.default_rng(seed)
    hits, widths, warned = 0, [], 0
    for k in range(trials):
        a = 500 * noise(rng, n)
        b = 450 * noise(rng, n)
        # the true ratio of the means is 0.9, whatever the noise law's mean is
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _, lo, hi, _, _ = ratio_ci(a, b, seed=k, **kw)
        warned += bool(w)
        hits += lo <= 0.9 <= hi
        widths.append(hi - lo)
    return hits / trials, float(np.median(widths)), warned / trials


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=999)
    a = ap.parse_args()
    for d in DESIGNS:
        c, w, warned = coverage(d, a.trials, n_resamples=a.resamples)
        print(
            f"{d}: coverage {c:.3f} over {a.trials} trials, median width {w:.4f}, "
            f"small-blocks warning in {warned:.0%}"
        )


if __name__ == "__main__":
    main()
