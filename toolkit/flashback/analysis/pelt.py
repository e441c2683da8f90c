"""The PELT search: native (exact, O(1) costs) for ``l2``/``normal``, ruptures for everything
else. Both follow ruptures' conventions: the result is the list of segment end indices, the
last being ``len(signal)``.

PELT prunes nothing on a signal without changes, so its work grows as n² (50,000 flat points:
3.6 s, 100,000: 10.8 s). Long signals are therefore searched on a grid, segment ends at
multiples of ``jump`` only, which divides the work by jump², and searched again over the grid
plus every index near the breakpoints found (``native_pelt(..., two_pass=True)``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flashback import _native
from flashback.errors import AnalysisError, ParameterError

NATIVE_COSTS = ("l2", "normal")

_RUPTURES = {
    "pelt": "Pelt",
    "binseg": "Binseg",
    "bottomup": "BottomUp",
    "window": "Window",
    "kernelcpd": "KernelCPD",
}


#: Signals up to this many points are searched at every index (jump 1).
GRID_FROM = 20_000


def default_jump(n: int, min_size: int) -> int:
    """Grid step for ``n`` points: 1 up to :data:`GRID_FROM`, then about ``n / GRID_FROM``
    (never more than ``min_size``, so every segment length allowed stays reachable)."""
    if n <= GRID_FROM:
        return 1
    return max(1, min(int(min_size), math.ceil(n / GRID_FROM)))


def native_pelt(
    signal: np.ndarray,
    *,
    pen: float,
    min_size: int,
    cost: str = "l2",
    jump: int = 1,
    two_pass: bool = False,
) -> list[int]:
    """Exact PELT in the native core (GIL released), segment ends on the ``jump`` grid; with
    ``two_pass``, searched again over the grid plus every index within ±(``jump`` +
    2·``min_size``) of each breakpoint found, which puts a change that fell between grid
    points where a search at every index puts it.

    Raises:
        AnalysisError: non-finite values, negative penalty, ``jump`` < 1, or fewer points
            than ``min_size``.
    """
    return _native_search(signal, pen, min_size, cost, jump=int(jump), two_pass=two_pass)


def native_pelt_ends(
    signal: np.ndarray, *, pen: float, min_size: int, ends: np.ndarray, cost: str = "l2"
) -> list[int]:
    """Exact PELT in the native core with segment ends only at ``ends`` (ascending, each at
    least ``min_size``, the last ``len(signal)``).

    Raises:
        AnalysisError: as :func:`native_pelt`, or ``ends`` not such a list.
    """
    return _native_search(signal, pen, min_size, cost, ends=[int(v) for v in ends])


def _native_search(signal: np.ndarray, pen: float, min_size: int, cost: str, **kw) -> list[int]:
    x = np.ascontiguousarray(signal, dtype=np.float64)
    try:
        return list(_native.pelt_search(x, float(pen), int(min_size), cost, **kw))
    except (ParameterError, OverflowError) as e:
        raise AnalysisError(str(e)) from None


def ruptures_search(
    signal: np.ndarray, *, pen: float, min_size: int, method: str | Any, cost: str
) -> list[int]:
    """Runs a ruptures estimator (``method`` name or instance) with ``jump=1``.

    Raises:
        AnalysisError: unknown method or a segmentation ruptures cannot do.
    """
    import ruptures as rpt

    if isinstance(method, str):
        name = _RUPTURES.get(method.lower().replace("_", "").replace("-", ""))
        if name is None:
            raise AnalysisError(
                f"method={method!r} is not known; use one of {', '.join(_RUPTURES)} "
                "or pass a ruptures estimator"
            )
        cls = getattr(rpt, name)
        if name == "KernelCPD":
            kernel = cost if cost in ("linear", "rbf", "cosine") else "rbf"
            algo = cls(kernel=kernel, min_size=min_size, jump=1)
        elif name == "Window":
            algo = cls(model=cost, min_size=min_size, jump=1, width=max(2 * min_size, 10))
        else:
            algo = cls(model=cost, min_size=min_size, jump=1)
    else:
        algo = method
    try:
        return [int(b) for b in algo.fit(signal).predict(pen=pen)]
    except Exception as e:  # ruptures raises its own exception types
        raise AnalysisError(
            f"ruptures {type(algo).__name__} failed ({e}); try method='pelt'"
        ) from None


def search(
    signal: np.ndarray,
    *,
    pen: float,
    min_size: int,
    method: str | Any = "pelt",
    cost: str = "l2",
    jump: int = 1,
) -> list[int]:
    """Segment end indices of ``signal`` at penalty ``pen``: native when possible. With
    ``jump`` > 1 the native search runs in two passes (:func:`native_pelt`); ruptures' methods
    always search every index."""
    if isinstance(method, str) and method.lower() == "pelt" and cost in NATIVE_COSTS:
        return native_pelt(signal, pen=pen, min_size=min_size, cost=cost, jump=jump, two_pass=True)
    return ruptures_search(signal, pen=pen, min_size=min_size, method=method, cost=cost)


def l2_cost(signal: np.ndarray, ends: list[int]) -> float:
    """Unpenalised L2 cost (sum of squared deviations from segment means) of a segmentation."""
    total, start = 0.0, 0
    for e in ends:
        seg = signal[start:e]
        total += float(((seg - seg.mean()) ** 2).sum())
        start = e
    return total


def normal_cost(signal: np.ndarray, ends: list[int]) -> float:
    """Unpenalised normal (mean and variance) cost of a segmentation: the sum over segments
    of ``len · ln(variance)``, the variance floored at 1e-12 of the whole signal's, as the
    native search computes it."""
    floor = max(float(np.var(signal)) * 1e-12, np.finfo(float).tiny)
    total, start = 0.0, 0
    for e in ends:
        seg = signal[start:e]
        total += (e - start) * math.log(max(float(np.var(seg)), floor))
        start = e
    return total


def segmentation_cost(signal: np.ndarray, ends: list[int], cost: str) -> float:
    """Unpenalised cost of a segmentation under ``cost`` (``l2``/``huber`` searched as l2,
    ``normal``; ruptures models through ruptures' own cost class).

    Raises:
        AnalysisError: a cost ruptures does not know.
    """
    if cost in ("l2", "huber"):
        return l2_cost(signal, ends)
    if cost == "normal":
        return normal_cost(signal, ends)
    import ruptures as rpt

    try:
        c = rpt.costs.cost_factory(model=cost).fit(signal)
    except Exception as e:  # ruptures raises its own exception types
        raise AnalysisError(f"cost={cost!r} is not known to ruptures ({e})") from None
    return float(sum(c.error(a, b) for a, b in zip([0, *ends[:-1]], ends, strict=True)))
