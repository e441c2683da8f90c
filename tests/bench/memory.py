"""Memory of long captures (``make bench``): peak RSS of ``flashback run ... -o x.arrow`` for
10⁵ and 10⁶ one-millisecond intervals on a simulated drive, streamed to the file (flat), beside
the same run kept in memory by ``fb.run`` (grows with the intervals). Prints bytes of RSS per
extra interval; ``main()`` returns the figures.

Run alone: ``.venv/bin/python tests/bench/memory.py [N_SMALL N_LARGE]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = "sim:generic?scale=1/256"


def _peak_rss_bytes(cmd: list[str]) -> int:
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode() if p.stderr else ""
    if status != 0:
        raise RuntimeError(f"{cmd[:4]} failed: {err}")
    return usage.ru_maxrss * 1024


def _streamed(n: int, out: Path) -> int:
    return _peak_rss_bytes(
        [sys.executable, "-m", "flashback", "run", TARGET, "--rw", "randread", "--bs", "4k",
         "--time", f"{n}ms", "--interval", "1ms", "-o", str(out), "--no-progress", "--overwrite"]
    )  # fmt: skip


def _in_memory(n: int) -> int:
    code = (
        "import flashback as fb; "
        f"c = fb.run({TARGET!r}, fb.Workload(rw='randread', bs='4k', time='{n}ms', interval='1ms')); "
        f"assert len(c.intervals) == {n}"
    )
    return _peak_rss_bytes([sys.executable, "-c", code])


def main(n_small: int = 100_000, n_large: int = 1_000_000) -> dict:
    print(f"\n== memory: peak RSS for {n_small:,} and {n_large:,} intervals of 1 ms")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "long.arrow"
        s_small, s_large = _streamed(n_small, f), _streamed(n_large, f)
        import flashback as fb

        assert len(fb.load(f).intervals) == n_large
        m_small, m_large = _in_memory(n_small), _in_memory(n_large)
    extra = n_large - n_small
    for name, a, b in (("streamed (-o)", s_small, s_large), ("in memory", m_small, m_large)):
        per = (b - a) / extra
        print(f"{name:>14}: {a / 1e6:7.1f} MB -> {b / 1e6:7.1f} MB, {per:6.1f} B per interval")
        out[name] = {"rss_small_bytes": a, "rss_large_bytes": b, "bytes_per_interval": per}
    print("target: streamed stays flat (a few B per interval at most)")
    return out


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
