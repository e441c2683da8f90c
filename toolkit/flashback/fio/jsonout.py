"""fio ``--output-format=json`` / ``json+`` → whole-run rows, and ``--status-interval``
streams (several JSON documents in one file) → a time series. ``--client`` output
(``client_stats`` per host) is read as the hosts' jobs.

Version rules (see :mod:`flashback.fio.version`): fio 2.x gives ``io_bytes`` in KiB and
latency blocks ``clat``/``lat`` in µs; fio 3.x gives bytes and ``clat_ns``/``lat_ns``. Rates
use each direction's ``runtime`` (ms), which fio keeps per group as the longest job's: not
``elapsed`` (includes set-up) nor ``job_runtime`` (summed over a group's jobs from 3.8).
Latency blocks before fio 3.18 carry no ``N``: the count is the direction's ``total_ios``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flashback.errors import FioFormatError
from flashback.fio import hist as fhist
from flashback.fio import version as fv

# the documents' loading and checks, re-exported where they were before the split
from flashback.fio.jsondoc import ALL_CLIENTS as ALL_CLIENTS
from flashback.fio.jsondoc import DIRS as DIRS
from flashback.fio.jsondoc import doc_version as doc_version
from flashback.fio.jsondoc import fields_of as fields_of
from flashback.fio.jsondoc import job_failures as job_failures
from flashback.fio.jsondoc import load_documents as load_documents

LAT_STATS = ("mean", "p50", "p99", "p999", "max")
_PCT = {"p50": "50.000000", "p99": "99.000000", "p999": "99.900000"}


def _bins_ns(x: dict, key: str, v: fv.Version) -> dict[float, float] | None:
    """A json+ latency block's ``bins`` as ``{value in ns: count}``, or ``None``."""
    block = x.get(f"{key}_ns") if v >= fv.NANOSECONDS_FROM else x.get(key)
    bins = block.get("bins") if isinstance(block, dict) else None
    if not bins:
        return None
    unit = fv.latency_unit_ns(v)
    return {float(k) * unit: float(c) for k, c in bins.items()}


def _add_bins(a: dict[float, float] | None, b: dict[float, float] | None, sign: float = 1.0):
    out = dict(a or {})
    for k, c in (b or {}).items():
        out[k] = out.get(k, 0.0) + sign * c
    return out


def _latency(x: dict, key: str, v: fv.Version, total_ios: int) -> dict[str, float | None]:
    """One latency block (``clat``/``lat``) → mean/p50/p99/p999/max in µs, null without I/O."""
    block = x.get(f"{key}_ns") if v >= fv.NANOSECONDS_FROM else x.get(key)
    out: dict[str, float | None] = dict.fromkeys(LAT_STATS)
    if not isinstance(block, dict):
        return out
    n = block.get("N", total_ios)
    if not n:
        return out
    unit = fv.latency_unit_ns(v) / 1000.0
    out["mean"] = float(block["mean"]) * unit if "mean" in block else None
    out["max"] = float(block["max"]) * unit if "max" in block else None
    bins = block.get("bins")
    if bins:
        s = fhist.stats_from_bins(bins, ns_per_unit=fv.latency_unit_ns(v))
        for k in ("p50", "p99", "p999"):
            out[k] = s[k] if s else None
    else:
        pct = block.get("percentile") or {}
        for k, key_ in _PCT.items():
            out[k] = float(pct[key_]) * unit if key_ in pct else None
    return out


def direction_totals(x: dict, v: fv.Version, path: Path, job: str) -> tuple[int, int, float]:
    """(I/Os, bytes, runtime ms) of one direction block, checked against fio's own ``bw``.

    Raises:
        FioFormatError: the bytes, runtime and ``bw`` fio printed disagree beyond rounding.
    """
    ios = int(x.get("total_ios", 0))
    raw = int(x.get("io_bytes", 0))
    if ios < 0 or raw < 0 or ios >= 2**63 or raw >= 2**63:
        raise FioFormatError(
            f"{path} job {job!r}: total_ios={ios}, io_bytes={raw} is negative or a wrapped "
            "negative; the file is corrupt"
        )
    nbytes = raw if v >= fv.NANOSECONDS_FROM else raw * 1024
    if "io_kbytes" in x and abs(nbytes / 1024 - float(x["io_kbytes"])) > 1:
        raise FioFormatError(
            f"{path} job {job!r}: io_bytes {raw} and io_kbytes {x['io_kbytes']} disagree for "
            f"{fv.show(v)}; is the fio version right?"
        )
    runtime_ms = float(x.get("runtime", 0))
    if runtime_ms > 0 and "bw" in x:
        bw_kib = nbytes / 1024 / (runtime_ms / 1000)
        if abs(bw_kib - float(x["bw"])) > 1 + 0.002 * float(x["bw"]):
            raise FioFormatError(
                f"{path} job {job!r}: {nbytes} bytes in {runtime_ms:g} ms is {bw_kib:.0f} KiB/s "
                f"but fio printed bw={x['bw']}; the file is inconsistent"
            )
    return ios, nbytes, runtime_ms


def whole_run_rows(doc: dict, path: Path, v: fv.Version) -> list[dict[str, Any]]:
    """One row per fio group (jobs of one ``groupid`` run together; stonewalled groups one
    after another): I/Os and bytes summed, interval = the longest direction runtime."""
    groups: dict[int, list[dict]] = {}
    for j in doc["jobs"]:
        groups.setdefault(int(j.get("groupid", 0)), []).append(j)
    rows, t = [], 0.0
    for _, jobs in sorted(groups.items()):
        r: dict[str, Any] = {}
        runtime_s = 0.0
        lat_parts: dict[str, list] = {}
        for d in DIRS:
            ios = nbytes = 0
            for j in jobs:
                x = j.get(d) or {}
                i, b, rt = direction_totals(x, v, path, str(j.get("jobname")))
                ios, nbytes = ios + i, nbytes + b
                runtime_s = max(runtime_s, rt / 1000.0)
                if d != "trim" and i:
                    for key in ("lat", "clat"):
                        lat_parts.setdefault(f"{d}_{key}", []).append(
                            (i, _latency(x, key, v, i), _bins_ns(x, key, v))
                        )
            r[f"{d}_ios"], r[f"{d}_bytes"] = ios, nbytes
        rows.append((r, runtime_s, lat_parts, jobs))
    out = []
    for r, runtime_s, lat_parts, jobs in rows:
        if runtime_s <= 0 and any(r[f"{d}_ios"] for d in DIRS):
            failed = "; ".join(job_failures({"jobs": jobs}))
            raise FioFormatError(
                f"{path}: fio counted {sum(r[f'{d}_ios'] for d in DIRS)} I/Os in no measured "
                "time (runtime 0 ms), so no rate can be given"
                + (f"; the run failed ({failed})" if failed else "")
            )
        runtime_s = max(runtime_s, 1e-9)
        t += runtime_s
        row = {"t_s": t, "interval_s": runtime_s, **r}
        for d in DIRS:
            row[f"{d}_iops"] = row[f"{d}_ios"] / runtime_s
            if d != "trim":
                row[f"{d}_mbps"] = row[f"{d}_bytes"] / runtime_s / 1e6
                for key in ("lat", "clat"):
                    merged = _merge(lat_parts.get(f"{d}_{key}", []))
                    for k in LAT_STATS:
                        row[f"{d}_{key}_{k}_us"] = merged[k]
        names = list(dict.fromkeys(str(j.get("jobname", "")) for j in jobs))
        row["step"] = ",".join(names)
        out.append(row)
    return out


def _merge(parts: list[tuple[int, dict, dict | None]]) -> dict[str, float | None]:
    """Latency stats of the jobs of a group: count-weighted mean, largest max; percentiles
    from the jobs' summed json+ bins when every job has them (one job: fio's own values)."""
    if not parts:
        return dict.fromkeys(LAT_STATS)
    if len(parts) == 1:
        return parts[0][1]
    n = sum(i for i, _, _ in parts)
    means = [(i, s["mean"]) for i, s, _ in parts if s["mean"] is not None]
    maxes = [s["max"] for _, s, _ in parts if s["max"] is not None]
    out = dict.fromkeys(LAT_STATS)
    if means and len(means) == len(parts):
        out["mean"] = sum(i * m for i, m in means) / n
    if maxes and len(maxes) == len(parts):
        out["max"] = max(maxes)
    if all(b for _, _, b in parts):
        merged: dict[float, float] = {}
        for _, _, b in parts:
            merged = _add_bins(merged, b)
        st = fhist.stats_from_bins({str(k): c for k, c in merged.items()}, ns_per_unit=1.0)
        for k in ("p50", "p99", "p999"):
            out[k] = st[k] if st else None
    return out


def stream_rows(docs: list[dict], path: Path, v: fv.Version) -> list[dict[str, Any]]:
    """A ``--status-interval`` stream: each document holds cumulative totals; row k is the
    difference between documents k and k−1 (time from the jobs' runtime). Latency means come
    from the cumulative means and counts. Percentiles need json+ (the difference of the
    cumulative bins, exact to fio's bucket); without bins they are null. Max is the new
    cumulative max when it rose in the interval, else the highest bucket of the difference."""
    cum = []
    for doc in docs:
        c: dict[str, Any] = {"t_ms": 0.0}
        for j in doc["jobs"]:
            rt = 0.0
            for d in DIRS:
                x = j.get(d) or {}
                i, b, drt = direction_totals(x, v, path, str(j.get("jobname")))
                c[f"{d}_ios"] = c.get(f"{d}_ios", 0) + i
                c[f"{d}_bytes"] = c.get(f"{d}_bytes", 0) + b
                rt = max(rt, drt)
                if d != "trim":
                    for key in ("lat", "clat"):
                        st = _latency(x, key, v, i)
                        m = st["mean"]
                        c[f"{d}_{key}_sum"] = c.get(f"{d}_{key}_sum", 0.0) + (
                            m * i if m is not None else np.nan
                        )
                        c[f"{d}_{key}_max"] = max(c.get(f"{d}_{key}_max", 0.0), st["max"] or 0.0)
                        bins = _bins_ns(x, key, v)
                        c[f"{d}_{key}_bins"] = (
                            _add_bins(c.get(f"{d}_{key}_bins"), bins) if bins is not None else None
                        )
            # per-direction runtimes are per group the longest job's; job_runtime (3.8+) is
            # summed over a group's jobs, so it is only the fallback
            c["t_ms"] = max(c["t_ms"], rt or float(j.get("job_runtime") or 0.0))
        cum.append(c)
    rows, prev = [], {k: (None if k.endswith("_bins") else 0.0) for k in cum[0]}
    for c in cum:
        dt_s = (c["t_ms"] - prev["t_ms"]) / 1000.0
        if dt_s <= 0:
            prev = c
            continue
        row: dict[str, Any] = {"t_s": c["t_ms"] / 1000.0, "interval_s": dt_s}
        for d in DIRS:
            ios = int(c[f"{d}_ios"] - prev[f"{d}_ios"])
            nbytes = int(c[f"{d}_bytes"] - prev[f"{d}_bytes"])
            if ios < 0 or nbytes < 0:
                raise FioFormatError(
                    f"{path}: the status-interval totals go down (document at "
                    f"{c['t_ms']:g} ms); the stream mixes runs"
                )
            row[f"{d}_ios"], row[f"{d}_bytes"] = ios, nbytes
            row[f"{d}_iops"] = ios / dt_s
            if d != "trim":
                row[f"{d}_mbps"] = nbytes / dt_s / 1e6
                for key in ("lat", "clat"):
                    s = c[f"{d}_{key}_sum"] - prev[f"{d}_{key}_sum"]
                    row[f"{d}_{key}_mean_us"] = s / ios if ios and np.isfinite(s) else None
                    row.update(_interval_tail(c, prev, f"{d}_{key}", ios))
        row["step"] = "fio"
        rows.append(row)
        prev = c
    return rows


def _interval_tail(c: dict, prev: dict, name: str, ios: int) -> dict[str, float | None]:
    """p50/p99/p999/max of one stream interval from cumulative json+ bins and maxima."""
    out: dict[str, float | None] = {f"{name}_{k}_us": None for k in ("p50", "p99", "p999", "max")}
    if not ios:
        return out
    mx = c[f"{name}_max"] if c[f"{name}_max"] > prev[f"{name}_max"] else None
    if c.get(f"{name}_bins") is not None:
        diff = _add_bins(c[f"{name}_bins"], prev.get(f"{name}_bins"), -1.0)
        st = fhist.stats_from_bins({str(k): n for k, n in diff.items() if n > 0}, ns_per_unit=1.0)
        if st:
            if mx is None:
                mx = min(st["max"], c[f"{name}_max"] or st["max"])
            for k in ("p50", "p99", "p999"):
                out[f"{name}_{k}_us"] = min(st[k], mx)
    out[f"{name}_max_us"] = mx
    return out


def printed_totals(
    doc: dict, path: Path, v: fv.Version, *, prefixes: set[str] | None
) -> dict[str, int]:
    """I/Os and bytes per direction that fio printed, summed over the jobs that wrote logs
    named with one of ``prefixes`` (all jobs when none names its logs)."""
    jobs = doc["jobs"]
    if prefixes:
        named = [
            j
            for j in jobs
            if any(
                Path(str((j.get("job options") or {}).get(o, ""))).name in prefixes
                for o in ("write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log")
            )
        ]
        jobs = named or jobs
    out: dict[str, int] = {}
    for j in jobs:
        for d in DIRS:
            i, b, _ = direction_totals(j.get(d) or {}, v, path, str(j.get("jobname")))
            out[f"{d}_ios"] = out.get(f"{d}_ios", 0) + i
            out[f"{d}_bytes"] = out.get(f"{d}_bytes", 0) + b
    return out


_EPOCH_OPTIONS = ("log_unix_epoch", "log_alternate_epoch")


def epoch_logs(doc: dict) -> bool | None:
    """Whether the run's logs count time from a clock's epoch (``log_unix_epoch=1`` or
    ``log_alternate_epoch=1`` in its global or job options); ``None`` when the document
    lists no options."""
    found = [doc.get("global options")] + [j.get("job options") for j in doc["jobs"]]
    sections = [s for s in found if isinstance(s, dict)]
    if not sections:
        return None
    return any(
        str(s.get(o, "0")).strip().lower() not in ("0", "false", "no", "off", "")
        for s in sections
        for o in _EPOCH_OPTIONS
    )
