"""Benchmark: native exact PELT vs ruptures' Pelt (l2, jump 1).

    .venv/bin/python tests/bench/pelt.py [--no-ruptures]

Prints native and ruptures times at 20k points (and checks they agree), native at 200k, and
the worst case (a series without change) searched at every index and in two passes.
The signal is SSD-like: levels that change every ~500–3000 s, 4 % noise, 2 % stalls.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from flashback import _native
from flashback.analysis.noise import sigma_mad_diff
from flashback.analysis.pelt import default_jump, search


def signal(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.empty(n)
    i = 0
    while i < n:
        k = int(rng.integers(500, 3000))
        y[i : i + k] = rng.uniform(100, 600)
        i += k
    y *= 1 + 0.04 * rng.standard_normal(n)
    hit = rng.random(n) < 0.02
    y[hit] *= rng.uniform(0.05, 0.6, hit.sum())
    return y


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-ruptures", action="store_true")
    ap.add_argument(
        "--ruptures-n", type=int, default=20_000, help="series length ruptures is timed on"
    )
    args = ap.parse_args(argv)
    for n in sorted({args.ruptures_n, 200_000}):
        x = signal(n)
        pen = 3 * sigma_mad_diff(x) ** 2 * math.log(n)
        t = time.perf_counter()
        b = _native.pelt_search(x, pen, 5)
        tn = time.perf_counter() - t
        line = f"n={n:>7}: native {tn:8.3f} s ({len(b) - 1} changes)"
        if n == args.ruptures_n and not args.no_ruptures:
            import ruptures as rpt

            t = time.perf_counter()
            r = rpt.Pelt(model="l2", min_size=5, jump=1).fit(x).predict(pen=pen)
            tr = time.perf_counter() - t
            line += f"; ruptures {tr:8.3f} s; speed-up {tr / tn:,.0f}x; same breakpoints: {r == b}"
        print(line, flush=True)
    # worst case for PELT: no change at all (nothing is pruned, O(n²)); the analysis searches
    # long series in two passes (a grid, then every index near what the grid found)
    for n in (50_000, 400_000):
        x = np.random.default_rng(1).standard_normal(n)
        pen, m = 3 * math.log(x.size), 60
        line = f"n={n:>7} without any change (PELT's worst case): "
        if n <= 50_000:
            t = time.perf_counter()
            _native.pelt_search(x, pen, m)
            line += f"every index {time.perf_counter() - t:.3f} s, "
        jump = default_jump(n, m)
        t = time.perf_counter()
        search(x, pen=pen, min_size=m, cost="l2", jump=jump)
        print(line + f"two passes (grid {jump}) {time.perf_counter() - t:.3f} s", flush=True)


if __name__ == "__main__":
    main()
