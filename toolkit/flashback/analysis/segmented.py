"""Plateau → ramp → plateau segmented regression in the bytes-written domain, with
moving-block bootstrap CIs: "transition 40 [36, 44] GB; levels off at 380 GB ≈ 3.2 fills"."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from flashback.analysis import blocks, frames


@dataclasses.dataclass(kw_only=True)
class SegmentedFit:
    """``level_before`` until ``x1``, a straight ramp to ``level_after`` at ``x2``, then flat.

    x values are in the units of the x column (bytes for ``host_written_bytes``); every
    estimate has a ``(lo, hi)`` bootstrap interval in ``ci``.
    """

    x: str
    y: str
    x1: float
    x2: float
    level_before: float
    level_after: float
    ci: dict[str, tuple[float, float]]
    capacity_bytes: float | None

    def describe(self) -> str:
        """One line: the fitted plateau, ramp and second plateau with their intervals."""

        def fmt(v: float) -> str:
            return f"{v / 1e9:.3g}" if self.x.endswith("_bytes") else f"{v:.4g}"

        unit = "GB" if self.x.endswith("_bytes") else self.x
        lo1, hi1 = self.ci["x1"]
        lo2, hi2 = self.ci["x2"]
        s = (
            f"transition {fmt(self.x1)} [{fmt(lo1)}, {fmt(hi1)}] {unit}; levels off at "
            f"{fmt(self.x2)} [{fmt(lo2)}, {fmt(hi2)}] {unit}"
        )
        if self.capacity_bytes and self.x.endswith("_bytes"):
            s += f" ≈ {self.x2 / self.capacity_bytes:.2g} drive-fills"
        return s + f"; {self.y} {self.level_before:.4g} → {self.level_after:.4g}"


def _fit(
    x: np.ndarray, y: np.ndarray, cand: np.ndarray
) -> tuple[float, float, float, float, float]:
    best = (np.inf, 0.0, 0.0, 0.0, 0.0)
    yc = y - y.mean()
    syy = float(yc @ yc)
    for i in range(cand.size - 1):
        c1 = cand[i]
        c2 = cand[i + 1 :]
        u = np.clip((x[None, :] - c1) / (c2[:, None] - c1), 0.0, 1.0)
        uc = u - u.mean(axis=1, keepdims=True)
        suu = (uc * uc).sum(axis=1)
        suy = uc @ yc
        ok = suu > 0
        sse = np.where(ok, syy - suy**2 / np.where(ok, suu, 1), np.inf)
        j = int(np.argmin(sse))
        if sse[j] < best[0]:
            slope = suy[j] / suu[j]
            a = y.mean() - slope * u[j].mean()
            best = (float(sse[j]), float(c1), float(c2[j]), float(a), float(a + slope))
    return best


def _fit_fine(x: np.ndarray, y: np.ndarray, grid: int) -> tuple[float, float, float, float]:
    cand = np.quantile(x, np.linspace(0, 1, grid))
    _, c1, c2, a, b = _fit(x, y, cand)
    step = (x.max() - x.min()) / grid
    for _ in range(2):
        fine = np.unique(
            np.concatenate(
                [np.linspace(c1 - step, c1 + step, 11), np.linspace(c2 - step, c2 + step, 11)]
            )
        )
        fine = fine[(fine >= x.min()) & (fine <= x.max())]
        _, c1, c2, a, b = _fit(x, y, np.sort(fine))
        step /= 5
    return c1, c2, a, b


def segmented_fit(
    data: Any,
    *,
    x: str = "host_written_bytes",
    y: str = "write_mbps",
    n_boot: int = 200,
    confidence: float = 0.95,
    max_points: int = 300,
    grid: int = 40,
    capacity_bytes: float | None = None,
    seed: int | None = 0,
) -> SegmentedFit:
    """Deprecated: call :func:`flashback.steady_state_onset` instead (a piecewise-linear
    segmentation whose "levels off at" interval covers the truth at its nominal rate).

    Fits plateau → ramp → plateau to ``y`` along ``x`` (data are first averaged into at most
    ``max_points`` bins) and bootstraps the residuals in blocks for the CIs. That shape cannot
    express a cliff followed by a slide (the usual SSD write curve): on such runs its 95 %
    intervals contained the true cliff in 0 of 40 runs. Emits a ``FutureWarning``; it will be
    removed in the next release.

    Raises:
        AnalysisError: bad input (see :func:`flashback.changepoints`) or fewer than 8 points.
    """
    import warnings

    warnings.warn(
        "segmented_fit is deprecated and will be removed in the next release: its "
        "plateau→ramp→plateau shape cannot express a cliff followed by a slide; call "
        "fb.steady_state_onset(data, x=..., y=...) for where the series levels off, with an "
        "interval that covers",
        FutureWarning,
        stacklevel=2,
    )
    df, meta = frames.as_frame(data)
    xs = frames.column(df, x, role="x")
    frames.check_x(xs, x)
    ys = frames.column(df, y, role="y")
    frames.need_rows(ys.size, 8, "a segmented fit")
    k = min(max_points, ys.size)
    edges = np.linspace(0, ys.size, k + 1).round().astype(int)
    bx = np.add.reduceat(xs, edges[:-1]) / np.diff(edges)
    by = np.add.reduceat(ys, edges[:-1]) / np.diff(edges)
    c1, c2, a, b = _fit_fine(bx, by, grid)
    u = np.clip((bx - c1) / (c2 - c1), 0, 1) if c2 > c1 else (bx >= c1).astype(float)
    fitted = a + (b - a) * u
    resid = by - fitted
    L = blocks.block_length(resid, min_blocks=10)
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        starts = rng.integers(0, max(1, resid.size - L + 1), size=int(np.ceil(resid.size / L)))
        r = np.concatenate([resid[s : s + L] for s in starts])[: resid.size]
        boots.append(_fit_fine(bx, fitted + r, max(10, grid // 2)))
    bt = np.asarray(boots)
    q = [(1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100]
    ci = {
        name: (float(lo_hi[0]), float(lo_hi[1]))
        for i, name in enumerate(("x1", "x2", "level_before", "level_after"))
        for lo_hi in [np.percentile(bt[:, i], q)]
    }
    return SegmentedFit(
        x=x,
        y=y,
        x1=c1,
        x2=c2,
        level_before=a,
        level_after=b,
        ci=ci,
        capacity_bytes=frames.capacity_bytes(meta, capacity_bytes),
    )
