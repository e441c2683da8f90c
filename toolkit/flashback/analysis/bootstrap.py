"""The interval of a ratio of two autocorrelated series' means, and the bootstrap options every
effect takes: block means (Politis–White length, :mod:`flashback.analysis.blocks`) resampled by
``scipy.stats.bootstrap``, or a delta-method t-interval when fewer than
:data:`MIN_BOOTSTRAP_BLOCKS` blocks remain.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from flashback._options import given_options
from flashback.analysis import blocks, frames
from flashback.errors import AnalysisError

BOOTSTRAP_METHODS = ("BCa", "percentile", "basic")

#: fewer independent blocks than this per series: a t-interval instead of the bootstrap
MIN_BOOTSTRAP_BLOCKS = 20


def ratio_ci(
    a: np.ndarray,
    b: np.ndarray,
    *,
    confidence: float = 0.95,
    block_len: int | None = None,
    n_resamples: int = 2000,
    seed: int | None = 0,
    method: str = "BCa",
) -> tuple[float, float, float, int, tuple[int, int]]:
    """``mean(b)/mean(a)`` and its CI from non-overlapping block means.

    The block length is the larger Politis–White length of the two series
    (:func:`~flashback.analysis.blocks.optimal_block_length`), unless given (``block_len=1``
    is an i.i.d. bootstrap: too narrow on autocorrelated data, kept for comparison). With at
    least :data:`MIN_BOOTSTRAP_BLOCKS` blocks per series, ``scipy.stats.bootstrap`` resamples
    the block means; with fewer, the bootstrap undercovers (its spread comes from a handful
    of values), so the interval is a delta-method t-interval on the block means with
    Welch–Satterthwaite degrees of freedom, and an :class:`~flashback.errors.AnalysisWarning`
    says so.

    Raises:
        AnalysisError: ``confidence`` not strictly between 0 and 1, ``block_len`` not a
            whole number ≥ 1, ``n_resamples`` < 1, ``method`` not one of
            :data:`BOOTSTRAP_METHODS`, fewer than 2 blocks in a series, or a zero mean in ``a``.
    """
    from scipy import stats  # imported on first use: scipy is slow to import

    confidence = frames.confidence_level(confidence)
    _check_bootstrap_options(block_len=block_len, n_resamples=n_resamples, method=method)
    L = block_len or max(blocks.optimal_block_length(a), blocks.optimal_block_length(b))
    ba, bb = blocks.block_means(a, L), blocks.block_means(b, L)
    if ba.size < 2 or bb.size < 2:
        raise AnalysisError(
            f"a confidence interval needs at least 2 blocks of {L} intervals per series; "
            "capture longer runs"
        )
    if a.mean() == 0:
        raise AnalysisError("the reference series has mean zero, so a ratio is undefined")
    r = float(b.mean() / a.mean())
    if min(ba.size, bb.size) < MIN_BOOTSTRAP_BLOCKS and block_len is None:
        lo, hi = _t_interval(ba, bb, confidence, a=a, b=b)
        import warnings

        from flashback.errors import AnalysisWarning

        warnings.warn(
            f"only {min(ba.size, bb.size)} independent blocks of {L} intervals per series: "
            "the interval is a t-interval (wide); capture longer runs for a tighter one",
            AnalysisWarning,
            stacklevel=3,
        )
        return r, lo, hi, L, (ba.size, bb.size)
    # The bootstrap's plug-in variance divides by k, not k − 1, and treats the block means as
    # independent while neighbours still correlate a little: both undercover, so the block
    # means are spread by sqrt(k / (k − 1) · (1 + 2 ρ₁⁺)) first (ρ₁ their lag-1
    # autocorrelation, counted when positive), and at least to the AR(1) variance of the mean.
    # (A given ``block_len`` gets the k / (k − 1) factor only: it is there to compare.)
    ba, bb = _spread(ba, a, full=block_len is None), _spread(bb, b, full=block_len is None)

    def stat(x, z, axis=-1):
        return np.mean(z, axis=axis) / np.mean(x, axis=axis)

    res = stats.bootstrap(
        (ba, bb),
        stat,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method=method,
        vectorized=True,
        paired=False,
        rng=np.random.default_rng(seed),
    )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        res = stats.bootstrap(
            (ba, bb),
            stat,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method="percentile",
            vectorized=True,
            paired=False,
            rng=np.random.default_rng(seed),
        )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return r, lo, hi, L, (ba.size, bb.size)


def _check_bootstrap_options(*, block_len: Any, n_resamples: Any, method: Any) -> None:
    """Raises AnalysisError for a bootstrap option ``scipy.stats.bootstrap`` would refuse
    with a bare ValueError, or that would be silently read as something else."""
    if block_len is not None and (
        isinstance(block_len, bool) or not isinstance(block_len, (int, np.integer)) or block_len < 1
    ):
        raise AnalysisError(
            f"block_len must be a whole number of intervals, at least 1, got {block_len!r} "
            "(None: the Politis–White length)"
        )
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise AnalysisError(f"n_resamples must be a whole number, got {n_resamples!r}")
    if n_resamples < 1:
        raise AnalysisError(f"n_resamples must be at least 1, got {n_resamples!r}")
    if method not in BOOTSTRAP_METHODS:
        raise AnalysisError(f"method={method!r} is not one of {', '.join(BOOTSTRAP_METHODS)}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Bootstrap:
    """The bootstrap options of the effect functions as one value, passed as ``bootstrap=``
    in place of the five keywords of the same names (which stay accepted).

    Attributes:
        confidence: confidence level of the interval (0 < confidence < 1).
        block_len: points per bootstrap block (None: the Politis–White length).
        n_resamples: bootstrap resamples.
        seed: seed of the resampling (None: fresh entropy).
        method: ``scipy.stats.bootstrap`` method (``BCa``, ``percentile``, ``basic``).

    Raises:
        AnalysisError: an option the keywords would refuse (``confidence`` not strictly
            between 0 and 1, ``block_len`` < 1, ``n_resamples`` < 1, an unknown ``method``).
    """

    confidence: float = 0.95
    block_len: int | None = None
    n_resamples: int = 2000
    seed: int | None = 0
    method: str = "BCa"

    def __post_init__(self) -> None:
        frames.confidence_level(self.confidence)
        _check_bootstrap_options(
            block_len=self.block_len, n_resamples=self.n_resamples, method=self.method
        )


def resolve_bootstrap(bootstrap: object, keywords: dict[str, Any]) -> Bootstrap:
    """``bootstrap``, checked against the bootstrap ``keywords`` an effect function was called
    with (name -> value), which must all be at their defaults.

    Raises:
        AnalysisError: ``bootstrap`` is not a :class:`Bootstrap`, or a keyword is set to
            something other than its default beside it.
    """
    return given_options(
        bootstrap, keywords, cls=Bootstrap, name="bootstrap", label="Bootstrap",
        what="the options", error=AnalysisError,
    )  # fmt: skip


def _spread(bm: np.ndarray, y: np.ndarray, *, full: bool) -> np.ndarray:
    """Block means spread so their plug-in variance of the mean is at least the corrected
    batch-means one and the AR(1) one (:func:`blocks.ar1_var_of_mean` of the series ``y``);
    with ``full=False`` by k / (k − 1) only."""
    k = bm.size
    if not full:
        return bm.mean() + (bm - bm.mean()) * np.sqrt(k / (k - 1))
    rho = max(blocks.lag1_autocorrelation(bm), 0.0)
    f = k / (k - 1) * (1 + 2 * rho)
    plug_in = float(bm.var()) / k
    if plug_in > 0:
        f = max(f, blocks.ar1_var_of_mean(y) / plug_in)
    return bm.mean() + (bm - bm.mean()) * np.sqrt(f)


def _t_interval(
    ba: np.ndarray, bb: np.ndarray, confidence: float, *, a: np.ndarray, b: np.ndarray
) -> tuple[float, float]:
    """Delta-method interval for mean(b)/mean(a): se² = r²(v_b/B̄² + v_a/Ā²), each ``v`` the
    variance of a series mean from :func:`blocks.var_of_mean`, with Welch–Satterthwaite
    degrees of freedom from theirs."""
    from scipy import stats

    ma, mb = float(ba.mean()), float(bb.mean())
    r = mb / ma
    va, da = blocks.var_of_mean(a, ba)
    vb, db = blocks.var_of_mean(b, bb)
    va, vb = va / (ma * ma), vb / (mb * mb)
    se = abs(r) * math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / da + vb**2 / db) if va + vb > 0 else 1.0
    t = float(stats.t.ppf(0.5 + confidence / 2, max(df, 1.0)))
    return r - t * se, r + t * se
