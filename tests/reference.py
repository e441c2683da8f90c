"""Plain-Python twins of the fast kernels (slow, obviously right), for the comparison tests."""

from __future__ import annotations


def pelt_l2(signal: list[float], pen: float, min_size: int) -> list[int]:
    """PELT with ruptures' conventions, segment costs summed directly (no cumulative sums)."""
    n = len(signal)
    min_size = max(1, min_size)

    def cost(a: int, b: int) -> float:
        seg = signal[a:b]
        m = sum(seg) / len(seg)
        return sum((v - m) ** 2 for v in seg)

    f = {0: 0.0}
    prev = {0: None}
    admissible: list[int] = []
    for s in list(range(min_size, n)) + [n]:
        t_new = s - min_size
        if t_new == 0 or t_new >= min_size:
            admissible.append(t_new)
        vals = [(f[t] + (cost(t, s) + pen), t) for t in admissible]
        best, best_t = vals[0]
        for v, t in vals[1:]:
            if v < best:
                best, best_t = v, t
        f[s], prev[s] = best, best_t
        admissible = [t for v, t in vals if v <= best + pen]
    out, s = [], n
    while s:
        out.append(s)
        s = prev[s]
    return out[::-1]


def pts_window(values: list[float], rule: str = "snia") -> bool:
    """SNIA PTS 2.0 (or TKperf) steady-state check of one window, written out longhand."""
    w = len(values)
    mean = sum(values) / w
    xbar = (w - 1) / 2
    sxy = sum((i - xbar) * (v - mean) for i, v in enumerate(values))
    sxx = sum((i - xbar) ** 2 for i in range(w))
    slope = sxy / sxx
    fit = [mean + slope * (i - xbar) for i in range(w)]
    if rule == "snia":
        slope_exc = max(fit) - min(fit)
    else:  # tkperf (StdyState.checkSteadyState): |k| * testMesWindow, which is 4
        slope_exc = abs(slope) * 4
    return (max(values) - min(values) <= 0.2 * mean) and (slope_exc <= 0.1 * mean)
