"""fio import speed: ``fb.read_fio`` on a 500k-line per-I/O latency log vs ``pl.read_csv`` of
the same file (the floor: polars parsing the integers and nothing else).

    .venv/bin/python tests/bench/fio_import.py [--lines 500000] [--reps 5]

The log is written by the real fio (``ioengine=null``, per-I/O ``write_lat_log``, one line per
I/O in fio 3.x's layout ``time, value, ddir, bs, prio``), so the parser sees what users have.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
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
    return tmp / "big_clat.1.log"


def _time(fn, reps: int) -> float:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        log = make_log(Path(d), a.lines)
        n = sum(1 for _ in log.open())
        t_csv = _time(lambda: pl.read_csv(log, has_header=False), a.reps)
        t_fb = _time(lambda: fb.read_fio(log, fio_version="3.33"), a.reps)
    print(f"\n== fio import: {n} lines of a per-I/O clat log (median of {a.reps})")
    print(f"  pl.read_csv        {t_csv * 1e3:8.1f} ms")
    print(f"  fb.read_fio        {t_fb * 1e3:8.1f} ms   ({t_fb / t_csv:.1f}x pl.read_csv)")
    return {"lines": n, "read_csv_s": t_csv, "read_fio_s": t_fb, "ratio": t_fb / t_csv}


if __name__ == "__main__":
    main()
