"""``flashback analyze CAPTURE`` on a saved capture: segments and the steady-state verdict."""

import numpy as np
import polars as pl

import flashback as fb
from flashback.cli import main


def test_analyze_prints_segments_and_verdict(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 900
    y = np.r_[np.full(300, 500.0), np.full(600, 200.0)] * (1 + 0.03 * rng.standard_normal(n))
    wb = (y * 1e6).astype(np.uint64)
    df = pl.DataFrame(
        {
            "t_s": np.arange(1.0, n + 1),
            "interval_s": np.ones(n),
            "write_mbps": y,
            "write_bytes": wb,
            "host_written_bytes": np.cumsum(wb),
            "step": ["x"] * n,
        }
    )
    path = tmp_path / "c.parquet"
    fb.Capture(df, {"target": {"size_bytes": 100e9}, "status": "complete"}).save(path)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 segment(s) of write_mbps over host_written_bytes" in out
    assert "change at 150 GB" in out
    assert "steady state reached (snia, write_mbps)" in out


def test_analyze_reports_errors_in_one_line(tmp_path, capsys):
    path = tmp_path / "c.parquet"
    df = pl.DataFrame({"t_s": [1.0, 2.0, 3.0], "write_mbps": [1.0, 2.0, 3.0]})
    fb.Capture(df, {"status": "complete"}).save(path)
    assert main(["analyze", str(path), "--x", "t_s", "--y", "write_mbs"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("flashback: ")
        and "\n" not in err
        and "write_mbs" in err
        and "write_mbps?" in err
    )
