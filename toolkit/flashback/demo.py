"""``make demo`` until the report exists: a short real capture on a temporary file."""

from __future__ import annotations

import tempfile
from pathlib import Path

import flashback as fb


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="flashback-demo-") as d:
        path = Path(d) / "scratch.bin"
        w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, size="256m", time="5s")
        cap = fb.run(path, w, progress=True, capture_path=Path(d) / "demo.arrow")
        print(cap.intervals.select("t_s", "write_iops", "write_mbps", "write_lat_p99_us"))
        print(cap.summary())


if __name__ == "__main__":
    main()
