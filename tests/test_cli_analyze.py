"""``flashback analyze CAPTURE`` on a saved capture: segments and the steady-state verdict."""

import json
import re

import numpy as np
import polars as pl
import pytest

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


def test_analyze_rejects_an_unknown_rule(tmp_path, capsys):
    path = tmp_path / "c.parquet"
    df = pl.DataFrame({"t_s": [1.0, 2.0, 3.0], "write_mbps": [1.0, 2.0, 3.0]})
    fb.Capture(df, {"status": "complete"}).save(path)
    assert main(["analyze", str(path), "--x", "t_s", "--rule", "foo"]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert err.startswith("flashback: ") and "\n" not in err and "'foo'" in err and "snia" in err
    assert "not assessed" not in cap.out


def _replay_dir(tmp_path):
    """A saved replay whose two tests interleave, loop after loop, over the same bytes
    written: `seq` drops from 500 to 200 MB/s at 150 GB, `rnd` stays at 60 MB/s."""
    rng = np.random.default_rng(1)
    loops = 300  # one interval per step, as Puget's CDM passes
    rows, steps, written = [], [], 0
    for loop in range(loops):
        for test, level in (("seq", 500.0 if loop < 100 else 200.0), ("rnd", 60.0)):
            mbps = level * (1 + 0.03 * rng.standard_normal())
            wb = int(mbps * 1e6 * 1.5)  # 1.5 s interval
            written += wb
            name = f"loop_{loop:03d}/{test}_write"
            rows.append(
                dict(
                    t_s=float(len(rows) + 1) * 1.5,
                    interval_s=1.5,
                    write_bytes=wb,
                    read_bytes=0,
                    write_ios=wb // 4096,
                    read_ios=0,
                    write_mbps=mbps,
                    read_mbps=0.0,
                    write_lat_mean_us=100.0,
                    read_lat_mean_us=None,
                    host_written_bytes=written,
                    step=name,
                )  # fmt: skip
            )
            steps.append(
                dict(
                    step=name,
                    kind="run",
                    t_start_s=rows[-1]["t_s"] - 1.5,
                    duration_s=1.5,
                    workload={},
                    status="complete",
                    host_written_start_bytes=written - wb,
                    host_written_end_bytes=written,
                    labels={"loop": loop, "test": test, "direction": "write"},
                )  # fmt: skip
            )
    frame = pl.DataFrame(rows, schema_overrides={"read_lat_mean_us": pl.Float64})
    rep = fb.Replay(frame, steps, {"protocol": "puget-cdm-loop", "scale": 1.0,
                                   "review_capacity_bytes": 100e9, "status": "complete"})  # fmt: skip
    return rep.save(tmp_path / "replay")


def test_analyze_a_replay_directory_per_test(tmp_path, capsys):
    d = _replay_dir(tmp_path)
    assert main(["analyze", str(d)]) == 0
    out = capsys.readouterr().out
    assert "each test analysed on its own (2 with write_mbps" in out
    seq = out[out.index("== seq_write ==") : out.index("== rnd_write ==")]
    rnd = out[out.index("== rnd_write ==") :]
    assert "2 segment(s)" in seq
    # the change: after 100 loops of (500 + 60) MB/s × 1.5 s = 84 GB written
    assert re.search(r"change at 8[34](\.\d)? GB", seq), seq
    assert "1 segment(s)" in rnd
    assert main(["analyze", str(d), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_test = {r["test"]: r for r in doc["results"]}
    assert set(by_test) == {"seq_write", "rnd_write"}
    assert by_test["seq_write"]["breakpoints"] == [pytest.approx(84e9, rel=0.01)]
    assert by_test["rnd_write"]["breakpoints"] == []


def test_plot_a_replay_directory_one_panel_per_test(tmp_path, capsys):
    d = _replay_dir(tmp_path)
    out = tmp_path / "replay.svg"
    assert main(["plot", str(d), "-o", str(out)]) == 0
    svg = out.read_text()
    assert ">seq_write<" in svg and ">rnd_write<" in svg
    assert "latency" not in svg  # tests are not mixed in one latency panel


def test_the_rule_help_lists_every_steady_state_rule():
    """The CLI spells the rules out (importing the analysis would slow `--help`); it once
    missed `ssspt`."""
    import subprocess
    import sys

    from flashback.analysis.steady_state import RULES

    out = subprocess.run(
        [sys.executable, "-m", "flashback", "analyze", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = out[out.index("--rule RULE  ") :].split()[2]
    assert listed.split("|") == list(RULES), listed
