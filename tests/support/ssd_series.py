"""SSD-shaped per-second write runs with known truth in bytes, for the change-point and
steady-state evaluations (tests/test_changepoints_ssd.py, tests/bench/ssd_eval.py).

A run is: an optional SLC plateau, a fresh (FOB) plateau, a write cliff, a slide (the level
falls linearly in log space), then steady state. Noise is log-normal AR(1) (φ up to 0.85);
steady state adds a two-state GC oscillation (the drive alternates between a fast and a slow
state, dwelling 2–30 s on average in each); every phase has Pareto-length stalls (seconds at
5–60 % of the level) and whole seconds at zero.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl


@dataclasses.dataclass
class Run:
    frame: pl.DataFrame
    cliff_bytes: float  #: bytes written when the cliff happens
    onset_bytes: float  #: bytes written when the slide ends (steady state begins)
    total_bytes: float
    phi: float
    n: int
    levels_mbps: dict


def ar1(rng: np.random.Generator, n: int, phi: float, sd: float) -> np.ndarray:
    """Stationary AR(1) with marginal standard deviation ``sd``."""
    e = rng.standard_normal(n) * sd * np.sqrt(1 - phi**2)
    out = np.empty(n)
    out[0] = rng.standard_normal() * sd
    from scipy.signal import lfilter

    out[1:] = lfilter([1.0], [1.0, -phi], e[1:], zi=[phi * out[0]])[0]
    return out


def gc_oscillation(rng: np.random.Generator, n: int, depth: float, mean_dwell_s: float):
    """Two-state Markov switching: 1 + ``depth``/2 in the fast state, 1 − ``depth``/2 in the
    slow one (mean 1, so steady state does not start with a step)."""
    p = 1.0 / mean_dwell_s
    flips = rng.random(n) < p
    state = np.cumsum(flips) % 2
    return np.where(state == 1, 1.0 - depth / 2, 1.0 + depth / 2)


def ssd_run(
    seed: int,
    *,
    n: int | None = None,
    phi: float | None = None,
    slc: bool | None = None,
    noise_sd: float | None = None,
) -> Run:
    """One generated run (parameters drawn from ``seed`` unless given)."""
    rng = np.random.default_rng(seed)
    n = int(n if n is not None else rng.integers(10_000, 40_000))
    phi = float(phi if phi is not None else rng.uniform(0.0, 0.85))
    sd = float(noise_sd if noise_sd is not None else rng.uniform(0.03, 0.10))
    slc = bool(slc if slc is not None else rng.random() < 0.5)
    fob = rng.uniform(400, 3000)
    cliff_frac = rng.uniform(0.15, 0.35)  # of the intervals
    slide_frac = rng.uniform(0.10, 0.30)
    drop = rng.uniform(0.25, 0.6)  # level after the cliff, as a fraction of FOB
    slide_to = rng.uniform(0.45, 0.8)  # steady state, as a fraction of the post-cliff level
    i_cliff = int(cliff_frac * n)
    i_onset = int((cliff_frac + slide_frac) * n)
    lv = np.empty(n)
    lv[:i_cliff] = fob
    if slc:
        i_slc = int(rng.uniform(0.3, 0.6) * i_cliff)
        lv[:i_slc] = fob * rng.uniform(1.5, 2.5)
    post = fob * drop
    ss = post * slide_to
    k = i_onset - i_cliff
    lv[i_cliff:i_onset] = np.exp(np.linspace(np.log(post), np.log(ss), k, endpoint=False))
    lv[i_onset:] = ss
    mult = np.exp(ar1(rng, n, phi, sd) - sd**2 / 2)
    gc = np.ones(n)
    gc[i_onset:] = gc_oscillation(
        rng, n - i_onset, depth=rng.uniform(0.05, 0.2), mean_dwell_s=rng.uniform(2, 30)
    )
    y = lv * mult * gc
    # Pareto stalls: starts at rate ~0.3 %, lengths Pareto(α = 1.5), depth 5–60 % of the level
    starts = np.flatnonzero(rng.random(n) < 0.003)
    for s in starts:
        length = min(int(rng.pareto(1.5)) + 1, 30)
        y[s : s + length] *= rng.uniform(0.05, 0.6)
    y[rng.random(n) < 0.002] = 0.0  # whole seconds at zero
    wb = np.round(y * 1e6)
    hb = np.cumsum(wb)
    frame = pl.DataFrame(
        {
            "t_s": np.arange(1, n + 1, dtype=float),
            "interval_s": np.ones(n),
            "write_mbps": y,
            "write_bytes": wb.astype(np.uint64),
            "host_written_bytes": hb.astype(np.uint64),
        }
    )
    # truth in bytes: written before the first interval of the new phase
    before = np.r_[0.0, hb]
    return Run(
        frame=frame,
        cliff_bytes=float(before[i_cliff]),
        onset_bytes=float(before[i_onset]),
        total_bytes=float(hb[-1]),
        phi=phi,
        n=n,
        levels_mbps={"fob": fob, "post": post, "steady": ss},
    )
