"""Sample logs → regular intervals (the capture's rows).

Intervals end at ``interval, 2·interval, …`` and the last one ends at the last sample: a
partial last window keeps its true length (``interval_s``), so its rates are not diluted
into a fake cliff. A sample at time t belongs to the interval (start, end] holding t.
"""

from __future__ import annotations

import numpy as np

from flashback import _native
from flashback.errors import FioFormatError
from flashback.fio import edges as fedges
from flashback.fio import hist as fhist
from flashback.fio.logs import Log
from flashback.fio.logtable import column_view

LAT_STATS = ("mean", "p50", "p99", "p999", "max")


def edges_ms(t_end_ms: float, interval_ms: float) -> np.ndarray:
    """Interval edges from 0 to ``t_end_ms``; the last interval may be shorter."""
    n_full = int(np.floor(t_end_ms / interval_ms + 1e-9))
    e = np.arange(n_full + 1) * interval_ms
    if t_end_ms - e[-1] > 1e-6:
        e = np.append(e, t_end_ms)
    return e


def bin_of(t_ms: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges, t_ms, side="left") - 1, 0, edges.size - 2)


def bins_of(lg: Log, edges: np.ndarray) -> np.ndarray:
    """:func:`bin_of` of every row of a log, computed once per log and edges. A log whose
    times never step back (fio's per-I/O logs) is binned by locating the edges among the
    times (one search per edge) instead of each time among the edges; the result is the
    same."""
    if lg.binned is not None and lg.binned[0] is edges:
        return lg.binned[1]
    t = lg.t_ms
    if t.size > 1 and (lg.t_sorted or bool((t[1:] >= t[:-1]).all())):
        b = np.repeat(np.arange(edges.size - 1), _sorted_counts(t, edges))
    else:
        b = bin_of(t, edges)
    lg.binned = (edges, b)
    return b


def _sorted_counts(t: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """How many of the ascending times ``t`` each interval holds (as :func:`bin_of` bins
    them), from one search per edge."""
    idx = np.searchsorted(t, edges, side="right")  # times <= each edge
    counts = np.diff(idx)
    counts[0] += idx[0]  # at or before the first edge: the first interval
    counts[-1] += t.size - idx[-1]  # past the last edge: the last interval
    return counts


def _rows(lg: Log, d: int) -> np.ndarray | slice:
    """The rows of direction ``d``: a slice of all of them when the log holds no other."""
    if lg.rows_in(d) == lg.ddir.size:
        return slice(None)
    return lg.ddir == d


def window_integral(
    t_ms: np.ndarray, rate: np.ndarray, edges: np.ndarray, *, avg_ms: float
) -> np.ndarray:
    """Integrates window-averaged rates over the intervals: each sample covers the time since
    the previous one (fio logs a window when it closes, late or short ones included), except
    after a gap longer than 1.5 windows, where windows without I/O went unlogged and the
    sample covers one window (``avg_ms = inf`` for fio < 2.10 default logs: always since the
    previous one). Returns rate·ms per interval."""
    xs, ys = fedges.cumulative(t_ms, rate, avg_ms=avg_ms)
    return np.diff(np.interp(edges, xs, ys, left=0.0, right=ys[-1]))


def rate_total(
    logs: list[Log],
    d: int,
    edges: np.ndarray,
    *,
    printed: dict[fedges.Key, fedges.Printed] | None = None,
) -> np.ndarray | None:
    """Sum over jobs of a bw (KiB) or iops (I/Os) log's content per interval, in the log's
    unit·s; ``None`` without such logs. A window-averaged log whose job has a ``printed``
    total (direction ``d``, the log's unit) counts what it lacks at its edges too (see
    :mod:`flashback.fio.edges`); without one only what the log covers.

    Raises:
        FioFormatError: a log holding only each window's maximum (``log_max_value=1``, read
            with ``window_value="max"``): a rate cannot be summed from maxima.
    """
    if not logs:
        return None
    for lg in logs:
        _means(lg)
    total = np.zeros(edges.size - 1)
    for lg in logs:
        if not lg.rows_in(d):
            continue
        sel = _rows(lg, d)
        t = lg.t_ms[sel]
        if lg.mode == "per_io":
            w = lg.bs[sel] / 1024.0 if lg.kind == "bw" else None
            total += np.bincount(bins_of(lg, edges)[sel], weights=w, minlength=edges.size - 1)
        else:
            avg = np.inf if lg.mode == "default_window" else lg.avg_ms
            p = None if printed is None else printed.get((fedges.prefix_of(lg), lg.job))
            if p is None:
                total += window_integral(t, _means(lg)[sel], edges, avg_ms=avg) / 1000.0
            else:
                xs, ys = fedges.filled(t, _means(lg)[sel], avg_ms=avg, printed=p)
                total += np.diff(np.interp(edges, xs, ys))
    return total


def _means(lg: Log) -> np.ndarray:
    """A log's value column (window means, or each I/O's value).

    Raises:
        FioFormatError: the log holds only each window's maximum (``log_max_value=1``, read
            with ``window_value="max"``).
    """
    if lg.value is None:
        raise FioFormatError(
            f"{lg.path} holds only each window's maximum (log_max_value=1), not its mean, "
            f"so the {lg.kind} over an interval cannot be computed from it; pass fio's JSON "
            "output for the totals, or logs written with log_window_value=both"
        )
    return lg.value


def per_io_counts(
    logs: list[Log], d: int, edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """(I/Os, bytes) per interval counted from per-I/O logs of one kind (jobs summed)."""
    fs = [lg for lg in logs if lg.mode == "per_io"]
    if not fs:
        return None
    n = edges.size - 1
    ios, nbytes = np.zeros(n), np.zeros(n)
    for lg in fs:
        if not lg.rows_in(d):
            continue
        sel = _rows(lg, d)
        bs = lg.bs[sel]
        lo, hi = lg.bs_range if lg.bs_range is not None else (bs.min(), bs.max())
        one_bs = bool(bs.size and lo == hi and float(bs[0]) * bs.size < 2.0**53)
        if one_bs and isinstance(sel, slice) and lg.t_sorted and lg.t_ms.size > 1:
            # every row, in time order: no interval per row needed (the same counts)
            counted = _sorted_counts(lg.t_ms, edges)
        else:
            b = bins_of(lg, edges)[sel]
            counted = np.bincount(b, minlength=n)
        ios += counted
        if one_bs:
            # one block size: the same sums, exactly (integers below 2^53)
            nbytes += counted * float(bs[0])
        else:
            nbytes += np.bincount(b, weights=bs.astype(np.float64), minlength=n)
    return ios, nbytes


def latency(
    logs: list[Log],
    d: int,
    edges: np.ndarray,
    *,
    ns_per_unit: float,
    iops_logs: list[Log] | None = None,
    printed: dict[fedges.Key, fedges.Printed] | None = None,
) -> dict | None:
    """Per-interval latency stats in µs from latency logs of one kind (jobs pooled).

    Per-I/O logs give exact sample statistics. Window-averaged logs (``log_avg_msec``) give
    the mean of the window means, each window weighted by its I/O count taken from the same
    job's iops log (``iops_logs``, matched by run prefix and job number), which is fio's own
    mean (with the edges a job's ``printed`` I/O total fills, see :mod:`flashback.fio.edges`);
    without an iops log for every latency log the windows count equally
    (``out["weighted_by"]`` says which: ``"ios"`` or ``"windows"``). Their percentiles are
    null, and their max is null unless the log carries maxima (``log_window_value=both``/
    ``max``)."""
    fs = [lg for lg in logs if lg.rows_in(d)]
    if not fs:
        return None
    n = edges.size - 1
    out: dict = {k: np.full(n, np.nan) for k in LAT_STATS}
    scale = ns_per_unit / 1000.0
    per_io = [lg for lg in fs if lg.mode == "per_io"]
    if per_io:
        exact = _native_latency(per_io, d, edges, scale)
        if exact is not None:
            out.update(exact)
            return out
        sels = [_rows(lg, d) for lg in per_io]
        # int64 when any log has fio's integers: read_plain's float64 values are exact
        # integers, as the int64 ones would be; float64 when none has
        as_int = any(lg.ivalue is not None for lg in per_io)
        raw = _joined([_raw(lg, as_int=as_int)[sel] for lg, sel in zip(per_io, sels, strict=True)])
        b = _joined([bins_of(lg, edges)[sel] for lg, sel in zip(per_io, sels, strict=True)])
        for i, vv in _by_interval(b, raw, n):
            vv = vv * scale
            out["mean"][i] = vv.mean()
            # fio's rule on exact samples: the smallest value with at least p·N samples <= it
            for k, p in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
                out[k][i] = vv[min(int(np.ceil(p * vv.size - 1e-9)) - 1, vv.size - 1)]
            out["max"][i] = vv[-1]
        return out
    means = [lg for lg in fs if lg.value is not None]
    if means:
        t = np.concatenate([lg.t_ms[lg.ddir == d] for lg in means])
        v = np.concatenate([_means(lg)[lg.ddir == d] for lg in means]) * scale
        b = bin_of(t, edges)
        cnt = np.bincount(b, minlength=n)
        w = _window_ios(means, d, iops_logs or [], printed or {})
        with np.errstate(invalid="ignore", divide="ignore"):
            plain = np.where(cnt > 0, np.bincount(b, weights=v, minlength=n) / cnt, np.nan)
            if w is None:
                out["mean"] = plain
            else:
                den = np.bincount(b, weights=w, minlength=n)
                num = np.bincount(b, weights=w * v, minlength=n)
                # an interval whose windows the iops logs saw no I/O in keeps the plain mean
                out["mean"] = np.where(den > 0, num / den, plain)
        out["weighted_by"] = "windows" if w is None else "ios"
    maxes = [(lg, vmax) for lg in fs if (vmax := lg.value_max) is not None]
    if maxes:
        t = np.concatenate([lg.t_ms[lg.ddir == d] for lg, _ in maxes])
        v = np.concatenate([vmax[lg.ddir == d] for lg, vmax in maxes]) * scale
        b = bin_of(t, edges)
        m = np.full(n, -np.inf)
        np.maximum.at(m, b, v)
        out["max"] = np.where(np.isfinite(m), m, np.nan)
    return out


def _raw(lg: Log, *, as_int: bool) -> np.ndarray:
    """A per-I/O log's values as fio wrote them: its int64 ``ivalue`` when read, else its
    float64 values (as int64 with ``as_int``).

    Raises:
        FioFormatError: the log has no value column (see :func:`_means`).
    """
    if lg.ivalue is not None:
        return lg.ivalue
    value = _means(lg)
    return value.astype(np.int64) if as_int else value


def _native_latency(per_io: list[Log], d: int, edges: np.ndarray, scale: float) -> dict | None:
    """The per-interval statistics of per-I/O logs computed by the Rust core: exactly what
    the numpy code below gives (each interval's values sorted, the mean summed as numpy sums,
    fio's percentile rule), without sorting every sample at once. ``None`` when a value is
    not an integer below 2⁵³ (or a log has no value column): the numpy code handles those."""
    if any(lg.value is None for lg in per_io):
        return None
    parts = [
        (
            np.ascontiguousarray(lg.t_ms, dtype=np.float64),
            np.ascontiguousarray(lg.value, dtype=np.float64),
            None if lg.rows_in(d) == lg.ddir.size else np.ascontiguousarray(lg.ddir, np.int64),
        )
        for lg in per_io
    ]
    got = _native.fio_interval_latency(parts, d, np.ascontiguousarray(edges, np.float64), scale)
    if got is None:
        return None
    return {k: column_view(c, np.float64) for k, c in zip(LAT_STATS, got, strict=True)}


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _by_interval(b: np.ndarray, raw: np.ndarray, n: int):
    """Yields (interval, its values sorted ascending) for each interval holding values.
    fio's latencies are integers (held as floats): interval and value packed into one int64
    key make this one in-place integer sort (a few ms per million samples) and each
    interval's values are unpacked from its run of keys; the values, and so every statistic,
    are those a two-key lexsort of every sample gives, which values too large to pack take."""
    shift = max(int(n).bit_length(), 1)  # n itself is packed as the last bound
    bits = 63 - shift
    if raw.size and float(raw.max()) < 2.0 ** min(53, bits):
        key = raw.astype(np.int64, copy=True)
        key |= b << bits
        key.sort()
        bounds = np.searchsorted(key, np.arange(n + 1, dtype=np.int64) << bits)
        mask = (1 << bits) - 1
        for i in np.flatnonzero(np.diff(bounds)):
            yield int(i), (key[bounds[i] : bounds[i + 1]] & mask).astype(np.float64)
        return
    order = np.lexsort((raw, b))
    b, v = b[order], raw[order].astype(np.float64)
    starts = np.flatnonzero(np.r_[True, np.diff(b) != 0])
    ends = np.r_[starts[1:], b.size]
    for s, e in zip(starts, ends, strict=True):
        yield int(b[s]), v[s:e]


def _window_ios(
    lat_logs: list[Log],
    d: int,
    iops_logs: list[Log],
    printed: dict[fedges.Key, fedges.Printed],
) -> np.ndarray | None:
    """The I/O count of each window of window-averaged latency logs (direction ``d``, rows
    in the order :func:`latency` concatenates them), from each job's iops log: the I/Os the
    iops log counts between the window's start (the previous sample, or one window earlier
    after a gap, as in :func:`flashback.fio.edges.cumulative`) and its end. fio closes the
    two logs' windows on separate clocks a few ms apart and its iops log may lack the first
    window, so before
    the iops log's first sample and after its last one its first and last rates hold, or,
    for a job with a ``printed`` total, the edges it fills (:mod:`flashback.fio.edges`).
    Per-I/O iops logs are counted. ``None`` when some latency log has no iops log of its
    run and job with samples in ``d``."""
    by_job = {(fedges.prefix_of(lg), lg.job): lg for lg in iops_logs if lg.value is not None}
    parts = []
    for lg in lat_logs:
        io = by_job.get((fedges.prefix_of(lg), lg.job))
        if io is None or not (io.ddir == d).any():
            return None
        isel = io.ddir == d
        t = lg.t_ms[lg.ddir == d]
        avg_ms = lg.avg_ms or 1.0
        prev = np.concatenate([[t[0] - avg_ms], t[:-1]])
        start = np.where((t - prev > 1.5 * avg_ms) | (prev > t), t - avg_ms, prev)
        if io.mode == "per_io":
            xs = np.sort(io.t_ms[isel])
            ys = np.arange(1, xs.size + 1, dtype=np.float64)
            w = np.interp(t, xs, ys, left=0.0) - np.interp(start, xs, ys, left=0.0)
        else:
            order = np.argsort(io.t_ms[isel], kind="stable")
            it, iv = io.t_ms[isel][order], _means(io)[isel][order]
            avg = np.inf if io.mode == "default_window" else io.avg_ms
            p = printed.get((fedges.prefix_of(io), io.job))
            if p is None:
                xs, ys = fedges.cumulative(it, iv, avg_ms=avg)
                lo, hi = iv[0], iv[-1]
                w = fedges.extrapolated(t, xs, ys, lo, hi) - fedges.extrapolated(
                    start, xs, ys, lo, hi
                )
                w = w / 1000.0
            else:
                xs, ys = fedges.filled(it, iv, avg_ms=avg, printed=p)
                w = np.interp(t, xs, ys) - np.interp(start, xs, ys)
        parts.append(np.maximum(w, 0.0))
    return np.concatenate(parts) if parts else None


def hist_latency(
    hists: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    d: int,
    edges: np.ndarray,
    *,
    ns_per_unit: float,
) -> tuple[dict, np.ndarray] | None:
    """Per-interval clat stats (µs) and I/O counts from clat histogram logs (jobs merged)."""
    n = edges.size - 1
    acc = None
    for t, dd, counts in hists:
        sel = dd == d
        if not sel.any():
            continue
        if acc is None:
            acc = np.zeros((n, counts.shape[1]))
        np.add.at(acc, bin_of(t[sel], edges), counts[sel])
    if acc is None:
        return None
    out = {k: np.full(n, np.nan) for k in LAT_STATS}
    ios = acc.sum(axis=1)
    for i in np.flatnonzero(ios > 0):
        s = fhist.stats(acc[i], ns_per_unit=ns_per_unit)
        if s is None:  # not reached: the interval holds I/Os
            continue
        for k in LAT_STATS:
            out[k][i] = s[k]
    return out, ios
