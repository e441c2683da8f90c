"""fio terse (``--minimal``, ``--output-format=terse``) v2/v3/v4/v5 lines → whole-run rows.

A line is ``version;fio-X.Y;jobname;groupid;error`` (v2: ``2;jobname;groupid;error``, no fio
version) then one block per direction (v3: read, write; v2/v4/v5: read, write, trim):
``kb; bw_KiB/s; iops; runtime_ms; slat(min,max,mean,dev);
clat(min,max,mean,dev); 20 clat percentiles "P%=V"; lat(min,max,mean,dev); bw(min,max,agg%,
mean,dev)`` — 41 fields, plus ``bw_samples`` and ``iops(min,max,mean,dev,samples)`` in v5 (47).
Latencies in µs in every version. Terse gives no I/O count: it is ``iops × runtime``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import version as fv

_LINE = re.compile(r"^(\d+);fio-")
#: v2 names no fio version: ``2;jobname;groupid;error;read kb;bw;iops;runtime;…``
_LINE2 = re.compile(r"^(2);[^;\n]*;\d+;\d+;\d+;\d+;\d+(?:\.\d+)?;\d+;")
_BLOCK = {
    2: (("read", "write", "trim"), 41),
    3: (("read", "write"), 41),
    4: (("read", "write", "trim"), 41),
    5: (("read", "write", "trim"), 47),
}


def is_terse(head: str) -> bool:
    return any(_LINE.match(line) or _LINE2.match(line) for line in head.splitlines())


def read_terse(
    path: Path, declared: fv.Version | None
) -> tuple[list[dict[str, Any]], fv.Version | None]:
    """Terse lines of a file (other lines skipped) → one row per fio group.

    Raises:
        ImportFormatError: an unsupported terse version or a short line (names the line).
        FioFormatError: the line's fio version contradicts ``declared``, or its KiB, runtime
            and bw disagree.
    """
    groups: dict[int, list[dict[str, Any]]] = {}
    version = None
    for lineno, tv, f in _lines(path):
        if tv not in _BLOCK:
            raise ImportFormatError(
                f"{path} line {lineno}: terse version {tv}; flashback reads versions 2, 3, 4 and 5"
            )
        dirs, width = _BLOCK[tv]
        if len(f) < 5 + width * len(dirs):
            raise ImportFormatError(
                f"{path} line {lineno}: {len(f)} fields is too few for terse version {tv}"
            )
        for k, d in enumerate(dirs):
            head = f[5 + k * width : 5 + k * width + 4]
            if not all(re.fullmatch(r"\d+(?:\.\d+)?", x) for x in head):
                raise ImportFormatError(
                    f"{path} line {lineno}: the {d} block starts with {';'.join(head)!r}, not "
                    "KiB;bw;iops;runtime; output with unified_rw_reporting=mixed holds one "
                    "block for all directions, which cannot be split (rerun with "
                    "unified_rw_reporting=none or both)"
                )
        v = fv.parse_version(f[1])
        if declared is not None and v is not None and v != declared:
            raise FioFormatError(
                f"{path} line {lineno}: the line says {fv.show(v)} but fio_version="
                f"{fv.show(declared)} was given"
            )
        version = v or declared
        job: dict[str, Any] = {"name": f[2]}
        for k, d in enumerate(dirs):
            b = f[5 + k * width : 5 + (k + 1) * width]
            kib, bw, iops, runtime_ms = int(b[0]), int(b[1]), float(b[2]), int(b[3])
            if runtime_ms > 0 and abs(kib * 1000 / runtime_ms - bw) > 1 + 0.002 * bw:
                raise FioFormatError(
                    f"{path} line {lineno}: {d} {kib} KiB in {runtime_ms} ms disagrees with the "
                    f"bw={bw} KiB/s on the same line"
                )
            pct = dict(p.split("%=") for p in b[12:32] if "%=" in p)
            job[d] = {
                "bytes": kib * 1024,
                "ios": round(iops * runtime_ms / 1000),
                "runtime_ms": runtime_ms,
                "clat": _lat(b[8:12], pct),
                "lat": _lat(b[32:36], {}),
            }
        groups.setdefault(int(f[3]), []).append(job)
    if not groups:
        raise ImportFormatError(f"{path}: no terse lines (N;fio-X.Y;...) found")
    return _group_rows(groups), version


def _group_rows(groups: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Jobs by fio group → one row per group, in group order (each group's runtime its
    slowest job's)."""
    rows, t = [], 0.0
    for _, jobs in sorted(groups.items()):
        runtime_s = max(j[d]["runtime_ms"] for j in jobs for d in j if d != "name") / 1000.0
        runtime_s = max(runtime_s, 1e-9)
        t += runtime_s
        row: dict[str, Any] = {"t_s": t, "interval_s": runtime_s}
        for d in ("read", "write", "trim"):
            ios = sum(j[d]["ios"] for j in jobs if d in j)
            row[f"{d}_ios"] = ios
            row[f"{d}_bytes"] = sum(j[d]["bytes"] for j in jobs if d in j)
            row[f"{d}_iops"] = ios / runtime_s
            if d != "trim":
                row[f"{d}_mbps"] = row[f"{d}_bytes"] / runtime_s / 1e6
                for key in ("lat", "clat"):
                    s = jobs[0][d][key] if len(jobs) == 1 and ios else dict.fromkeys(_STATS)
                    for k in _STATS:
                        row[f"{d}_{key}_{k}_us"] = s[k]
        row["step"] = ",".join(dict.fromkeys(j["name"] for j in jobs))
        rows.append(row)
    return rows


_STATS = ("mean", "p50", "p99", "p999", "max")


def _lat(block: list[str], pct: dict[str, str]) -> dict[str, float | None]:
    """(min, max, mean, dev) in µs and percentiles ``{"99.000000": "4014"}`` → stats."""
    out: dict[str, float | None] = {"mean": float(block[2]), "max": float(block[1])}
    for k, key in (("p50", "50.000000"), ("p99", "99.000000"), ("p999", "99.900000")):
        out[k] = float(pct[key]) if key in pct else None
    return out


def _lines(path: Path) -> Iterator[tuple[int, int, list[str]]]:
    """(line number, terse version, fields) of each terse line of a file, other lines
    skipped; a v2 line gets an empty field where v3+ print the fio version, so every
    version's header is ``version;fio;jobname;groupid;error``."""
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        m = _LINE.match(line) or _LINE2.match(line)
        if m:
            f = line.strip().split(";")
            if m.group(1) == "2":
                f.insert(1, "")
            yield lineno, int(m.group(1)), f


def job_errors(path: Path) -> list[dict[str, Any]]:
    """``{"jobname", "error"}`` of each terse line of a file (the header's error field: the
    errno fio stopped the job with, 0 when it ran to the end)."""
    return [
        {"jobname": f[2], "error": int(f[4]) if f[4].isdigit() else 0} for _, _, f in _lines(path)
    ]
