"""Simulator benchmarks (``make bench``): NAND page operations per second on one core, the
full-scale Puget CrystalDiskMark campaign, 1.8 TB of uniform random 4 KiB writes, memory of a
256 GB drive. Prints one line per figure with its target; ``run()`` returns them as dicts.

Wall times depend on how busy the machine is; CPU seconds (user + sys of the process doing
the work) are printed beside them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH_BIN = ROOT / "native" / "target" / "release" / "examples" / "sim_bench"


def _bench_bin() -> Path:
    if not BENCH_BIN.exists():
        subprocess.run(
            [
                "cargo",
                "build",
                "--release",
                "--example",
                "sim_bench",
                "--quiet",
                "--manifest-path",
                str(ROOT / "native" / "Cargo.toml"),
            ],
            check=True,
        )
    return BENCH_BIN


def _child(args: list[str]) -> tuple[dict, float, float]:
    """Runs the Rust bench binary; returns its JSON, CPU seconds and max RSS in MiB (of that
    child alone: ``RUSAGE_CHILDREN`` would report the largest child so far)."""
    proc = subprocess.Popen([str(_bench_bin()), *args], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args, out)
    cpu = usage.ru_utime + usage.ru_stime
    return json.loads(out), cpu, usage.ru_maxrss / 1024


def page_ops_per_s() -> dict:
    """Steady-state GC on a 4 KiB-page, 7 % OP drive: every host write costs ~15 page ops."""
    spec = "generic?scale=1/16&page_size=4k&pages_per_block=128&idle_gc=off"
    r, cpu, _ = _child([spec, "60g", "32", "4k"])
    return {
        "figure": "nand_page_ops_per_s",
        "value": r["nand_ops"] / cpu,
        "wall_value": r["nand_ops_per_s"],
        "target": ">= 30e6",
        "wa": r["wa"],
        "cpu_s": cpu,
    }


def random_18t() -> dict:
    """1.8 TB of uniform random 4 KiB QD32 writes on the full-size Intel 520 120GB."""
    r, cpu, rss = _child(["intel-520-120g", "1800g", "32", "4k"])
    return {
        "figure": "random_4k_1.8TB_full_scale_s",
        "value": r["wall_s"],
        "cpu_s": cpu,
        "target": "< 90",
        "wa": r["wa"],
        "max_rss_mib": rss,
    }


def memory_256g() -> dict:
    """Peak memory of a 256 GB drive driven into GC."""
    r, cpu, rss = _child(["generic?capacity=256g", "300g", "32", "4k"])
    return {"figure": "max_rss_256GB_drive_mib", "value": rss, "target": "<= 1024", "cpu_s": cpu}


PUGET_CHILD = r"""
import json, os, sys, time
import flashback as fb
total = int(sys.argv[1]); data = sys.argv[2]
t = fb.Target("sim:intel-520-120g")
GIB = 1 << 30
size = t.size_bytes
t0 = time.perf_counter(); c0 = os.times()
loop = 0
while t.host_written_bytes < total:
    off = (loop * GIB) % (size - GIB) // GIB * GIB
    span = dict(offset=off, size=GIB, data=data)
    steps = [
        dict(rw="read", bs="1m", **span),
        dict(rw="write", bs="1m", loops=4, **span),
        dict(rw="randread", bs="512k", time="3s", **span),
        dict(rw="randwrite", bs="512k", loops=4, **span),
        dict(rw="randread", bs="4k", time="5s", **span),
        dict(rw="randwrite", bs="4k", time="5s", **span),
        dict(rw="randread", bs="4k", iodepth=32, time="5s", **span),
        dict(rw="randwrite", bs="4k", iodepth=32, time="5s", **span),
    ]
    for i, s in enumerate(steps):
        t.run(fb.Workload(**s), step=f"cdm_pass_{loop}/{i}")
    t.discard(offset=off, size=GIB)      # CrystalDiskMark deletes its file; TRIM is on
    loop += 1
c1 = os.times()
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": (c1.user - c0.user) + (c1.system - c0.system),
                  "loops": loop, "host_written_bytes": t.host_written_bytes,
                  "nand_written_bytes": t.meta["nand_written_bytes"]}))
"""


def puget_campaign(total_bytes: int = 1_800_000_000_000, data: str = "random") -> dict:
    """The Puget CDM loop (≈ 9.2 GB written per pass) until 1.8 TB, on the full-size drive."""
    out = subprocess.run(
        [sys.executable, "-c", PUGET_CHILD, str(total_bytes), data],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(out.stdout)
    return {
        "figure": "puget_cdm_1.8TB_full_scale_s",
        "value": r["wall_s"],
        "cpu_s": r["cpu_s"],
        "target": "< 60",
        "loops": r["loops"],
        "gb_per_loop": r["host_written_bytes"] / r["loops"] / 1e9,
    }


def run(which: list[str] | None = None) -> list[dict]:
    benches = {
        "page_ops": page_ops_per_s,
        "puget": puget_campaign,
        "random": random_18t,
        "memory": memory_256g,
    }
    results = []
    for name, fn in benches.items():
        if which and name not in which:
            continue
        t = time.perf_counter()
        r = fn()
        r["bench_wall_s"] = round(time.perf_counter() - t, 2)
        r["load_avg_1m"] = os.getloadavg()[0]
        print(
            f"sim {r['figure']}: {r['value']:.4g} (target {r['target']}) "
            + " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in r.items()
                if k not in ("figure", "value", "target")
            ),
            flush=True,
        )
        results.append(r)
    return results


if __name__ == "__main__":
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    run(sys.argv[1:] or None)
