"""``flashback analyze`` says when a steady state reached early does not hold afterwards."""

import numpy as np
import polars as pl

import flashback as fb
from flashback.cli import main


def test_analyze_reports_a_steady_state_that_does_not_hold(tmp_path, capsys):
    rng = np.random.default_rng(1)
    # 60-s rounds: steady at 200 MB/s from round 3, then 21 % lower from round 14 on
    per_round = [500.0, 300.0] + [200.0] * 11 + [158.0] * 12
    y = np.repeat(per_round, 60) * (1 + 0.02 * rng.standard_normal(60 * len(per_round)))
    n = y.size
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
    assert "steady state reached (snia, write_mbps): rounds 3–7" in out
    assert "later windows" in out and "NOT steady afterwards" in out
