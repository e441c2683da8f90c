"""fio's normal (human) output: read alone like its JSON (:func:`read_normal`: each job's
report → the fields of fio's JSON, checked against the groups' "Run status" lines), and, kept
beside the logs (e.g. a ``result.txt``), for what a log import is checked against: the
version, the I/Os fio issued and the bytes it moved per direction.

fio 2.x prints ``issued : total=r=0/w=77873622/d=0``, fio 3.x ``issued rwts: total=0,5,0,0``
(one line per job, or per group with ``group_reporting``). Each group's "Run status" lines give
its bytes: ``READ: io=3777.6MB, aggrb=…`` in fio 2.x (KB/MB/GB are powers of 1024),
``WRITE: bw=…, io=131MiB (137MB), run=…`` in fio 3.x, where KiB/MiB are powers of 1024 and
kB/MB powers of 1000 (``kb_base=1000`` puts the decimal figure first: ``io=137MB (131MiB)``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import jsonout
from flashback.fio import version as fv

_ISSUED2 = re.compile(r"issued\s*:\s*total=r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED3 = re.compile(r"issued rwts?:\s*total=(\d+),(\d+)(?:,(\d+))?")
_RUN_IO = re.compile(
    r"^\s*(READ|WRITE|TRIM):.*?\bio=(\d+(?:\.\d+)?)([kKMGTP]?)(i?)B\b", re.MULTILINE
)
_POW = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def _printed_io(num: str, prefix: str, iec: str, decimal: bool) -> tuple[float, float]:
    """(bytes, rounding) of a printed ``io=`` figure (``num`` ``prefix`` ``iec`` "B"): the
    rounding is one unit of the last digit printed. fio 2.x's KB/MB and 3.x's KiB/MiB are
    1024-based, fio 3.x's kB/MB (``decimal``) 1000-based."""
    unit = (1000.0 if decimal and not iec else 1024.0) ** _POW[prefix.upper()]
    decimals = len(num.split(".")[1]) if "." in num else 0
    return float(num) * unit, unit * 10.0**-decimals


def is_normal(head: str) -> bool:
    return bool(re.search(r"\(groupid=\d+, jobs=\d+\)", head))


def printed_ios(path: Path) -> tuple[fv.Version | None, dict[str, int]]:
    """(version, ``{read_ios, write_ios, trim_ios}``) summed over the jobs a normal output
    reports; an empty dict when it reports none."""
    text = path.read_text(errors="replace")
    out: dict[str, int] = {}
    for m in list(_ISSUED2.finditer(text)) + list(_ISSUED3.finditer(text)):
        for d, g in zip(("read", "write", "trim"), m.groups(), strict=True):
            out[f"{d}_ios"] = out.get(f"{d}_ios", 0) + int(g or 0)
    return fv.parse_version(text[:4096]), out


def printed_bytes(path: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(``{read_bytes, write_bytes, trim_bytes}`` summed over the groups' "Run status" lines,
    the rounding of those printed numbers in bytes: one unit of the last digit printed); empty
    dicts when the output has no "Run status" lines."""
    text = path.read_text(errors="replace")
    v = fv.parse_version(text[:4096])
    # fio 3.x prints both kinds (KiB and kB); fio 2.x never wrote "iB"
    decimal_units = v >= fv.NANOSECONDS_FROM if v is not None else "iB" in text
    out: dict[str, float] = {}
    rounding: dict[str, float] = {}
    for m in _RUN_IO.finditer(text):
        d, num, prefix, iec = m.groups()
        printed, rounded = _printed_io(num, prefix, iec, decimal_units)
        key = f"{d.lower()}_bytes"
        out[key] = out.get(key, 0.0) + printed
        rounding[key] = rounding.get(key, 0.0) + rounded
    return out, rounding


# ---- whole reports -----------------------------------------------------------------------

_JOB = re.compile(
    r"^(?P<name>.*?): \(groupid=(?P<g>\d+), jobs=(?P<n>\d+)\): err=\s*(?P<err>-?\d+)", re.MULTILINE
)
_DIR3 = re.compile(
    r"^\s+(?P<d>read|write|trim)\s*: IOPS=[^,]+, BW=[^(]*\([^)]*\)\((?P<io>[\d.]+)(?P<p>[kKMGTP]?)"
    r"(?P<i>i?)B/(?P<rt>\d+)msec\)"
)
_DIR2 = re.compile(
    r"^\s+(?P<d>read|write|trim)\s*: io=(?P<io>[\d.]+)(?P<p>[kKMGTP]?)(?P<i>i?)B, .*?"
    r"runt=\s*(?P<rt>\d+)msec"
)
_LAT = re.compile(
    r"^\s+(?P<k>clat|lat|slat) \((?P<u>nsec|usec|msec)\): min=\s*[\d.]+[kKMG]?, "
    r"max=\s*(?P<max>[\d.]+)(?P<mx>[kKMG]?), avg=\s*(?P<avg>[\d.]+)"
)
_PCT_HEAD = re.compile(r"^\s+(?P<k>clat|lat) percentiles \((?P<u>nsec|usec|msec)\):")
_PCT = re.compile(r"(\d+\.\d+)th=\[\s*(\d+)\]")
_GROUP = re.compile(r"^Run status group (\d+) \(all jobs\):", re.MULTILINE)
_UNIT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
_PCT_KEYS = {"50.00": "50.000000", "99.00": "99.000000", "99.90": "99.900000"}


def run_count(text: str) -> int:
    """How many fio runs a normal output holds: each run prints "Run status group 0" once."""
    return len(re.findall(r"^Run status group 0 \(all jobs\):", text, re.MULTILINE))


def read_normal(
    path: Path, declared: fv.Version | None
) -> tuple[list[dict[str, Any]], fv.Version, dict]:
    """fio's normal output of one run → one row per group, as :func:`jsonout.whole_run_rows`
    makes of its JSON (I/Os from each job's ``issued`` line, bytes from them and the job's
    fixed block size — from its header line, or the power of two the printed ``io=`` gives —
    or else from the printed ``io=`` (3 significant digits in fio 3.x), runtimes,
    latency means, maxima and p50/p99/p99.9), the version and the document built.

    Raises:
        ImportFormatError: no job report, a job report without its ``issued`` line, or
            several runs pasted into one file (named by count).
        FioFormatError: a group's jobs do not add up to its "Run status" line, or a group
            line has no job reports; the version contradicts ``declared``.
    """
    text = path.read_text(errors="replace")
    runs = run_count(text)
    if runs > 1:
        raise ImportFormatError(
            f"{path}: holds {runs} fio runs one after another (each prints its own "
            "'Run status group 0'); split it into one file per run and read each"
        )
    v = fv.parse_version(text[: text.find("(groupid=")] if "(groupid=" in text else text)
    if declared is not None and v is not None and declared != v:
        raise FioFormatError(
            f"{path}: says {fv.show(v)} but fio_version={fv.show(declared)} was given"
        )
    v = v or declared
    if v is None:
        raise FioFormatError(f"{path}: the normal output names no fio version; pass fio_version=")
    decimal = v >= fv.NANOSECONDS_FROM
    bs = _block_sizes(text)
    starts = [m for m in _JOB.finditer(text)]
    if not starts:
        raise ImportFormatError(f"{path}: no fio job report ('name: (groupid=…, jobs=…)') found")
    end_jobs = _GROUP.search(text)
    jobs = []
    for k, m in enumerate(starts):
        stop = (
            starts[k + 1].start()
            if k + 1 < len(starts)
            else (end_jobs.start() if end_jobs else len(text))
        )
        jobs.append(_job(path, m, text[m.start() : stop], bs, decimal))
    doc = {"fio version": fv.show(v), "jobs": jobs}
    _check_groups(path, text, jobs, decimal)
    rows = jsonout.whole_run_rows(doc, path, max(v, fv.NANOSECONDS_FROM))
    return rows, v, doc


def _block_sizes(text: str) -> dict[str, tuple[int, int, int] | None]:
    """Each job name's fixed block size per direction from fio's header lines
    (``j: (g=0): rw=…, bs=(R) 4096B-4096B, (W) …`` in fio 3.x, ``bs=4K-4K/4K-4K/4K-4K`` in
    2.x), ``None`` for a direction whose size is a range."""
    out: dict[str, tuple[int, int, int] | None] = {}
    for m in re.finditer(
        r"^(?P<name>.*?): \(g=\d+\): rw=\w+, bs=(?P<bs>.*?), ioengine", text, re.M
    ):
        ranges = re.findall(r"(\d+(?:\.\d+)?)([KMG]?)i?B?-(\d+(?:\.\d+)?)([KMG]?)i?B?", m["bs"])
        sizes = []
        for lo, lp, hi, hp in ranges[:3]:
            a, b = _size(lo, lp), _size(hi, hp)
            sizes.append(a if a == b else None)
        out[m["name"]] = tuple(sizes) if len(sizes) == 3 else None  # type: ignore[assignment]
    return out


def _size(num: str, prefix: str) -> int:
    return int(round(float(num) * 1024 ** "_KMG".index(prefix or "_")))


def _power_of_two(printed: float, ios: int, rounding: float) -> int | None:
    """The block size of a job whose header line is missing (fio writes only the last job's
    to ``--output``): the power of two that ``ios`` I/Os of it add up to the printed ``io=``
    with, within the printed rounding; ``None`` when none does."""
    if ios <= 0 or printed <= 0:
        return None
    bs = 2 ** round(math.log2(printed / ios))
    return bs if abs(bs * ios - printed) <= rounding / 2 + 1 else None


def _num(x: str, suffix: str) -> float:
    return float(x) * _SUFFIX[suffix]


def _job(path: Path, m: re.Match, block: str, bs: dict, decimal: bool) -> dict:
    """One job report → a fio-3.x-layout JSON job (bytes, ns, ``percentile`` keys)."""
    name = m["name"].strip()
    job: dict[str, Any] = {"jobname": name, "groupid": int(m["g"]), "error": int(m["err"])}
    issued = _ISSUED3.search(block) or _ISSUED2.search(block)
    if issued is None:
        raise ImportFormatError(
            f"{path}: job {name!r} (group {m['g']}) has no 'issued' line; the report is "
            "cut short, pass fio's whole output"
        )
    counts = [int(g or 0) for g in issued.groups()]
    sizes = bs.get(name)
    lines = block.splitlines()
    cur: dict[str, Any] | None = None
    pct: dict | None = None
    for line in lines:
        dm = _DIR3.match(line) or _DIR2.match(line)
        if dm:
            d = DIRS.index(dm["d"])
            printed, rounding = _printed_io(dm["io"], dm["p"], dm["i"], decimal)
            fixed = sizes[d] if sizes else _power_of_two(printed, counts[d], rounding)
            cur = {
                "total_ios": counts[d],
                "io_bytes": counts[d] * fixed if fixed else int(round(printed)),
                "runtime": int(dm["rt"]),
            }
            job[dm["d"]] = cur
            pct = None
            continue
        if cur is None:
            continue
        lm = _LAT.match(line)
        if lm:
            unit = _UNIT_NS[lm["u"]]
            cur[f"{lm['k']}_ns"] = {
                "mean": float(lm["avg"]) * unit,
                "max": _num(lm["max"], lm["mx"]) * unit,
                "N": cur["total_ios"],
            }
            pct = None
            continue
        ph = _PCT_HEAD.match(line)
        if ph:
            block_ = cur.setdefault(f"{ph['k']}_ns", {"N": cur["total_ios"]})
            pct = block_.setdefault("percentile", {})
            pct["_unit"] = _UNIT_NS[ph["u"]]
            continue
        if pct is not None and line.lstrip().startswith("|"):
            for q, val in _PCT.findall(line):
                if q in _PCT_KEYS:
                    pct[_PCT_KEYS[q]] = float(val) * pct["_unit"]
        elif pct is not None:
            pct = None
    _finish_dirs(path, name, job, counts)
    return job


def _finish_dirs(path: Path, name: str, job: dict[str, Any], counts: list[int]) -> None:
    """Drops the percentile unit markers; a direction fio issued I/Os in but printed no line
    for is an :class:`ImportFormatError`."""
    for d in DIRS:
        x = job.get(d)
        for key in ("clat_ns", "lat_ns", "slat_ns"):
            if isinstance(x, dict) and isinstance(x.get(key), dict):
                x[key].get("percentile", {}).pop("_unit", None)
        if x is None and counts[DIRS.index(d)]:
            raise ImportFormatError(
                f"{path}: job {name!r} issued {counts[DIRS.index(d)]} {d}s but prints no "
                f"{d} line; pass fio's whole output"
            )


DIRS = ("read", "write", "trim")


def _check_groups(path: Path, text: str, jobs: list[dict], decimal: bool) -> None:
    """Each group's jobs against its "Run status" line: the bytes within the printed
    rounding, and no group line without job reports.

    Raises:
        FioFormatError: a group disagrees, or has no job reports.
    """
    heads = list(_GROUP.finditer(text))
    for k, h in enumerate(heads):
        g = int(h.group(1))
        body = text[h.end() : heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        mine = [j for j in jobs if j["groupid"] == g]
        if not mine:
            raise FioFormatError(
                f"{path}: 'Run status group {g}' has no job reports above it; the output is "
                "cut, pass fio's whole output"
            )
        for m in _RUN_IO.finditer(body):
            d, num, prefix, iec = m.groups()
            want, rounding = _printed_io(num, prefix, iec, decimal)
            got = sum(int((j.get(d.lower()) or {}).get("io_bytes", 0)) for j in mine)
            tol = rounding + 0.001 * want
            if abs(got - want) > tol:
                raise FioFormatError(
                    f"{path}: group {g}'s jobs moved {got} {d.lower()} bytes but its Run "
                    f"status line says io={num}{prefix}{iec}B; job reports are missing or "
                    "the output is edited"
                )
