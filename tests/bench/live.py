"""Cost of the live chart (``make bench``): the same run with no progress and with a
:class:`flashback.live.LiveChart` redrawing every second (compiled to Vega as in a notebook),
alternately on one file; prints the median ratios of IOPS and of the run's p99 write latency
(live / none; target: within 1 %).

Run alone: ``.venv/bin/python tests/bench/live.py [PAIRS] [SECONDS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import flashback as fb
from flashback.live import LiveChart
from flashback.notebook import render


def _run(target: fb.Target, w: fb.Workload, live: bool) -> tuple[float, float]:
    progress = None
    if live:
        progress = LiveChart(every_s=1.0, display=lambda c: render(c.to_dict(), static_scale=0))
    cap = target.run(w, progress=progress)
    if live:
        progress.close("complete")
    ios = cap.meta["totals"]["write_ios"]
    return ios / cap.meta["duration_s"], float(cap.meta["latency"]["write"]["p99_us"])


def main(argv: list[str] | None = None) -> dict:
    argv = argv or []
    pairs = int(argv[0]) if argv else 5
    seconds = argv[1] if len(argv) > 1 else "5s"
    with tempfile.TemporaryDirectory(prefix="flashback-live-bench-") as d:
        t = fb.Target(str(Path(d) / "scratch.bin"), size="256m")
        w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, time=seconds, interval="0.1s")
        iops, p99 = [], []
        for i in range(pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            got = {live: _run(t, w, live) for live in order}
            iops.append(got[True][0] / got[False][0])
            p99.append(got[True][1] / got[False][1])
    out = {
        "pairs": pairs,
        "iops_ratio_median": statistics.median(iops),
        "p99_ratio_median": statistics.median(p99),
        "iops_ratios": iops,
        "p99_ratios": p99,
    }
    print(f"\n== live chart: {pairs} alternating pairs of {seconds} 4K randwrite QD32 on a file")
    print(
        f"IOPS live/none median {out['iops_ratio_median']:.3f} "
        f"(spread {min(iops):.3f}-{max(iops):.3f}); p99 live/none median "
        f"{out['p99_ratio_median']:.3f} (spread {min(p99):.3f}-{max(p99):.3f})"
    )
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
