"""Measured write amplification from a drive's counters: windows, bounds, and None with a
reason where there is no NAND counter."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import flashback as fb
from flashback.capture import Capture
from flashback.errors import AnalysisError
from flashback.telemetry import wa

HOST_UNIT, NAND_UNIT = 512_000, 32 << 20


@pytest.fixture(scope="module")
def sim_cap():
    w = fb.Workload(
        rw="randwrite",
        bs="64k",
        iodepth=8,
        size="512m",
        written="2g",
        data="random",
        interval="0.1s",
    )
    return fb.run("sim:generic?capacity=512m", w)


def test_windows_bound_the_simulators_ground_truth(sim_cap):
    # the engine writes the simulated drive's counters in the drive_* columns
    # (native/src/telemetry/sim.rs) and their units in meta.telemetry
    cap = sim_cap
    out = fb.write_amplification(cap, window_bytes=200e6)
    assert out.height >= 5
    iv = cap.intervals
    for r in out.iter_rows(named=True):
        a = iv.filter(pl.col("t_s") == r["t_start_s"]).row(0, named=True)
        b = iv.filter(pl.col("t_s") == r["t_end_s"]).row(0, named=True)
        truth = (b["nand_written_bytes"] - a["nand_written_bytes"]) / (
            b["host_written_bytes"] - a["host_written_bytes"]
        )
        assert r["wa_lo"] <= truth <= r["wa_hi"], (r, truth)
        assert r["wa_hi"] - r["wa_lo"] < 0.5
    # the cliff: WA goes from ~1 to well above it across the capture
    assert out["wa"][0] < 1.2 and out["wa"].max() > 2.0


def test_sim_drive_reports_counters_through_the_drive_columns(sim_cap):
    iv, tel = sim_cap.intervals, sim_cap.meta["telemetry"]
    assert tel["source"] == "sim" and tel["host_unit_bytes"] == HOST_UNIT
    assert tel["nand_unit_bytes"] == NAND_UNIT and "thermal model" in tel["temp_reason"]
    host = iv["drive_host_written_bytes"].to_numpy().astype(float)
    nand = iv["drive_nand_written_bytes"].to_numpy().astype(float)
    truth_h = iv["host_written_bytes"].to_numpy().astype(float)
    truth_n = iv["nand_written_bytes"].to_numpy().astype(float)
    # rounded up to NVMe data units, truncated to 32 MiB: within one unit of the truth
    assert ((host >= truth_h) & (host - truth_h < HOST_UNIT)).all()
    assert ((nand <= truth_n) & (truth_n - nand < NAND_UNIT)).all()
    assert iv["drive_temp_c"].null_count() == iv.height  # no thermal model: null, not 0
    assert (iv["drive_sample_age_s"] == 0.0).all()  # sampled on the device clock
    s0, s1 = sim_cap.meta["smart_start"], sim_cap.meta["smart_end"]
    assert s1["nand_written_bytes"] == iv["drive_nand_written_bytes"][-1]
    assert s0["host_written_bytes"] <= iv["drive_host_written_bytes"][0]


def test_default_window_is_set_by_the_counter_unit(sim_cap):
    out = fb.write_amplification(sim_cap)
    assert (out["host_bytes"].drop_nulls() >= HOST_UNIT / wa.DEFAULT_RESOLUTION).all()


def test_no_nand_counter_is_none_with_reason_never_one(sim_cap):
    cap = sim_cap
    iv = cap.intervals.with_columns(pl.lit(None, pl.UInt64).alias("drive_nand_written_bytes"))
    meta = {
        **cap.meta,
        "telemetry": {
            "source": "nvme-log",
            "host_unit_bytes": HOST_UNIT,
            "nand_reason": "the NVMe SMART/Health log has no NAND-write counter",
        },
    }
    out = fb.write_amplification(Capture(iv, meta))
    assert out.height == 1 and out["wa"][0] is None
    assert "no NAND-write counter" in out["reason"][0]


def test_capture_without_telemetry_is_refused_with_the_reason():
    cap = Capture(
        pl.DataFrame({"t_s": [1.0], "interval_s": [1.0]}),
        {"telemetry": {"source": "none", "reason": "loop device: no drive"}},
    )
    with pytest.raises(AnalysisError, match="loop device: no drive"):
        fb.write_amplification(cap)


def test_backwards_counter_and_bad_window_are_errors(sim_cap):
    cap = sim_cap
    with pytest.raises(AnalysisError, match="positive"):
        fb.write_amplification(cap, window_bytes=-1)
    iv = cap.intervals.with_columns(pl.col("drive_nand_written_bytes").reverse())
    with pytest.raises(AnalysisError, match="backwards"):
        fb.write_amplification(Capture(iv, cap.meta))


def test_ratio_bounds_need_more_than_one_unit():
    w = wa.ratio_bounds(
        host_bytes=HOST_UNIT,
        nand_bytes=10 * HOST_UNIT,
        host_error_bytes=HOST_UNIT,
        nand_error_bytes=0,
    )
    assert w.wa is None and "too short" in w.reason
    w = wa.ratio_bounds(host_bytes=100, nand_bytes=300, host_error_bytes=1, nand_error_bytes=3)
    assert (
        w.wa == 3.0 and w.wa_lo == pytest.approx(297 / 101) and w.wa_hi == pytest.approx(303 / 99)
    )
    assert np.isfinite(w.wa_hi)


def test_run_write_amplification_from_the_smart_snapshots(sim_cap):
    from flashback.telemetry.run import run_snapshots, run_write_amplification

    a, b = run_snapshots(sim_cap)
    assert a.source == b.source == "sim"
    w = run_write_amplification(sim_cap)
    truth = sim_cap.meta["sim"]["nand_written_bytes"] / sim_cap.meta["sim"]["host_written_bytes"]
    assert w.wa_lo <= truth <= w.wa_hi


def test_run_write_amplification_on_real_smartctl_snapshots():
    """The 660p's real smartctl -j output as a capture's smart_start and smart_end: NVMe has
    no NAND counter, so None with that reason (never 1.0); a loop device's recorded error is
    the reason."""
    import json
    from pathlib import Path

    from flashback.telemetry.run import run_write_amplification

    d = Path(__file__).parent / "data" / "realdrive"
    doc = json.loads(
        (d / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-nvme.json").read_text()
    )
    w = run_write_amplification(Capture(pl.DataFrame(), {"smart_start": doc, "smart_end": doc}))
    assert w.wa is None and "no NAND-write counter" in w.reason
    w = run_write_amplification(
        Capture(pl.DataFrame(), {"smart_start": {"error": "loop device: no drive"}})
    )
    assert w.reason == "loop device: no drive"
