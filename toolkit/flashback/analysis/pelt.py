"""The PELT search: native (exact, O(1) costs, jump 1) for ``l2``/``normal``, ruptures for
everything else. Both follow ruptures' conventions: the result is the list of segment end
indices, the last being ``len(signal)``."""

from __future__ import annotations

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


def native_pelt(signal: np.ndarray, *, pen: float, min_size: int, cost: str = "l2") -> list[int]:
    """Exact PELT in the native core (GIL released).

    Raises:
        AnalysisError: non-finite values, negative penalty, or fewer points than ``min_size``.
    """
    x = np.ascontiguousarray(signal, dtype=np.float64)
    try:
        return list(_native.pelt_search(x, float(pen), int(min_size), cost))
    except ParameterError as e:
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
    signal: np.ndarray, *, pen: float, min_size: int, method: str | Any = "pelt", cost: str = "l2"
) -> list[int]:
    """Segment end indices of ``signal`` at penalty ``pen``: native when possible."""
    if isinstance(method, str) and method.lower() == "pelt" and cost in NATIVE_COSTS:
        return native_pelt(signal, pen=pen, min_size=min_size, cost=cost)
    return ruptures_search(signal, pen=pen, min_size=min_size, method=method, cost=cost)


def l2_cost(signal: np.ndarray, ends: list[int]) -> float:
    """Unpenalised L2 cost (sum of squared deviations from segment means) of a segmentation."""
    total, start = 0.0, 0
    for e in ends:
        seg = signal[start:e]
        total += float(((seg - seg.mean()) ** 2).sum())
        start = e
    return total
