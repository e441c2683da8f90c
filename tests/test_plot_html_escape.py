"""``flashback plot cap.arrow -o x.html``: a step name ``</script><script>…`` in the capture
must stay text. Opened in real headless Chromium: the injected script does not run and the
chart still draws (it did run before: vl-convert's page inlines the spec unescaped)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from support.chromium import Chromium, chromium_binary

import flashback as fb

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)

EVIL = "</script><script>window.__pwned = 1</script><!--"


def test_a_step_name_cannot_run_as_script_in_a_plot_page(tmp_path: Path):
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=8, written="16m", interval="0.05s")
    t = fb.Target("sim:generic?scale=1/256")
    # two steps: the overview draws one panel per step, titled with the step's name
    a, b = t.run(w, step=EVIL), t.run(w, step="second")
    cap = fb.Capture(intervals=pl.concat([a.intervals, b.intervals]), meta=a.meta)
    src = tmp_path / "cap.arrow"
    cap.save(src)
    out = tmp_path / "x.html"
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "plot", str(src), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    assert EVIL not in page and "window.__pwned" in page  # there, as data
    with Chromium() as b:
        b.offline()
        b.navigate(out.as_uri())
        b.wait_for("!!document.querySelector('#chart svg')")
        assert b.evaluate("window.__pwned === undefined")
        assert b.exceptions == []
