"""Knees of a per-loop result curve (MB/s against GB written): where a piecewise-linear
least-squares fit changes, by a step in level or a bend in slope. The one rule every knee a
replay reports is found by (Puget's checks and figure alike).

Why lines, not levels: a review's knee is either a step (a cache or the spare runs out, the
rate drops within a loop) or a bend (a slow drift that levels off: Puget's "things started to
level off and become consistent"). A piecewise-constant fit represents only steps; on a bend
it cuts the ramp where the two halves' means balance, which the ramp's extent and the noise
decide, not the curve's shape. Puget's replayed 4 KiB QD32 write (full size) declines from
131.8 MB/s at ≈ 270 GB to 126.6 at ≈ 870 GB and stays there; the constant fit put its
"second change" at 397.9 GB on a 600 GB replay and at 602.7 GB on the 1.8 TB one. Lines per
segment (each its own level and slope, so a step is a jump between two lines) place the bend
where the decline ends, 901.4 GB on the 1.8 TB replay (879.5 with seed 1) and none on the
600 GB one, whose decline has not ended. The same knees as unpenalised-count PELT with the
linear cost (``_native.pelt_linear_search``) at this penalty, on every Puget series tried.

What a bend's position cannot give: a gentle bend (a slope change of ≈ 0.6 MB/s per 100 GB)
is placed to ± 5 % by one replay at any scale (six seeds: 858.8 - 902.6 GB at 1/8, 840.0 -
964.6 at 1/64), where a step is placed to a loop; the seeds' mean holds to 2 % at every scale
(tests/test_replay_scale.py, NOT_SCALE_INVARIANT). Two lines forced to meet at the bend (a
continuous hinge) place it tighter on a large drive but move it at small scales, where the
level undershoots after the bend: not used.

A loop's result is a time average over one timed run: the loop during whose run the drive
changed regime reads between the two (Puget's 512 KiB write at 1/16: 193.0, 162.2, 132.4
MB/s). It is a sample of neither segment, so a change may leave out that one loop when its
result lies between the two lines there; the change is then placed at that loop.
"""

from __future__ import annotations

import itertools

import numpy as np

from flashback.analysis.noise import sigma_mad_diff
from flashback.analysis.segmentation import LINEAR_PENALTY_FACTOR

#: the review's knees: at most two (Puget names two points)
MAX_KNEES = 2
#: loops per segment: a line needs three points to have a residual
MIN_LOOPS = 3


class _Lines:
    """Least-squares lines of ``y`` on ``x`` over any run of indices ``[a, b)``, from
    cumulative sums (O(1) per segment)."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        z = np.zeros(1)
        self.s0 = np.arange(len(x) + 1, dtype=float)
        self.sx = np.concatenate([z, np.cumsum(x)])
        self.sy = np.concatenate([z, np.cumsum(y)])
        self.sxx = np.concatenate([z, np.cumsum(x * x)])
        self.sxy = np.concatenate([z, np.cumsum(x * y)])
        self.syy = np.concatenate([z, np.cumsum(y * y)])

    def fit(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(SSE, intercept, slope) of the line over ``[a, b)`` (arrays broadcast)."""
        n = self.s0[b] - self.s0[a]
        sx, sy = self.sx[b] - self.sx[a], self.sy[b] - self.sy[a]
        cxx = self.sxx[b] - self.sxx[a] - sx * sx / n
        cxy = self.sxy[b] - self.sxy[a] - sx * sy / n
        cyy = self.syy[b] - self.syy[a] - sy * sy / n
        ok = cxx > 1e-12
        slope = np.where(ok, cxy / np.where(ok, cxx, 1.0), 0.0)
        sse = np.maximum(cyy - slope * cxy, 0.0)
        return sse, (sy - slope * sx) / n, slope


def noise_sigma(y: np.ndarray, *, noise_floor: float = 0.01) -> float:
    """Loop-to-loop noise (y's unit): a robust estimate from first differences (a slope
    leaves them alone), floored at ``noise_floor`` × the median level (a deterministic
    simulated series has none: changes under ~1 % of the level are not knees)."""
    return max(sigma_mad_diff(y), noise_floor * float(np.median(np.abs(y))), 1e-12)


def _fit(
    x: np.ndarray, y: np.ndarray, *, max_knees: int, noise_floor: float
) -> list[tuple[int, int]]:
    """The knees of :func:`knees` (the search it describes) as (index of the first loop
    after the knee, 1 when that loop is left out as straddling the change, else 0)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, m = len(y), MIN_LOOPS
    if n < 2 * m:
        return []
    xs = (x - x[0]) / ((x[-1] - x[0]) or 1.0)  # the fits are invariant to it; GB² would not be
    yc = y - float(np.median(y))
    lines = _Lines(xs, yc)
    sigma = noise_sigma(y, noise_floor=noise_floor)
    penalty = LINEAR_PENALTY_FACTOR * sigma**2 * np.log(n)
    # leaving a loop out frees its value: one parameter more, at the same BIC rate
    gap_cost = sigma**2 * np.log(n)

    def sse(a: int | np.ndarray, b: int | np.ndarray) -> np.ndarray:
        return lines.fit(*np.broadcast_arrays(a, b))[0]

    def mixed(a: int | np.ndarray, k: int | np.ndarray, c: int | np.ndarray) -> np.ndarray:
        """Whether loop k lies between the line over [a, k) and the one over [k + 1, c)."""
        a, k, c = np.broadcast_arrays(a, k, c)
        _, ia, sa = lines.fit(a, k)
        _, ib, sb = lines.fit(k + 1, c)
        return (yc[k] - ia - sa * xs[k]) * (yc[k] - ib - sb * xs[k]) <= 0

    best: tuple[float, list[tuple[int, int]]] = (float(sse(0, n)), [])

    def keep(cost: np.ndarray, at: list[tuple[int, int]], ks: np.ndarray, gap: int) -> None:
        nonlocal best
        if ks.size and float(cost.min()) < best[0]:
            best = (float(cost.min()), [*at, (int(ks[np.argmin(cost)]), gap)])

    # one knee at k: [0, k) | [k, n), or [0, k) | k | [k + 1, n) with loop k mixed
    for gap in (0, 1):
        k = np.arange(m, n - m + 1 - gap)
        cost = sse(0, k) + sse(k + gap, n) + penalty + gap * gap_cost
        keep(np.where(mixed(0, k, n), cost, np.inf) if gap else cost, [], k, gap)
    for i in range(m, n - 2 * m + 1) if max_knees >= 2 else ():
        left = float(sse(0, i))
        for gi in (0, 1):
            for gj in (0, 1):
                j = np.arange(i + gi + m, n - m + 1 - gj)
                if not j.size:
                    continue
                cost = left + sse(i + gi, j) + sse(j + gj, n) + 2 * penalty + (gi + gj) * gap_cost
                if gi:
                    cost = np.where(mixed(0, i, j), cost, np.inf)
                if gj:
                    cost = np.where(mixed(i + gi, j, n), cost, np.inf)
                keep(cost, [(i, gi)], j, gj)
    return best[1]


def knees(
    x: np.ndarray, y: np.ndarray, *, max_knees: int = MAX_KNEES, noise_floor: float = 0.01
) -> list[float]:
    """Where a piecewise-linear least-squares fit of ``y(x)`` changes (≤ ``max_knees``), in
    ``x``'s unit (GB written): the ``x`` of the first loop of each new segment.

    The number of knees minimises SSE + knees × LINEAR_PENALTY_FACTOR · σ² · ln n (a knee
    frees a location, a level and a slope; σ from :func:`noise_sigma`); every segment has
    at least :data:`MIN_LOOPS` loops. A knee may leave out the one loop where it falls when
    that loop's result lies between the two lines (a run that straddled the change; see the
    module docstring), at one parameter's cost (σ² · ln n). Exhaustive search; n is a few
    hundred loops at most. Empty: one line.
    """
    x = np.asarray(x, dtype=float)
    return [float(x[i]) for i, _ in _fit(x, y, max_knees=max_knees, noise_floor=noise_floor)]


def lines(
    x: np.ndarray, y: np.ndarray, *, max_knees: int = MAX_KNEES, noise_floor: float = 0.01
) -> list[dict[str, float]]:
    """The fit :func:`knees` chose, segment by segment: ``x_start`` (the knee, or the first
    loop), ``x_end`` (the next knee, or the last loop), ``y_start``/``y_end`` (the segment's
    own least-squares line there, y's unit), ``loops`` (the loops it was fitted on: a loop
    left out as straddling a change belongs to neither line). Drawing these draws what the
    knees were found with: a decline as a decline, a step as a jump between two lines.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    fit = _fit(x, y, max_knees=max_knees, noise_floor=noise_floor)
    bounds = [(0, 0), *fit, (len(y), 0)]
    out = []
    for (a, gap), (b, _) in itertools.pairwise(bounds):
        xs, ys = x[a + gap : b], y[a + gap : b]
        slope, icept = np.polyfit(xs, ys, 1) if len(xs) >= 2 else (0.0, float(ys.mean()))
        x0, x1 = float(x[a]), float(x[b] if b < len(x) else x[-1])
        out.append(
            {
                "x_start": x0,
                "x_end": x1,
                "y_start": float(icept + slope * x0),
                "y_end": float(icept + slope * x1),
                "loops": float(len(xs)),
            }
        )
    return out
