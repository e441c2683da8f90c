"""What a run's fio sample logs hold: each log's rows (one per I/O, ``log_avg_msec``
windows, or fio < 2.10's default windows) and the run's latency unit, from the fio version
when known and the logs' layouts otherwise."""

from __future__ import annotations

from flashback.errors import FioFormatError
from flashback.fio import hist as fhist
from flashback.fio import logs
from flashback.fio import version as fv


def decide_modes(
    parsed: list[logs.Log], hists: list, v: fv.Version | None
) -> tuple[fv.Version | None, float | None]:
    """Decides what each log's rows are and the run's latency unit (ns per unit, or None when
    no log needs one), from the version when known, the layout otherwise.

    Raises:
        FioFormatError: the layout contradicts the version, or the unit cannot be told.
    """
    lo: fv.Version = (0, 0)
    hi: fv.Version = (99, 0)
    why: list[str] = []
    for lg in parsed:
        if lg.t_ms.size == 0:
            continue
        lg_lo, lg_hi, lg_why = _decide_mode(lg, v)
        lo, hi = max(lo, lg_lo), min(hi, lg_hi)
        why += lg_why
    for path, (_t, _d, counts) in hists:
        h_lo, h_hi, _ = fhist.layout_version(counts.shape[1], path)
        if v is not None:
            fv.check_agrees(
                v, inferred_ok=h_lo <= v < h_hi, layout=f"{counts.shape[1]} buckets", path=path
            )
        lo, hi = max(lo, h_lo), min(hi, h_hi)
        why.append(f"{path.name}: {counts.shape[1]} histogram buckets")
    if v is None and lo >= hi:
        raise FioFormatError(
            "the logs were written by different fio versions ("
            + "; ".join(why)
            + "); they are not one run"
        )
    return _latency_unit(parsed, hists, v, lo=lo, hi=hi)


def _decide_mode(lg: logs.Log, v: fv.Version | None) -> tuple[fv.Version, fv.Version, list[str]]:
    """Sets one non-empty log's ``mode`` (and ``avg_ms``); returns the fio versions its
    layout allows, ``[lo, hi)``, and why, one line per layout seen.

    Raises:
        FioFormatError: the layout contradicts the version ``v``.
    """
    lo: fv.Version = (0, 0)
    hi: fv.Version = (99, 0)
    why: list[str] = []
    if lg.kind in ("bw", "iops") and logs.share_with_bs(lg) > 0.5:
        if _windowed_with_bs(lg, v):
            lg.mode = "default_window"
            hi = fv.WINDOWED_DEFAULT_LOGS_BEFORE
            why.append(f"{lg.path.name}: windows with bs (fio < 2.10)")
        else:
            lo = fv.WINDOWED_DEFAULT_LOGS_BEFORE
            why.append(f"{lg.path.name}: one row per I/O (fio >= 2.10)")
    elif 1.0 - logs.share_with_bs(lg) > 0.5 or lg.kind in ("bw", "iops"):
        lg.mode, lg.avg_ms = "avg", logs.window_ms(lg)
    if lg.both or logs.fio3_columns(lg):
        layout = "mean and max columns" if lg.both else "priority/issue-time columns"
        if v is not None:
            fv.check_agrees(v, inferred_ok=v >= fv.NANOSECONDS_FROM, layout=layout, path=lg.path)
        lo = max(lo, fv.NANOSECONDS_FROM)
        why.append(f"{lg.path.name}: {layout} (fio 3.x)")
    return lo, hi, why


def _windowed_with_bs(lg: logs.Log, v: fv.Version | None) -> bool:
    """Whether a bw/iops log whose rows carry a block size holds fio < 2.10's default
    windows (else one row per I/O): the version decides when known, the layout otherwise.

    Raises:
        FioFormatError: an iops log contradicts the version (per-I/O rows are 1).
    """
    if v is None:
        return logs.looks_windowed(lg)
    windowed = v < fv.WINDOWED_DEFAULT_LOGS_BEFORE
    if lg.kind == "iops" and lg.value is not None:
        ones = bool((lg.value == 1).all())
        fv.check_agrees(
            v,
            inferred_ok=windowed != ones,
            layout="one row per I/O" if ones else "one row per 500 ms window",
            path=lg.path,
        )
    return windowed


def _latency_unit(
    parsed: list[logs.Log], hists: list, v: fv.Version | None, *, lo: fv.Version, hi: fv.Version
) -> tuple[fv.Version | None, float | None]:
    """(``v``, ns per latency unit): None when no log holds latencies, else from the
    version, or from the versions ``[lo, hi)`` the layouts allow.

    Raises:
        FioFormatError: the layouts cannot tell µs (fio 2.x) from ns (fio 3.x).
    """
    needs_unit = any(lg.kind in ("lat", "clat", "slat") for lg in parsed) or bool(hists)
    if not needs_unit:
        return v, None
    if v is not None:
        return v, fv.latency_unit_ns(v)
    if lo >= fv.NANOSECONDS_FROM:
        return None, 1.0
    if hi <= fv.NANOSECONDS_FROM:
        return None, 1000.0
    raise FioFormatError(
        f"{parsed[0].path if parsed else hists[0][0]}: cannot tell µs (fio 2.x) from ns (fio 3.x) "
        "latency logs; pass fio_version= or the run's JSON/normal output with the logs"
    )
