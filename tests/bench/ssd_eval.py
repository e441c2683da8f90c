"""Evaluation: fb.changepoints (and fb.steady_state_onset) on generated SSD-shaped runs with
known truth in bytes (tests/support/ssd_series.py).

    .venv/bin/python tests/bench/ssd_eval.py [--runs 40] [--n-min 10000 --n-max 40000] [--big]

Prints, over the runs: the share whose cliff has a breakpoint within 0.5 % of the bytes
written, the median number of breakpoints inside the steady state (false ones), and the median
onset error (% of bytes written) of the last breakpoint and of ``steady_state_onset``.
``--big`` adds runs of 100k–400k intervals.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.ssd_series import ssd_run

import flashback as fb


def score(run, seg, onset=None) -> dict:
    tot = run.total_bytes
    b = np.asarray(seg.breakpoints, dtype=float)
    cliff_err = float(np.min(np.abs(b - run.cliff_bytes)) / tot) if b.size else 1.0
    false_ss = int(np.sum(b > run.onset_bytes + 0.005 * tot))
    last = float(b.max()) if b.size else 0.0
    out = {
        "cliff_err": cliff_err,
        "false_ss": false_ss,
        "last_err": abs(last - run.onset_bytes) / tot,
        "n_bkps": int(b.size),
    }
    if onset is not None:
        # not levelled off: counted as an error of the whole run
        out["onset_err"] = abs(onset.bytes - run.onset_bytes) / tot if onset.reached else 1.0
        out["onset_covered"] = bool(
            onset.reached and onset.lo_bytes <= run.onset_bytes <= onset.hi_bytes
        )
        out["ci_width"] = (onset.hi_bytes - onset.lo_bytes) / tot if onset.reached else 1.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--n-min", type=int, default=10_000)
    ap.add_argument("--n-max", type=int, default=40_000)
    ap.add_argument("--big", action="store_true", help="100k-400k intervals")
    ap.add_argument("--no-onset", action="store_true")
    ap.add_argument("--seed", type=int, default=1000)
    a = ap.parse_args()
    lo, hi = (100_000, 400_000) if a.big else (a.n_min, a.n_max)
    rows = []
    t0 = time.perf_counter()
    for i in range(a.runs):
        rng = np.random.default_rng(a.seed + i)
        run = ssd_run(a.seed + i, n=int(rng.integers(lo, hi + 1)))
        seg = fb.changepoints(run.frame)
        onset = None if a.no_onset else fb.steady_state_onset(run.frame)
        r = score(run, seg, onset)
        r["phi"] = run.phi
        rows.append(r)
        print(
            f"run {i:3d} n={run.n:6d} phi={run.phi:.2f} bkps={r['n_bkps']:3d} "
            f"cliff_err={100 * r['cliff_err']:.3f}% false_ss={r['false_ss']} "
            f"last_err={100 * r['last_err']:.1f}%"
            + (
                f" onset_err={100 * r['onset_err']:.1f}% covered={r['onset_covered']}"
                if onset is not None
                else ""
            ),
            flush=True,
        )
    el = time.perf_counter() - t0
    ce = np.array([r["cliff_err"] for r in rows])
    fs = np.array([r["false_ss"] for r in rows])
    le = np.array([r["last_err"] for r in rows])
    print(f"\n{a.runs} runs, n in [{lo}, {hi}], {el:.1f} s")
    print(f"cliff within 0.5 % of bytes: {np.mean(ce <= 0.005):.1%}")
    print(f"steady-state false breakpoints: median {np.median(fs):g}, max {fs.max()}")
    print(f"last breakpoint as onset: median error {100 * np.median(le):.1f} % of bytes")
    if not a.no_onset:
        oe = np.array([r["onset_err"] for r in rows])
        cov = np.array([r["onset_covered"] for r in rows])
        wid = np.array([r["ci_width"] for r in rows])
        print(
            f"steady_state_onset: median error {100 * np.median(oe):.1f} % of bytes, "
            f"CI covers the truth in {cov.mean():.1%} (median width {100 * np.median(wid):.2f}"
            " % of bytes)"
        )


if __name__ == "__main__":
    main()
