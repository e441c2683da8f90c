"""What ``fb.run``'s default ``session="own"`` costs per run (issue 29): a ``fork`` of the calling
process, the child's copy-on-write faults and its exit, against the same run in the process
(``session="shared"``), in a fresh interpreter holding 0 and ~1 GiB (touched).

    .venv/bin/python tests/bench/run_session.py [rounds]

Each interpreter alternates the two sessions (ABBA…) on a 64 KiB buffered read of a file in
/tmp (the run itself ~1 ms) and prints the medians, the ratio own / shared and the difference;
the load average is printed. Measured 2026-11-26 (load 3.5): 5.5 ms more per run at 56 MiB
RSS (8.5 against 3.0 ms), 75 ms more at 1.05 GiB (86 against 11 ms); a bare ``os.fork`` +
``_exit`` + ``waitpid`` from Python costs 1.5 and 33 ms there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD = """
import json, os, statistics, sys, time
import flashback as fb
hold, path, rounds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ballast = bytearray(hold)
for i in range(0, hold, 4096):
    ballast[i] = 1
w = fb.Workload(rw="read", bs="4k", size="64k", loops=1, direct=False)
for s in ("shared", "own"):
    fb.run(path, w, session=s)
times = {"own": [], "shared": []}
for r in range(rounds):
    for s in ("own", "shared") if r % 2 else ("shared", "own"):
        t = time.perf_counter()
        fb.run(path, w, session=s)
        times[s].append(time.perf_counter() - t)
rss = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024
print(json.dumps({"rss_bytes": rss, **{k: statistics.median(v) for k, v in times.items()}}))
"""


def main(argv: list[str] | None = None) -> dict:
    rounds = int((argv or [])[0]) if argv else 15
    print("\n== fb.run session='own' (a fork per run) against session='shared'")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.bin")
        for hold in (0, 1 << 30):
            p = subprocess.run(
                [sys.executable, "-c", CHILD, str(hold), path, str(rounds)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            r = json.loads(p.stdout.strip().splitlines()[-1])
            la = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(
                f"RSS {r['rss_bytes'] / 2**20:5.0f} MiB: own {r['own'] * 1e3:6.2f} ms, shared "
                f"{r['shared'] * 1e3:6.2f} ms per run: ratio {r['own'] / r['shared']:.2f}, "
                f"+{(r['own'] - r['shared']) * 1e3:.2f} ms; load {la}",
                flush=True,
            )
            out[f"hold_{hold}"] = r
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
