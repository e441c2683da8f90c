"""Effects with honest confidence intervals: compression, TRIM, degradation, idle recovery.

Per-second data are autocorrelated, so an i.i.d. bootstrap of seconds is far too narrow
(~3× on AR(0.9) data). Each series is cut into blocks of the Politis–White length
(:func:`flashback.analysis.blocks.optimal_block_length`) and ``scipy.stats.bootstrap``
resamples the block means (a t-interval when fewer than 20 blocks remain).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import polars as pl

from flashback.analysis import frames
from flashback.analysis.bootstrap import (
    Bootstrap,
    ratio_ci,
    resolve_bootstrap,
)
from flashback.errors import AnalysisError


@dataclasses.dataclass(kw_only=True)
class Effect:
    """A ratio of two levels with its confidence interval.

    Attributes:
        name: what is compared (``compression``, ``trim``, ``degradation``, ``idle_recovery``).
        ratio, lo, hi: ``level(b) / level(a)`` and its CI.
        level_a, level_b: the two means; ``a``/``b`` say which is which.
        block_len: points per block used by the bootstrap.
    """

    name: str
    a: str
    b: str
    y: str
    level_a: float
    level_b: float
    ratio: float
    lo: float
    hi: float
    confidence: float
    block_len: int
    n_blocks: tuple[int, int]
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def pct(self) -> tuple[float, float, float]:
        """(ratio − 1) in percent with its CI: ``+3.1 [1.9, 4.4]`` % means b is 3 % higher."""
        return (100 * (self.ratio - 1), 100 * (self.lo - 1), 100 * (self.hi - 1))

    def to_frame(self) -> pl.DataFrame:
        """One row: the effect, its estimate and its confidence interval."""
        row = {
            "effect": self.name,
            "y": self.y,
            "a": self.a,
            "b": self.b,
            "level_a": self.level_a,
            "level_b": self.level_b,
            "ratio": self.ratio,
            "ratio_lo": self.lo,
            "ratio_hi": self.hi,
            "confidence": self.confidence,
            "block_len": self.block_len,
            **{k: v for k, v in self.extra.items() if np.isscalar(v)},
        }
        return pl.DataFrame([row])

    def __str__(self) -> str:
        p, lo, hi = self.pct
        return (
            f"{self.name}: {self.b} / {self.a} = {self.ratio:.3f} [{self.lo:.3f}, {self.hi:.3f}]"
            f" ({p:+.1f} % [{lo:+.1f}, {hi:+.1f}]) on {self.y}"
        )


def series(
    data: Any, y: str, *, step: str | None = None, last_s: float | None = None
) -> np.ndarray:
    """The values of ``y`` from a Capture, frame or 1-D array, optionally one ``step`` and
    only the last ``last_s`` seconds.

    Raises:
        AnalysisError: empty, NaN, missing column, unknown step.
    """
    if isinstance(data, (np.ndarray, list, tuple)):
        a = np.asarray(data, dtype=np.float64)
        if a.ndim != 1 or a.size == 0:
            raise AnalysisError("pass a non-empty 1-D array of per-interval values")
        if not np.isfinite(a).all():
            raise AnalysisError(
                "the array has missing or non-finite values; drop or fill them first"
            )
        return a
    df, _ = frames.as_frame(data)
    if step is not None:
        if "step" not in df.columns or df.filter(pl.col("step") == step).height == 0:
            raise AnalysisError(f"no intervals with step={step!r}; pick a step the capture has")
        df = df.filter(pl.col("step") == step)
    if last_s is not None and "t_s" in df.columns:
        t = df["t_s"].to_numpy()
        df = df.filter(pl.Series(t > t[-1] - last_s))
    return frames.column(df, y, role="y")


def _effect(
    name: str,
    a_label: str,
    b_label: str,
    a: Any,
    b: Any,
    *,
    y: str,
    confidence: float,
    last_s: float | None,
    block_len: int | None,
    n_resamples: int,
    seed: int | None,
    method: str,
    step_a: str | None = None,
    step_b: str | None = None,
    bootstrap: Bootstrap | None = None,
) -> Effect:
    if bootstrap is not None:
        opts = resolve_bootstrap(
            bootstrap,
            {
                "confidence": confidence,
                "block_len": block_len,
                "n_resamples": n_resamples,
                "seed": seed,
                "method": method,
            },
        )
        confidence, block_len, n_resamples = opts.confidence, opts.block_len, opts.n_resamples
        seed, method = opts.seed, opts.method
    confidence = frames.confidence_level(confidence)
    xa = series(a, y, step=step_a, last_s=last_s)
    xb = series(b, y, step=step_b, last_s=last_s)
    r, lo, hi, L, nb = ratio_ci(
        xa,
        xb,
        confidence=confidence,
        block_len=block_len,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )
    return Effect(
        name=name,
        a=a_label,
        b=b_label,
        y=y,
        level_a=float(xa.mean()),
        level_b=float(xb.mean()),
        ratio=r,
        lo=lo,
        hi=hi,
        confidence=confidence,
        block_len=L,
        n_blocks=nb,
    )


#: the bootstrap options every effect function takes (see :func:`ratio_ci`)
_BOOTSTRAP_DOC = """
    Args:
        y: the column compared (default ``write_mbps``).
        confidence: confidence level of ``lo``/``hi`` (0 < confidence < 1).
        last_s: only the last ``last_s`` seconds of each capture (e.g. the steady state).
        block_len: points per bootstrap block (default: the Politis–White length; ``1`` is
            an i.i.d. bootstrap, too narrow on autocorrelated data, kept for comparison).
        n_resamples: bootstrap resamples.
        seed: seed of the resampling (None: fresh entropy).
        method: ``scipy.stats.bootstrap`` method (``BCa``, ``percentile``, ``basic``).
        step_a, step_b: only the intervals of this replay step of the first/second capture.
        bootstrap: ``confidence``, ``block_len``, ``n_resamples``, ``seed`` and ``method`` as
            one :class:`Bootstrap` (those keywords then left at their defaults).

    Raises:
        AnalysisError: a capture without ``y`` or with NaN in it, an empty array, fewer
            than 2 blocks in a series, a zero mean in the reference series, a step the
            capture does not have, or a bad bootstrap option (``confidence`` not strictly
            between 0 and 1, ``block_len`` < 1, ``n_resamples`` < 1, an unknown ``method``),
            or ``bootstrap`` given with one of those keywords changed from its default.
"""


def compression_effect(
    compressible: Any,
    incompressible: Any,
    *,
    y: str = "write_mbps",
    confidence: float = 0.95,
    last_s: float | None = None,
    block_len: int | None = None,
    n_resamples: int = 2000,
    seed: int | None = 0,
    method: str = "BCa",
    step_a: str | None = None,
    step_b: str | None = None,
    bootstrap: Bootstrap | None = None,
) -> Effect:
    """Incompressible vs compressible data: ``ratio`` = level(incompressible) / level(compressible)
    (0.45 = incompressible writes run at 45 % of the compressible speed)."""
    return _effect(
        "compression",
        "compressible",
        "incompressible",
        compressible,
        incompressible,
        y=y,
        confidence=confidence,
        last_s=last_s,
        block_len=block_len,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        step_a=step_a,
        step_b=step_b,
        bootstrap=bootstrap,
    )


def degradation(
    fresh: Any,
    used: Any,
    *,
    y: str = "write_mbps",
    confidence: float = 0.95,
    last_s: float | None = None,
    block_len: int | None = None,
    n_resamples: int = 2000,
    seed: int | None = 0,
    method: str = "BCa",
    step_a: str | None = None,
    step_b: str | None = None,
    bootstrap: Bootstrap | None = None,
) -> Effect:
    """Used vs fresh: ``ratio`` = level(used) / level(fresh), the reviews' "% of fresh"
    (0.9 = 10 % slower after degradation)."""
    return _effect(
        "degradation",
        "fresh",
        "used",
        fresh,
        used,
        y=y,
        confidence=confidence,
        last_s=last_s,
        block_len=block_len,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        step_a=step_a,
        step_b=step_b,
        bootstrap=bootstrap,
    )


def idle_recovery(
    before: Any,
    after: Any,
    *,
    y: str = "write_mbps",
    fresh: Any = None,
    confidence: float = 0.95,
    last_s: float | None = None,
    block_len: int | None = None,
    n_resamples: int = 2000,
    seed: int | None = 0,
    method: str = "BCa",
    step_a: str | None = None,
    step_b: str | None = None,
    bootstrap: Bootstrap | None = None,
) -> Effect:
    """After an idle period vs before it: ``ratio`` = level(after) / level(before); with
    ``fresh``, ``extra['of_fresh']`` = level(after) / level(fresh)."""
    e = _effect(
        "idle_recovery",
        "before_idle",
        "after_idle",
        before,
        after,
        y=y,
        confidence=confidence,
        last_s=last_s,
        block_len=block_len,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        step_a=step_a,
        step_b=step_b,
        bootstrap=bootstrap,
    )
    if fresh is not None:
        e.extra["of_fresh"] = e.level_b / float(series(fresh, y, last_s=last_s).mean())
    return e


def trim_effect(
    used: Any,
    trimmed: Any,
    fresh: Any = None,
    *,
    y: str = "write_mbps",
    confidence: float = 0.95,
    last_s: float | None = None,
    block_len: int | None = None,
    n_resamples: int = 2000,
    seed: int | None = 0,
    method: str = "BCa",
    step_a: str | None = None,
    step_b: str | None = None,
    bootstrap: Bootstrap | None = None,
) -> Effect:
    """After TRIM vs used: ``ratio`` = level(trimmed) / level(used) ("TRIM helps 2–4 %" is a
    ratio of 1.02–1.04). With ``fresh``: ``extra['of_fresh']`` = trimmed / fresh and
    ``extra['recovered']`` = (trimmed − used) / (fresh − used), the share of the loss TRIM
    gave back."""
    e = _effect(
        "trim",
        "used",
        "trimmed",
        used,
        trimmed,
        y=y,
        confidence=confidence,
        last_s=last_s,
        block_len=block_len,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        step_a=step_a,
        step_b=step_b,
        bootstrap=bootstrap,
    )
    if fresh is not None:
        f = float(series(fresh, y, last_s=last_s).mean())
        e.extra["of_fresh"] = e.level_b / f
        e.extra["recovered"] = (
            (e.level_b - e.level_a) / (f - e.level_a) if f != e.level_a else float("nan")
        )
    return e


for _f in (compression_effect, degradation, idle_recovery, trim_effect):
    _f.__doc__ = (_f.__doc__ or "") + "\n" + _BOOTSTRAP_DOC
