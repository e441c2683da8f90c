"""Cost of the live chart (``make bench``): the same 4K random-write run with no progress and
with a :class:`flashback.live.LiveChart` redrawing as in a notebook (the Vega
bundle built and JSON-encoded as the kernel's send does; only the socket left out), in
interleaved pairs (alternating which goes first), on a loop device over tmpfs (root; else a
file: the machine's shared disk then adds its own noise to the ratios). Two rows: the chart's default cadence
(``every_s=5``, runs long enough for several redraws) and a 1 s stress row.

The verdict rests on the run's ``observer_s``: the wall time the engine's thread spent in
the observer (handing intervals to the callback, polling for Ctrl-C, waiting for the GIL the
redraw thread holds), as a share of the run — it does not move with the machine's load as
the IOPS and p99 ratios (live / none, printed beside it: ±5 % per pair) do. Target: the
live run's share within 1 %. Also printed: the CPU per I/O of the process and the run's job
(a child of its own by default; live / none), the
redraws and their cost (wall and the redraw thread's CPU), and the load average.

Telemetry sampling is measured beside it, in ``tests/bench/telemetry.py``.

Run alone: ``.venv/bin/python tests/bench/live.py [PAIRS] [SECONDS] [EVERY_S]`` (one row).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import engine

import flashback as fb
from flashback.live import LiveChart

#: (pairs, run length, redraw cadence s) of the rows ``make bench`` prints
ROWS = [(8, "20s", 5.0), (4, "5s", 1.0)]

SIZE = 256 << 20


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
        # what jupyter_client's session does with a display message before the socket
        json.dumps({"data": bundle, "metadata": md}, ensure_ascii=False, allow_nan=False)


def _cpu_s() -> float:
    """CPU seconds so far of this process and of its reaped children: a real target's run is a
    forked child by default (``session="own"``), so this process's own time is the observer's
    and the redraws' alone (``time.process_time`` gave live/none ratios of 7-13 here, the
    engine left out)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _run(target: fb.Target, w: fb.Workload, every_s: float | None) -> dict:
    """One run, with a live chart redrawn every ``every_s`` s (None: no progress)."""
    progress = _Notebook(every_s=every_s) if every_s is not None else None
    c0 = _cpu_s()
    cap = target.run(w, progress=progress)
    cpu_s = _cpu_s() - c0
    m = cap.meta
    out = {
        "iops": m["totals"]["write_ios"] / m["duration_s"],
        "cpu_per_io_s": cpu_s / m["totals"]["write_ios"],
        "p99_us": float(m["latency"]["write"]["p99_us"]),
        "observer_share": m["observer_s"] / m["duration_s"],
        "draws": [],
        "draw_cpu_share": 0.0,
    }
    if progress is not None:
        progress.close("complete")
        out["draws"] = progress.draw_s
        out["draw_cpu_share"] = sum(progress.draw_cpu_s) / m["duration_s"]
    return out


@contextlib.contextmanager
def _target() -> Iterator[tuple[fb.Target, str]]:
    """A loop device over tmpfs (root), else a file in the temp dir; and what it is."""
    if os.geteuid() == 0:
        with engine.loop_device(SIZE) as dev:
            yield fb.Target(dev, destroy=dev), "a loop device over tmpfs"
    else:
        with tempfile.TemporaryDirectory(prefix="flashback-live-bench-") as d:
            yield fb.Target(str(Path(d) / "scratch.bin"), size=SIZE), "a file"


def _row(pairs: int, seconds: str, every_s: float) -> dict:
    load0 = os.getloadavg()
    with _target() as (t, where):
        w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, time=seconds, interval="0.1s")
        _run(t, w.replace(time="1s"), every_s)  # warm-up: file laid out, first chart compiled
        got: dict[bool, list[dict]] = {True: [], False: []}
        for i in range(pairs):
            for live in (False, True) if i % 2 == 0 else (True, False):
                got[live].append(_run(t, w, every_s if live else None))
    load1 = os.getloadavg()
    live, none = got[True], got[False]
    iops = [a["iops"] / b["iops"] for a, b in zip(live, none, strict=True)]
    p99 = [a["p99_us"] / b["p99_us"] for a, b in zip(live, none, strict=True)]
    cpu = [a["cpu_per_io_s"] / b["cpu_per_io_s"] for a, b in zip(live, none, strict=True)]
    draws = [s for r in live for s in r["draws"]]
    share_live = statistics.median(r["observer_share"] for r in live)
    share_none = statistics.median(r["observer_share"] for r in none)
    out = {
        "pairs": pairs,
        "seconds": seconds,
        "every_s": every_s,
        "observer_share_live_median": share_live,
        "observer_share_live_max": max(r["observer_share"] for r in live),
        "observer_share_none_median": share_none,
        "iops_ratio_median": statistics.median(iops),
        "p99_ratio_median": statistics.median(p99),
        "cpu_per_io_ratio_median": statistics.median(cpu),
        "iops_ratios": iops,
        "p99_ratios": p99,
        "redraws": len(draws),
        "redraw_ms_median": statistics.median(draws) * 1e3 if draws else None,
        "redraw_cpu_share_median": statistics.median(r["draw_cpu_share"] for r in live),
        "load_avg_1m": [load0[0], load1[0]],
        "met": share_live <= 0.01,
    }
    print(f"\n== live chart, redraw every {every_s:g} s: {pairs} interleaved pairs of {seconds} "
          f"4K randwrite QD32 on {where} (notebook path)")  # fmt: skip
    print(
        f"engine thread in the observer: live {share_live:.3%} of the run (max "
        f"{out['observer_share_live_max']:.3%}), none {share_none:.3%}; target within 1 %: "
        + ("met" if out["met"] else "NOT met")
    )
    print(
        f"IOPS live/none median {out['iops_ratio_median']:.3f} "
        f"(spread {min(iops):.3f}-{max(iops):.3f}); p99 live/none median "
        f"{out['p99_ratio_median']:.3f} (spread {min(p99):.3f}-{max(p99):.3f}); CPU per I/O "
        f"(this process and the run's job) live/none median {out['cpu_per_io_ratio_median']:.3f} "
        f"(spread {min(cpu):.3f}-{max(cpu):.3f})"
    )
    if draws:
        print(
            f"{len(draws)} live redraws, median {out['redraw_ms_median']:.2f} ms each; the "
            f"redraw thread's CPU, median {out['redraw_cpu_share_median']:.3%} of one core over "
            "a run (the most it can take from the engine when no core is spare)"
        )
    print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after")
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    argv = argv or []
    if argv:
        rows = [(int(argv[0]), argv[1] if len(argv) > 1 else "20s",
                 float(argv[2]) if len(argv) > 2 else 5.0)]  # fmt: skip
    else:
        rows = ROWS
    return [_row(*r) for r in rows]


if __name__ == "__main__":
    main(sys.argv[1:])
