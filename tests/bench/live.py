"""Cost of the live chart (``make bench``): the same 4K random-write run on one file with no
progress and with a :class:`flashback.live.LiveChart` redrawing every second as in a
notebook (the Vega bundle built; only IPython's send left out), in interleaved pairs
(alternating which goes first); prints the median ratios of IOPS and of the run's p99
write latency (live / none; target: within 1 %), the redraws and their cost, and the
load average.

Telemetry sampling is measured beside it, in ``tests/bench/telemetry.py``.

Run alone: ``.venv/bin/python tests/bench/live.py [PAIRS] [SECONDS]``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import flashback as fb
from flashback.live import LiveChart


class _Notebook(LiveChart):
    """The notebook path of :class:`LiveChart` (display=None) without a kernel to send to;
    records how long each redraw took."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.draw_s: list[float] = []
        self.draw_cpu_s: list[float] = []

    def _draw(self, *, final: bool, suffix: str = "") -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        super()._draw(final=final, suffix=suffix)
        if not final:
            self.draw_s.append(time.perf_counter() - t0)
            # the redraw thread's own CPU: what it takes from the engine when no core is spare
            self.draw_cpu_s.append(time.thread_time() - c0)

    def _show(self, bundle: dict, md: dict) -> None:
        pass


def _run(target: fb.Target, w: fb.Workload, live: bool) -> tuple[float, float, list[float], float]:
    """(IOPS, p99 µs, each redraw's wall seconds, the redraws' CPU share of the run)."""
    progress = _Notebook(every_s=1.0) if live else None
    cap = target.run(w, progress=progress)
    draws: list[float] = []
    share = 0.0
    if progress is not None:
        progress.close("complete")
        draws = progress.draw_s
        share = sum(progress.draw_cpu_s) / cap.meta["duration_s"]
    ios = cap.meta["totals"]["write_ios"]
    return (
        ios / cap.meta["duration_s"],
        float(cap.meta["latency"]["write"]["p99_us"]),
        draws,
        share,
    )


def main(argv: list[str] | None = None) -> dict:
    argv = argv or []
    pairs = int(argv[0]) if argv else 8
    seconds = argv[1] if len(argv) > 1 else "5s"
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="flashback-live-bench-") as d:
        t = fb.Target(str(Path(d) / "scratch.bin"), size="256m")
        w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, time=seconds, interval="0.1s")
        _run(t, w, True)  # warm-up: the first live chart compiles its Vega
        iops, p99, draws, shares = [], [], [], []
        for i in range(pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            got = {live: _run(t, w, live) for live in order}
            iops.append(got[True][0] / got[False][0])
            p99.append(got[True][1] / got[False][1])
            draws.extend(got[True][2])
            shares.append(got[True][3])
    load1 = os.getloadavg()
    out = {
        "pairs": pairs,
        "iops_ratio_median": statistics.median(iops),
        "p99_ratio_median": statistics.median(p99),
        "iops_ratios": iops,
        "p99_ratios": p99,
        "redraws": len(draws),
        "redraw_ms_median": statistics.median(draws) * 1e3 if draws else None,
        "redraw_cpu_share_median": statistics.median(shares),
        "load_avg_1m": [load0[0], load1[0]],
    }
    print(f"\n== live chart: {pairs} interleaved pairs of {seconds} 4K randwrite QD32 on a file, "
          "redraw every 1 s (notebook path)")  # fmt: skip
    print(
        f"IOPS live/none median {out['iops_ratio_median']:.3f} "
        f"(spread {min(iops):.3f}-{max(iops):.3f}); p99 live/none median "
        f"{out['p99_ratio_median']:.3f} (spread {min(p99):.3f}-{max(p99):.3f}); target within 1 %"
    )
    if draws:
        print(
            f"{len(draws)} live redraws, median {out['redraw_ms_median']:.1f} ms each; the "
            f"redraw thread's CPU, median {out['redraw_cpu_share_median']:.2%} of one core over "
            "a run (the most it can take from the engine when no core is spare)"
        )
    print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
