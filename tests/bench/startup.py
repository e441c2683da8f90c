"""CLI start-up (``make bench``): wall time of ``flashback --version`` and ``flashback
--help`` beside ``fio --version``, run alternately (one of each per round, so load changes
hit all three alike); prints the medians and the ratios to fio (target: ≤ 1.3×).

Run alone: ``.venv/bin/python tests/bench/startup.py [ROUNDS]``.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

FLASHBACK = str(Path(sys.executable).parent / "flashback")


def _wall_s(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict:
    rounds = int((argv or [])[0]) if argv else 20
    fio = shutil.which("fio")
    cmds = {
        "flashback --version": [FLASHBACK, "--version"],
        "flashback --help": [FLASHBACK, "--help"],
    }
    if fio:
        cmds["fio --version"] = [fio, "--version"]
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for cmd in cmds.values():  # warm the page cache
        _wall_s(cmd)
    for _ in range(rounds):
        for name, cmd in cmds.items():
            times[name].append(_wall_s(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n== CLI start-up: median of {rounds} alternating runs")
    out = {}
    for name, m in med.items():
        ratio = m / med["fio --version"] if fio else None
        tail = f"  {ratio:.2f}× fio --version" if ratio and not name.startswith("fio") else ""
        print(f"{name:22s} {m * 1e3:7.1f} ms{tail}")
        out[name] = {"median_ms": m * 1e3, "ratio_to_fio": ratio}
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
