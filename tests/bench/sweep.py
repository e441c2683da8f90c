"""Sweep: the same OP x GC jobs one after another in this process, on a local process pool and
on a ``dask.distributed.LocalCluster``; wall time and speed-up, and a check that all three give
identical captures.

    .venv/bin/python tests/bench/sweep.py [--scale 1/128] [--fills 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time

import flashback as fb


def jobs(scale: str, fills: float) -> list[fb.Job]:
    capacity = fb.Target(f"sim:generic?scale={scale}").size_bytes
    w = fb.Workload(
        rw="randwrite",
        bs="4k",
        iodepth=32,
        written=int(fills * capacity),
        random="uniform",
        seed=1,
        interval=0.25,
    )
    return [
        fb.Job(f"sim:generic?scale={scale}&op={op}&gc={gc}", workload=w)
        for op in (0.07, 0.15, 0.28, 0.5)
        for gc in ("greedy", "fifo")
    ]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", default="1/128")
    ap.add_argument("--fills", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    js = jobs(a.scale, a.fills)
    print(
        f"\n== sweep: {len(js)} jobs (OP x GC, sim:generic scale {a.scale}, {a.fills} fills of "
        f"4 KiB random writes), {a.workers} workers, {os.cpu_count()} CPUs"
    )
    t0 = time.monotonic()
    serial = [j.run() for j in js]
    t_serial = time.monotonic() - t0
    local = fb.sweep(js, max_workers=a.workers)
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=a.workers, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        t0 = time.monotonic()
        dask = fb.sweep(js, client)
        t_dask_total = time.monotonic() - t0
    same = all(
        x.intervals.equals(y.intervals) and x.intervals.equals(z.intervals)
        for x, y, z in zip(serial, local.captures, dask.captures, strict=True)
    )
    out = {
        "jobs": len(js),
        "serial_s": round(t_serial, 2),
        "local_pool_s": round(local.elapsed_s, 2),
        "dask_localcluster_s": round(t_dask_total, 2),
        "identical": same,
    }
    print(f"  one process, one job after another : {t_serial:7.2f} s")
    print(
        f"  fb.sweep, local process pool       : {local.elapsed_s:7.2f} s "
        f"(x{t_serial / local.elapsed_s:.2f}; includes starting the workers)"
    )
    print(
        f"  fb.sweep, dask LocalCluster        : {t_dask_total:7.2f} s "
        f"(x{t_serial / t_dask_total:.2f}; cluster already up)"
    )
    print(f"  captures identical in all three    : {same}")
    return out


if __name__ == "__main__":
    main()
