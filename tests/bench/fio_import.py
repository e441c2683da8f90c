"""fio import speed and memory: ``fb.read_fio`` on per-I/O latency logs of 500 k and 5 M lines
vs ``pl.read_csv`` of the same file (the floor: polars parsing the integers and nothing
else). Target (issue 29.4): time and peak memory within 1.2x of ``pl.read_csv``.

    .venv/bin/python tests/bench/fio_import.py [--lines 500000 5000000] [--pairs 5]

The logs are written by the real fio (``ioengine=null``, per-I/O ``write_lat_log``, one line
per I/O in fio 3.x's layout ``time, value, ddir, bs, prio``), so the parser sees what users
have. Times are medians of interleaved pairs (each pair runs both readers back to back, in
alternating order) with the load average printed; memory is each reader's peak RSS above the
RSS it started from, in a fresh child process.

Measured (issue 29, session 21, load 0.3–1.2, 5 pairs): ``pl.read_csv`` reads on both CPUs here
(CPU ~1.7× its wall time) and ``fb.read_fio`` on one. Before that session's parser (291 million
instructions for the 500k-line log, cachegrind): 1.43, 1.44 and 0.93× at 500k lines in three
runs, ``fb.read_fio``'s own median 46, 46 and 30 ms in streaks of either; 0.77, 0.93, 1.00× at
5M. After (226 million): 1.00, 1.20, 1.20× and 0.86, 0.91, 0.86×; memory 0.38× and 0.32×.
Reading the log in two parts on two threads was tried and not kept: no faster here (15–25 ms
against 14–18 ms for one, best of 3), while polars' two threads gain ~1.7×.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

import flashback as fb


def make_log(tmp: Path, lines: int) -> Path:
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed (apt-get install fio)")
    subprocess.run(
        [
            "fio", "--name=b", "--ioengine=null", "--rw=randwrite", "--bs=4k",
            f"--size={lines * 4}k", f"--write_lat_log={tmp / 'big'}", "--output=/dev/null",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    for extra in ("big_lat.1.log", "big_slat.1.log"):
        (tmp / extra).unlink(missing_ok=True)
    return tmp / "big_clat.1.log"


def _csv(log: Path) -> None:
    pl.read_csv(log, has_header=False)


def _fio(log: Path) -> None:
    fb.read_fio(log, fio_version="3.33")


READERS = {"read_csv": _csv, "read_fio": _fio}


def _timed(fn, log: Path) -> tuple[float, float]:
    """(wall s, CPU s of every thread of this process)."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn(log)
    return time.perf_counter() - t0, time.process_time() - c0


def _peak_mb(reader: str, log: Path) -> float:
    """Peak RSS (MB) a reader adds in a fresh child process (after imports)."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", reader, str(log)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def _child(reader: str, log: Path) -> None:
    import flashback.fio.read  # noqa: F401  (import cost is not the reader's)

    # reset the kernel's RSS high-water mark, so VmHWM is this reader's peak alone
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_mb("VmRSS")
    READERS[reader](log)
    print(_status_mb("VmHWM") - before)


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    raise SystemExit(f"no {field} in /proc/self/status")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, nargs="+", default=[500_000, 5_000_000])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        _child(a.child[0], Path(a.child[1]))
        return {}
    results = {}
    for lines in a.lines:
        with tempfile.TemporaryDirectory() as d:
            log = make_log(Path(d), lines)
            n = sum(1 for _ in log.open("rb"))
            _fio(log)  # warm both paths
            _csv(log)
            ratios, cpu_ratios, tc, tf = [], [], [], []
            for k in range(a.pairs):
                order = ("read_csv", "read_fio") if k % 2 == 0 else ("read_fio", "read_csv")
                got = {r: _timed(READERS[r], log) for r in order}
                tc.append(got["read_csv"][0])
                tf.append(got["read_fio"][0])
                ratios.append(got["read_fio"][0] / got["read_csv"][0])
                cpu_ratios.append(got["read_fio"][1] / got["read_csv"][1])
            mem_csv = _peak_mb("read_csv", log)
            mem_fio = _peak_mb("read_fio", log)
        load = os.getloadavg()[0]
        ratio = statistics.median(ratios)
        print(
            f"\n== fio import: {n} lines of a per-I/O clat log ({a.pairs} interleaved pairs, load {load:.1f})"
        )
        print(
            f"  pl.read_csv        {statistics.median(tc) * 1e3:8.1f} ms   peak +{mem_csv:7.1f} MB"
        )
        print(
            f"  fb.read_fio        {statistics.median(tf) * 1e3:8.1f} ms   peak +{mem_fio:7.1f} MB"
            f"   ({ratio:.2f}x time, {statistics.median(cpu_ratios):.2f}x CPU, "
            f"{mem_fio / mem_csv:.2f}x memory of pl.read_csv; target 1.2x)"
        )
        results[str(lines)] = {
            "lines": n,
            "read_csv_s": statistics.median(tc),
            "read_fio_s": statistics.median(tf),
            "ratio": ratio,
            "ratios": ratios,
            "cpu_ratio": statistics.median(cpu_ratios),
            "peak_mb_read_csv": mem_csv,
            "peak_mb_read_fio": mem_fio,
            "memory_ratio": mem_fio / mem_csv,
            "load": load,
        }
    return results


if __name__ == "__main__":
    main()
