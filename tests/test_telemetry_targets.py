"""Telemetry on real targets here: a loop device has no drive and a file's drive is shared,
so their drive_* columns are null and the metadata says why (this machine has no SSD)."""

from __future__ import annotations

import pytest

import flashback as fb

MiB = 1 << 20
DRIVE_COLS = [
    "drive_temp_c", "drive_throttle", "drive_power_state", "drive_host_written_bytes",
    "drive_nand_written_bytes", "drive_sample_age_s",
]  # fmt: skip


def _all_null(cap) -> bool:
    iv = cap.intervals
    return all(iv[c].null_count() == iv.height for c in DRIVE_COLS)


def test_loop_device_has_null_drive_columns_and_the_reason(loopdev):
    dev = loopdev(16 * MiB)
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, size="8m", time="1s", interval="0.25s")
    cap = fb.run(dev, w, destroy=dev)
    assert cap.meta["telemetry"] == {"source": "none", "reason": "loop device: no drive"}
    assert _all_null(cap)
    assert "loop device" in cap.meta["smart_start"]["error"]
    assert "loop device" in cap.meta["smart_end"]["error"]
    # and no measured write amplification: an error naming the reason, never 1.0
    with pytest.raises(fb.AnalysisError, match="loop device: no drive"):
        fb.write_amplification(cap)


def test_file_target_has_no_telemetry_and_says_why(tmp_path):
    w = fb.Workload(rw="write", bs="64k", iodepth=2, size="4m", time="0.5s", interval="0.25s")
    cap = fb.run(str(tmp_path / "f.bin"), w)
    assert cap.meta["telemetry"]["source"] == "none"
    assert "regular file" in cap.meta["telemetry"]["reason"]
    assert _all_null(cap)
