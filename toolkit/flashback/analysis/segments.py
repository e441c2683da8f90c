"""``Segments``: the result of :func:`flashback.changepoints`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from flashback.errors import AnalysisError


@dataclasses.dataclass(kw_only=True)
class Segments:
    """Piecewise-constant (or piecewise-linear) segmentation of one series (or of each group with ``by=``).

    Attributes:
        breakpoints: x values where a new segment starts (bytes written, seconds...).
        x, y: the column names segmented.
        penalty: the penalty used (in units of the searched signal, squared for L2); by
            default 3 · ln n · ``long_run_sigma``² (4 · ln n · ``long_run_sigma``² when
            ``model`` is ``linear``; L2 and Huber costs).
        sigma: robust noise scale σ̂ of the searched signal (1.4826 · MAD of its residual
            around a running median; around a running mean where the signal rises or falls
            through most windows: :func:`flashback.analysis.noise.residual_scale`).
        rho: lag-1 autocorrelation of that residual.
        long_run_sigma: √ of the residual's long-run variance: the spread of its block means
            (:func:`flashback.analysis.noise.long_run_variance`), floored at the AR(1) value
            from a small-sample-corrected ρ (:func:`~flashback.analysis.noise.ar1_long_run_variance`);
            the noise scale the default penalty uses (units of the searched signal): around
            the levels, or around the lines when ``model`` is ``linear``.
        min_change_pct: breakpoints between levels closer than this (% of the larger) were
            removed.
        cost: the cost actually used (``l2``, ``huber`` = L2 on a Huber-clipped signal,
            ``normal``, or a ruptures model).
        heavy_tailed: whether the series was detected as heavy-tailed (stalls).
        model: ``step`` (a level per segment) or ``linear`` (a line per segment: ``level`` is
            its mean, ``slope`` its slope); with ``by=``, the models used, comma-joined.
        intervals: per breakpoint, ``(lo, hi)`` x values of its ~95 % uncertainty interval.
        slope_unit: unit of the ``slope`` column (y per GB written, or y per second).
        jump: grid step of the first search pass (1: every index; a long series is searched
            on a grid first, then at every index near what that found).
    """

    breakpoints: list[float]
    x: str
    y: str
    penalty: float
    sigma: float
    cost: str
    method: str
    min_size: int
    heavy_tailed: bool
    intervals: list[tuple[float, float]]
    slope_unit: str
    frame: pl.DataFrame
    _path: dict[Any, Callable[..., pl.DataFrame]] = dataclasses.field(
        default_factory=dict, repr=False
    )
    jump: int = 1
    rho: float = 0.0
    long_run_sigma: float = float("nan")
    min_change_pct: float = 0.0
    model: str = "step"

    @property
    def n_segments(self) -> int:
        return self.frame.height

    def to_frame(self) -> pl.DataFrame:
        """One row per segment: ``x_start, x_end, t_start_s, t_end_s, gb_start, gb_end,
        fills_start, fills_end, level, level_lo, level_hi, slope, n`` (+ ``group`` with by=).
        """
        return self.frame

    def breakpoint_frame(self) -> pl.DataFrame:
        """One row per breakpoint: ``x``, ``x_lo``, ``x_hi`` (uncertainty interval)."""
        return pl.DataFrame(
            {
                "x": [float(b) for b in self.breakpoints],
                "x_lo": [float(i[0]) for i in self.intervals],
                "x_hi": [float(i[1]) for i in self.intervals],
            },
            schema={"x": pl.Float64, "x_lo": pl.Float64, "x_hi": pl.Float64},
        )

    def penalty_path(
        self, pen_min: float | None = None, pen_max: float | None = None, *, group: Any = None
    ) -> pl.DataFrame:
        """CROPS: every optimal segmentation for penalties between ``pen_min`` (default
        penalty / 10) and ``pen_max`` (default penalty × 10): ``penalty, n_changes, cost,
        breakpoints`` (x values; before ``min_change_pct`` merging). ``cost`` is the
        unpenalised cost the search minimised (L2, or the normal cost with ``cost="normal"``).
        A segmentation that holds over a wide penalty range is a stable one.

        Raises:
            AnalysisError: ``pen_min`` not below ``pen_max`` or negative, or an unknown
                ``group``.
        """
        key = group if group is not None else next(iter(self._path), None)
        if key not in self._path:
            raise AnalysisError(
                f"penalty_path: no group {group!r}; the groups are {list(self._path)}"
            )
        lo = self.penalty / 10 if pen_min is None else pen_min
        hi = self.penalty * 10 if pen_max is None else pen_max
        return self._path[key](lo, hi)

    def explain(
        self,
        cap: Any,
        *,
        slc_cache_bytes: float | None = None,
        capacity_bytes: float | None = None,
        temp_limit_c: float | None = None,
    ) -> pl.DataFrame:
        """What coincides with each breakpoint in ``cap`` (the capture segmented): see
        :func:`flashback.analysis.explain.explain` (sizes in bytes, temperature in °C).

        Raises:
            AnalysisError: segments with ``by=`` groups, or ``x`` not in ``cap``.
        """
        from flashback.analysis.explain import explain

        return explain(
            cap,
            self,
            slc_cache_bytes=slc_cache_bytes,
            capacity_bytes=capacity_bytes,
            temp_limit_c=temp_limit_c,
        )

    def describe(self) -> str:
        """Plain-text summary, one line per segment."""
        lines = [
            f"{self.n_segments} segment(s) of {self.y} over {self.x}; cost={self.cost}"
            f"{' (heavy-tailed)' if self.heavy_tailed else ''}, penalty={self.penalty:.4g}, "
            f"sigma={self.sigma:.4g}"
            + (f", model={self.model} (a line per segment)" if self.model != "step" else "")
        ]
        f = self.frame
        for r in f.iter_rows(named=True):
            where = _where(r)
            g = f"[{r['group']}] " if "group" in r else ""
            lines.append(
                f"  {g}{where}: level {r['level']:.4g} [{r['level_lo']:.4g}, {r['level_hi']:.4g}]"
                f", slope {r['slope']:.3g} {self.slope_unit}, n={r['n']}"
            )
        for b, (lo, hi) in zip(self.breakpoints, self.intervals, strict=True):
            lines.append(
                f"  change at {_fmt_x(self.x, b)} [{_fmt_x(self.x, lo)}, {_fmt_x(self.x, hi)}]"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Segments({self.n_segments} segments, breakpoints={[_fmt_x(self.x, b) for b in self.breakpoints]}, "
            f"cost={self.cost!r}, penalty={self.penalty:.4g})"
        )


def _fmt_x(x: str, v: float) -> str:
    if x.endswith("_bytes"):
        return f"{v / 1e9:.3g} GB"
    if x.endswith("_s"):
        return f"{v:.4g} s"
    return f"{v:.4g}"


def _where(r: dict) -> str:
    parts = []
    if r.get("gb_start") is not None and np.isfinite(r["gb_start"]):
        parts.append(f"{r['gb_start']:.3g}–{r['gb_end']:.3g} GB")
    if r.get("fills_start") is not None and np.isfinite(r["fills_start"]):
        parts.append(f"{r['fills_start']:.2f}–{r['fills_end']:.2f} fills")
    if r.get("t_start_s") is not None and np.isfinite(r["t_start_s"]):
        parts.append(f"{r['t_start_s']:.0f}–{r['t_end_s']:.0f} s")
    return ", ".join(parts) or f"x {r['x_start']:.4g}–{r['x_end']:.4g}"
