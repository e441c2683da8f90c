"""Streaming a capture to its file vs keeping it in memory (``make bench``): the same seeded
``sim:`` run at 1 ms intervals, each way in its own process, interleaved rounds; prints the
CPU seconds of the run call (``time.process_time`` in the child, imports excluded), their
median ratio (target ≤ 1.5×), the file size against the in-memory frame, and the load average.

``python tests/bench/stream.py --intervals 1000000 --rounds 3`` for the issue's 10^6 figure;
``PYTHONPATH=<another toolkit>`` compares another build.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, time, flashback as fb
n, path = int(sys.argv[1]), sys.argv[2]
w = fb.Workload(rw="randwrite", bs="4k", size="8m", time=f"{n}ms", interval="1ms", seed=5)
t0 = time.process_time()
if path == "-":
    cap = fb.run("sim:generic?scale=1/256", w)
    size = cap.intervals.estimated_size()
else:
    cap = fb.run("sim:generic?scale=1/256", w, capture_path=path, stream_only=True)
    size = 0
print(time.process_time() - t0, size)
"""


def _one(n: int, path: str) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), path], capture_output=True, text=True, check=True
    )
    cpu, size = out.stdout.split()
    return float(cpu), int(size)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    print(f"\n== capture streaming vs in memory: sim, {a.intervals:,} intervals of 1 ms")
    mem, stream, frame_bytes, file_bytes = [], [], 0, 0
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "s.arrow")
        for _ in range(a.rounds):
            cpu, frame_bytes = _one(a.intervals, "-")
            mem.append(cpu)
            cpu, _ = _one(a.intervals, path)
            stream.append(cpu)
            file_bytes = os.path.getsize(path)
            os.unlink(path)  # the next round creates it anew (no overwrite needed)
    m, s = statistics.median(mem), statistics.median(stream)
    load = os.getloadavg()[0]
    print(
        f"in memory {m:.2f} CPU-s, streamed {s:.2f} CPU-s: {s / m:.2f}x (target <= 1.5x); "
        f"file {file_bytes / 1e6:.1f} MB vs frame {frame_bytes / 1e6:.1f} MB; load {load:.1f}"
    )
    return {
        "figure": "stream_vs_memory_cpu",
        "intervals": a.intervals,
        "memory_cpu_s": mem,
        "stream_cpu_s": stream,
        "ratio": s / m,
        "file_bytes": file_bytes,
        "frame_bytes": frame_bytes,
        "load": load,
    }


if __name__ == "__main__":
    main(sys.argv[1:])
