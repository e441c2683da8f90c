"""Agreement with fio: the same workload on the same loop device gives MB/s within ±15 %.

An agreement check, not a speed test: the loop device is given a fixed bandwidth (a cgroup
cap, like a drive with a known speed) so the result does not depend on how busy the CPUs are,
and both tools must see that speed. Both run as child processes inside the same cgroup.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import flashback as fb

MiB = 1 << 20
TIME_S = 2


def fio_mbps(fio_path: str, dev: str, preexec, rw: str, bs: str, iodepth: int) -> float:
    cmd = [
        fio_path, "--name=agree", f"--filename={dev}", "--ioengine=io_uring", f"--rw={rw}",
        f"--bs={bs}", f"--iodepth={iodepth}", "--direct=1", f"--runtime={TIME_S}",
        "--time_based", "--output-format=json",
    ]  # fmt: skip
    p = subprocess.run(cmd, preexec_fn=preexec, capture_output=True, text=True, check=True)
    out = json.loads(p.stdout[p.stdout.index("{") :])
    job = out["jobs"][0]
    return (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6


def flashback_mbps(tmp_path, dev: str, preexec, rw: str, bs: str, iodepth: int) -> float:
    cap_path = tmp_path / f"{rw}.arrow"
    cmd = [
        sys.executable, "-m", "flashback", "run", dev, "--rw", rw, "--bs", bs,
        "--iodepth", str(iodepth), "--time", f"{TIME_S}s", "--destroy", dev,
        "-o", str(cap_path), "--no-progress",
    ]  # fmt: skip
    subprocess.run(cmd, preexec_fn=preexec, capture_output=True, text=True, check=True)
    cap = fb.load(cap_path)
    assert cap.status == "complete"
    df = cap.intervals
    return float((df["read_bytes"].sum() + df["write_bytes"].sum()) / df["interval_s"].sum() / 1e6)


@pytest.mark.parametrize(
    "rw, bs, iodepth, cap_mbps",
    [("read", "128k", 4, 40), ("randwrite", "64k", 8, 24)],
)
def test_mbps_agrees_with_fio(loopdev, throttle, fio_path, tmp_path, rw, bs, iodepth, cap_mbps):
    dev = loopdev(64 * MiB)
    with open(dev, "r+b") as f:  # real data to read, not holes
        for _ in range(64):
            f.write(b"\x5a" * MiB)
    th = throttle(dev, read_bps=cap_mbps * 10**6, write_bps=cap_mbps * 10**6)
    ours = flashback_mbps(tmp_path, dev, th.preexec, rw, bs, iodepth)
    theirs = fio_mbps(fio_path, dev, th.preexec, rw, bs, iodepth)
    assert ours == pytest.approx(theirs, rel=0.15), (
        f"flashback {ours:.1f} MB/s vs fio {theirs:.1f} MB/s"
    )
    # and both see the device's set speed
    assert ours == pytest.approx(cap_mbps, rel=0.15)
