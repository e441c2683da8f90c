"""Explain the drops: evidence beside each change point, on captures whose cause is known
(a simulated SLC cache and GC cliff; a synthetic telemetry trace with a thermal throttle)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import flashback as fb
from flashback.analysis.explain import NO_EVIDENCE, explain
from flashback.capture import Capture
from flashback.errors import AnalysisError


@pytest.fixture(scope="module")
def slc_cliff():
    """A 512 MiB simulated drive with a 200 MB SLC cache, written randomly 3 times over:
    the cache fills at ~0.21 GB, the free pool runs out (GC cliff) at ~0.77 GB."""
    w = fb.Workload(
        rw="randwrite",
        bs="64k",
        iodepth=8,
        size="512m",
        written="1.5g",
        data="random",
        interval="0.1s",
    )
    cap = fb.run("sim:generic?capacity=512m&slc_cache=200m", w)
    return cap, fb.changepoints(cap, x="host_written_bytes", y="write_mbps")


def _near(frame: pl.DataFrame, x: float, tol: float) -> dict:
    rows = frame.filter((pl.col("x") - x).abs() < tol)
    assert rows.height >= 1, f"no breakpoint near {x / 1e9:.3g} GB: {frame['x'].to_list()}"
    return rows.row(0, named=True)


def test_slc_cache_and_gc_cliff_are_explained(slc_cliff):
    cap, seg = slc_cliff
    ev = {e["name"]: e["host_written_bytes"] for e in cap.meta["events"]}
    ex = explain(cap, seg)
    assert ex.height == len(seg.breakpoints)
    slc = _near(ex, ev["slc_cache_full"], 0.05e9)
    assert "slc_cache" in slc["causes"] and "drive_fill" not in slc["causes"]
    assert "SLC cache" in slc["evidence"]
    cliff = _near(ex, ev["free_pool_exhausted"], 0.05e9)
    assert {"drive_fill", "wa_rising"} <= set(cliff["causes"])
    assert "slc_cache" not in cliff["causes"]
    assert "the drive's counters" in cliff["evidence"]  # the sim reports them as a drive


def test_explain_through_segments_and_without_sim_events(slc_cliff):
    cap, seg = slc_cliff
    no_events = Capture(cap.intervals, {**cap.meta, "events": []})
    ex = seg.explain(no_events)
    assert not any("sim_event" in c for c in ex["causes"].to_list())
    # what remains is evidence from bytes written and WA, not from simulator events
    assert "slc_cache" in ex["causes"].explode().to_list()


def _throttle_trace(n: int = 240, at: int = 150) -> Capture:
    """A synthetic capture: steady 1,000 MB/s writes, the drive heating up and throttling
    (state 1) at row ``at``, when throughput halves."""
    rng = np.random.default_rng(7)
    mbps = np.where(np.arange(n) < at, 1000.0, 500.0) + rng.normal(0, 15, n)
    wb = (mbps * 1e6).astype(np.int64)
    temp = np.minimum(40 + np.arange(n) * 0.3, 84.0)
    throttle = (np.arange(n) >= at).astype(np.int64)
    df = pl.DataFrame(
        {
            "t_s": np.arange(1, n + 1, dtype=float),
            "interval_s": np.ones(n),
            "read_ios": np.zeros(n, dtype=np.int64),
            "write_ios": wb // 131072,
            "trim_ios": np.zeros(n, dtype=np.int64),
            "write_bytes": wb,
            "write_mbps": mbps,
            "host_written_bytes": np.cumsum(wb),
            "drive_temp_c": temp,
            "drive_throttle": throttle,
            "drive_sample_age_s": np.full(n, 0.4),
        }
    )
    meta = {"telemetry": {"source": "synthetic", "temp_warning_c": 84.0}, "target": {}}
    return Capture(df, meta)


def test_synthetic_throttle_is_the_evidence():
    cap = _throttle_trace()
    seg = fb.changepoints(cap, x="t_s", y="write_mbps")
    assert len(seg.breakpoints) == 1
    ex = explain(cap, seg)
    row = ex.row(0, named=True)
    assert {"throttle", "temperature"} <= set(row["causes"])
    assert "84 °C" in row["evidence"] and "throttl" in row["evidence"]


def test_without_telemetry_no_evidence_is_said():
    cap = _throttle_trace()
    bare = Capture(cap.intervals.drop("drive_temp_c", "drive_throttle"), {"target": {}})
    seg = fb.changepoints(bare, x="t_s", y="write_mbps")
    ex = explain(bare, seg)
    assert ex["evidence"].to_list() == [NO_EVIDENCE]


def test_idle_gap_before_a_change():
    cap = _throttle_trace()
    df = cap.intervals.with_columns(
        pl.when(pl.int_range(pl.len()).is_between(146, 149))
        .then(0)
        .otherwise(pl.col("write_ios"))
        .alias("write_ios")
    )
    c = Capture(df.drop("drive_temp_c", "drive_throttle"), {"target": {}})
    seg = fb.changepoints(c, x="t_s", y="write_mbps")
    ex = explain(c, seg)
    assert "idle_gap" in ex.row(0, named=True)["causes"]


def test_grouped_segments_are_refused(slc_cliff):
    cap, _ = slc_cliff
    iv = cap.intervals.with_columns(pl.lit("a").alias("g"))
    c = Capture(iv, cap.meta)
    seg = fb.changepoints(c, x="host_written_bytes", y="write_mbps", by="g")
    with pytest.raises(AnalysisError, match="by= groups"):
        explain(c, seg)


def test_cli_analyze_prints_and_emits_the_evidence(slc_cliff, tmp_path, capsys):
    import json

    from flashback.cli import main

    cap, _ = slc_cliff
    path = tmp_path / "c.arrow"
    cap.save(path)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "what coincides with each change:" in out
    assert "≈ the SLC cache" in out
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ex = doc["results"][0]["explanations"]
    assert any("slc_cache" in e["causes"] for e in ex)


def test_written_figure_annotates_each_breakpoint_with_its_evidence(slc_cliff):
    cap, seg = slc_cliff
    ex = seg.explain(cap)
    chart = fb.figures.performance_vs_written(cap.intervals, breakpoints=ex)
    spec = chart.to_dict()
    texts = [ly for ly in spec["layer"] if (ly.get("mark") or {}).get("type") == "text"]
    assert len(texts) == 1
    assert texts[0]["encoding"]["text"]["field"] == "label"
    data = next(iter(spec["datasets"].values()))
    evid = [r["evidence"] for r in data if r.get("layer") == "breakpoint"]
    assert any("SLC cache" in e for e in evid)
    # without evidence, no text layer (the old figure)
    plain = fb.figures.performance_vs_written(cap.intervals, breakpoints=seg.breakpoint_frame())
    assert not [
        ly for ly in plain.to_dict()["layer"] if (ly.get("mark") or {}).get("type") == "text"
    ]
