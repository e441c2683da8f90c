"""``read_fio(..., combine="sum")``: fio runs that ran at the same time (CBT's one fio process
per volume) read as one test point, explicitly, never by default (issue 27.5). The runs are
two fio processes of the fio installed here started together; the reference is their own
JSON outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import flashback as fb

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

DIRS = ("read", "write", "trim")


def _cmd(k: int, rw: str) -> list[str]:
    return [
        "fio", f"--name=vol{k}", f"--filename=v{k}.bin", "--size=4m", "--bs=4k",
        "--ioengine=psync", f"--rw={rw}", "--time_based", "--runtime=3s", "--rate_iops=2000",
        "--log_avg_msec=100", f"--write_iops_log=output.{k}", f"--write_bw_log=output.{k}",
        f"--write_lat_log=output.{k}", "--output-format=json", f"--output=json_output.{k}",
    ]  # fmt: skip


def _together(tmp: Path) -> list[dict]:
    procs = [
        subprocess.Popen(_cmd(k, rw), cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for k, rw in ((0, "randread"), (1, "randwrite"))
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    for f in tmp.glob("*.bin"):
        f.unlink()
    return [json.loads((tmp / f"json_output.{k}").read_text()) for k in (0, 1)]


def _sum(docs: list[dict], d: str, key: str) -> int:
    return sum(j[d][key] for doc in docs for j in doc["jobs"])


def test_concurrent_runs_are_refused_by_default_and_summed_when_asked(tmp_path):
    docs = _together(tmp_path)
    outs = [tmp_path / "json_output.0", tmp_path / "json_output.1"]
    with pytest.raises(fb.FioFormatError, match="combine='sum'"):
        fb.read_fio(outs)
    cap = fb.read_fio(outs, combine="sum")
    df = cap.intervals
    assert df.height == 1 and cap.meta["combine"] == "sum"
    for d in DIRS:
        assert df[f"{d}_ios"][0] == _sum(docs, d, "total_ios")
        assert df[f"{d}_bytes"][0] == _sum(docs, d, "io_bytes")
    # each direction here comes from one run: its latency mean is that run's
    want = docs[1]["jobs"][0]["write"]["clat_ns"]["mean"] / 1000
    assert df["write_clat_mean_us"][0] == pytest.approx(want, rel=1e-9)
    assert df["step"][0] == "vol0,vol1"


def test_concurrent_runs_logs_summed_and_checked_against_both_outputs(tmp_path):
    docs = _together(tmp_path)
    with pytest.raises(fb.FioFormatError, match="combine='sum'"):
        fb.read_fio(tmp_path)
    cap = fb.read_fio(tmp_path, combine="sum")
    df = cap.intervals
    # each run read alone (its logs and its JSON): the sum is theirs, row by row
    alone = [
        fb.read_fio(sorted(tmp_path.glob(f"output.{k}_*.log")) + [tmp_path / f"json_output.{k}"])
        for k in (0, 1)
    ]
    for d, k in (("read", 0), ("write", 1)):
        assert (
            df[f"{d}_ios"].to_list()[: alone[k].intervals.height]
            == alone[k].intervals[f"{d}_ios"].to_list()
        )
        # and near fio's totals (fio logs no partial window at either end of a run)
        assert float(df[f"{d}_ios"].sum()) == pytest.approx(_sum(docs, d, "total_ios"), rel=0.5)


def test_runs_one_after_another_are_not_summed(tmp_path):
    for k, rw in ((0, "randread"), (1, "randwrite")):
        subprocess.run(_cmd(k, rw), cwd=tmp_path, check=True, capture_output=True, timeout=60)
        if k == 0:
            subprocess.run(["sleep", "1.2"], check=True)
    with pytest.raises(fb.FioFormatError, match="did not run at the same time"):
        fb.read_fio([tmp_path / "json_output.0", tmp_path / "json_output.1"], combine="sum")


def test_combine_takes_only_sum(tmp_path):
    with pytest.raises(fb.ParameterError, match="combine='mean'"):
        fb.read_fio(tmp_path / "x.json", combine="mean")
