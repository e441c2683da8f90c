"""Plain-Python twins of the fast kernels (slow, obviously right): exact PELT with an L2 cost
and with a piecewise-linear cost (the native ``pelt_search``/``pelt_linear_search``) and the
SNIA PTS 5-round window check (``steady_state.window_check``). The tests compare the native
and vectorised code with them; they are not used at run time (O(n²)–O(n³) pure Python)."""

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
    prev: dict[int, int | None] = {0: None}
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
    out: list[int] = []
    end: int | None = n
    while end:
        out.append(end)
        end = prev[end]
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


def pelt_linear(x: list[float], y: list[float], pen: float, min_size: int) -> list[int]:
    """Optimal partitioning (no pruning) into segments each fitted by its own least-squares
    line, the residual sums of squares computed directly per segment."""
    n = len(y)
    m = max(2, min_size)

    def cost(a: int, b: int) -> float:
        xs, ys = x[a:b], y[a:b]
        k = b - a
        mx, my = sum(xs) / k, sum(ys) / k
        sxx = sum((u - mx) ** 2 for u in xs)
        sxy = sum((u - mx) * (v - my) for u, v in zip(xs, ys, strict=True))
        syy = sum((v - my) ** 2 for v in ys)
        return max(syy - (sxy * sxy / sxx if sxx > 1e-12 * k else 0.0), 0.0)

    f = {0: 0.0}
    prev: dict[int, int | None] = {0: 0}
    for s in list(range(m, n)) + [n]:
        best, best_t = float("inf"), None
        for t in [0] + list(range(m, n)):
            if t + m > s:
                break
            v = f[t] + cost(t, s) + pen
            if v < best:
                best, best_t = v, t
        f[s], prev[s] = best, best_t
    out: list[int] = []
    end: int | None = n
    while end:
        out.append(end)
        end = prev[end]
    return out[::-1]
