"""fio job files → workloads: fb.Workload.from_fio and ``flashback run JOB.fio``."""

import subprocess
import sys
from pathlib import Path

import pytest

import flashback as fb

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata"


def _job(tmp_path, text):
    p = tmp_path / "job.fio"
    p.write_text(text)
    return p


def test_global_and_job_sections(tmp_path):
    p = _job(
        tmp_path,
        "; a comment\n[global]\nbs=64k\ndirect=1\nioengine=io_uring\nruntime=30\ntime_based\n"
        "write_bw_log=x\nlog_avg_msec=500\n\n[steady]\nrw=randrw\nrwmixread=70\niodepth=32\n"
        "numjobs=2\nsize=1g\nbuffer_compress_percentage=50\nnorandommap\n",
    )
    r = fb.Workload.from_fio(p).resolved
    assert r["rw"] == "randrw" and r["rwmix_read"] == 70
    assert r["bs"] == 64 * 1024 and r["iodepth"] == 32 and r["jobs"] == 2
    assert r["size"] == 1 << 30 and r["time_s"] == 30.0 and r["loops"] is None
    assert r["direct"] is True and r["engine"] == "io_uring"
    assert r["data"] == "compress:50" and r["random"] == "uniform"
    assert r["interval_s"] == 0.5


def test_runtime_without_time_based_is_one_pass_or_the_runtime(tmp_path):
    p = _job(tmp_path, "[j]\nrw=write\nsize=8m\nruntime=2m\n")
    r = fb.Workload.from_fio(p).resolved
    assert r["time_s"] == 120.0 and r["loops"] == 1


def test_real_job_file_with_unsupported_option_is_refused_by_name():
    # asheplyakov/ceph-jemalloc-bench journal_single.fio: fdatasync=1 (flashback has no sync)
    p = REAL / "asheplyakov__ceph-jemalloc-bench__journal-single_journal_single.fio"
    if not p.exists():
        pytest.skip("../shared/realdata is not present")
    with pytest.raises(fb.ParameterError, match="'fdatasync' is not one flashback has"):
        fb.Workload.from_fio(p)


@pytest.mark.parametrize(
    "line, match",
    [
        ("ramp_time=5", "'ramp_time'"),
        ("ioengine=libaio", "ioengine=libaio"),
        ("rw=rw", "rw=rw"),
        ("bs=4k,64k", "per-direction"),
        ("rw=randread\nio_size=1g", "io_size with rw=randread"),
    ],
)
def test_unsupported_values_are_refused(tmp_path, line, match):
    p = _job(tmp_path, f"[j]\nrw=write\n{line}\n")
    with pytest.raises(fb.ParameterError, match=match):
        fb.Workload.from_fio(p)


def test_several_jobs_need_a_name(tmp_path):
    p = _job(tmp_path, "[global]\nbs=4k\n[a]\nrw=write\n[b]\nrw=read\niodepth=4\n")
    with pytest.raises(fb.ParameterError, match=r"2 jobs \(a, b\)"):
        fb.Workload.from_fio(p)
    r = fb.Workload.from_fio(p, job="b").resolved
    assert r["rw"] == "read" and r["iodepth"] == 4 and r["bs"] == 4096


def test_options_before_a_section_are_malformed(tmp_path):
    p = _job(tmp_path, "bs=4k\n[j]\nrw=write\n")
    with pytest.raises(fb.ImportFormatError, match="line 1"):
        fb.Workload.from_fio(p)


def test_cli_runs_a_job_file(tmp_path):
    data = tmp_path / "scratch.bin"
    p = _job(
        tmp_path,
        f"[j]\nfilename={data}\nrw=write\nbs=64k\nsize=4m\ndirect=0\nruntime=1\ntime_based\n",
    )
    out = tmp_path / "c.parquet"
    res = subprocess.run(
        [sys.executable, "-m", "flashback", "run", str(p), "-o", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    cap = fb.load(out)
    w = cap.meta["workload"]
    assert w["rw"] == "write" and int(w["bs"]) == 65536
    assert cap.intervals["write_bytes"].sum() > 0
    assert data.stat().st_size == 4 << 20
