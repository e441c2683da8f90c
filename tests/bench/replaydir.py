"""Saved replay size (``make bench``): a Puget CDM-loop replay at the demo's scale saved with
:meth:`Replay.save`; prints each file's size and the directory's size as a ratio of its
``intervals.parquet`` (the anchor; target ≤ 2×, issue 29 item 5), the save and load times,
and checks the load gives back the same step records and intervals. A size, not a timing:
it does not depend on the load average (printed anyway).

Run alone: ``.venv/bin/python tests/bench/replaydir.py [SCALE] [PROTOCOL]``
(default ``1/32 puget-cdm-loop``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import flashback as fb


def main(argv: list[str] | None = None) -> dict:
    argv = argv or []
    scale = argv[0] if argv else "1/32"
    name = argv[1] if len(argv) > 1 else "puget-cdm-loop"
    print(f"\n== saved replay size: {name} at {scale} (load {os.getloadavg()[0]:.1f})")
    rep = fb.replay(name, scale=scale, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = rep.save(Path(tmp) / "rep")
        save_s = time.perf_counter() - t0
        sizes = {p.name: p.stat().st_size for p in out.iterdir()}
        t0 = time.perf_counter()
        back = fb.Replay.load(out)
        load_s = time.perf_counter() - t0
    same = back.intervals.equals(rep.intervals) and json.dumps(
        back.step_records, sort_keys=True
    ) == json.dumps(json.loads(json.dumps(rep.step_records, default=str)), sort_keys=True)
    anchor = sizes["intervals.parquet"]
    ratio = sum(sizes.values()) / anchor
    for f, n in sorted(sizes.items()):
        print(f"  {f:<18} {n / 1e6:8.3f} MB  {n / anchor:6.3f}x intervals")
    print(
        f"  directory: {ratio:.3f}x intervals.parquet (target <= 2x) for "
        f"{len(rep.step_records)} steps, {rep.intervals.height} intervals; "
        f"save {save_s:.1f} s, load {load_s:.1f} s; loads back the same: {same}"
    )
    return {
        "protocol": name,
        "scale": scale,
        "steps": len(rep.step_records),
        "bytes": sizes,
        "ratio_to_intervals": ratio,
        "save_s": save_s,
        "load_s": load_s,
        "loads_back_the_same": same,
        "load_average": os.getloadavg()[0],
    }


if __name__ == "__main__":
    main(sys.argv[1:])
