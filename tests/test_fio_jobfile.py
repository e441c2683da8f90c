"""fio job files → workloads: fb.Workload.from_fio and ``flashback run JOB.fio``."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import flashback as fb
from flashback.fio.jobfile import JobFileNote

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
        ("ioengine=windowsaio", "ioengine=windowsaio"),
        ("rwmixwrite=abc", "rwmixwrite=abc is not a whole number"),
        ("rwmixread=101", "rwmixread=101 is not a whole number from 0 to 100"),
        ("log_avg_msec=1.5", "log_avg_msec=1.5 is not a whole number"),
        ("ramp_time=soon", "ramp='soon' is not a duration"),
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


@pytest.mark.parametrize(
    "engine, runs_on, note",
    [
        ("libaio", "io_uring", True),
        ("sync", "psync", True),
        ("psync", "psync", False),
        ("pvsync", "psync", True),
        ("io_uring", "io_uring", False),
    ],
)
def test_common_ioengines_map_to_an_engine_with_a_note(tmp_path, engine, runs_on, note):
    p = _job(tmp_path, f"[j]\nrw=write\nioengine={engine}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = fb.Workload.from_fio(p)
    assert w.resolved["engine"] == runs_on
    said = [str(c.message) for c in caught if issubclass(c.category, JobFileNote)]
    assert len(said) == int(note) and all(f"ioengine={engine} runs" in m for m in said)


def test_ramp_time_is_run_and_left_out_of_the_capture(tmp_path):
    p = _job(tmp_path, "[j]\nrw=randwrite\nbs=4k\niodepth=8\nramp_time=2\nruntime=3\ntime_based\n")
    w = fb.Workload.from_fio(p)
    assert w.ramp_s == 2.0 and w.resolved["time_s"] == 3.0
    t = fb.Target("sim:generic?scale=1/256")
    cap = t.run(w)
    iv = cap.intervals
    # the capture is the 3 s after the ramp: its clock starts at 0, its first row's
    # host_written_bytes already counts the ramp's writes; it ends once the I/Os in flight at
    # 3 s are reaped, as fio's runtime does
    assert 3.0 <= iv["t_s"].max() <= 3.0 + iv["write_lat_max_us"].max() / 1e6
    first = iv.row(0, named=True)
    assert first["host_written_bytes"] > 1.5 * first["write_bytes"]
    assert t.host_written_bytes == iv["host_written_bytes"][-1]
    assert iv["write_bytes"].sum() < iv["host_written_bytes"][-1]


def _cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "flashback", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_cli_job_picks_one_of_several_and_is_not_read_as_jobs(tmp_path):
    data = tmp_path / "scratch.bin"
    p = _job(
        tmp_path,
        f"[global]\nfilename={data}\nsize=4m\ndirect=0\nruntime=1\ntime_based\nioengine=libaio\n"
        "[a]\nrw=write\n[b]\nrw=randwrite\nbs=8k\n",
    )
    r = _cli("run", str(p), "--no-progress", "--json", cwd=tmp_path)
    assert r.returncode == 2 and "--job NAME" in r.stderr, r.stderr
    r = _cli("run", str(p), "--job", "b", "--no-progress", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "note: " in r.stderr and "ioengine=libaio runs on io_uring" in r.stderr
    w = json.loads(r.stdout)["meta"]["workload"]
    assert w["rw"] == "randwrite" and int(w["bs"]) == 8192 and int(w["jobs"]) == 1
    # no prefix matching: --job is not --jobs, --siz is not --size
    r = _cli("run", "sim:generic?scale=1/256", "--siz", "1m", cwd=tmp_path)
    assert r.returncode == 2 and "usage: flashback run" in r.stderr
    assert "unrecognized arguments: --siz 1m" in r.stderr


def test_cli_never_writes_data_to_a_fio_path(tmp_path):
    r = _cli("run", "missing.fio", "--size", "8m", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2 and "missing.fio does not exist" in r.stderr, r.stderr
    assert not (tmp_path / "missing.fio").exists()
    (tmp_path / "data.fio").write_bytes(b"\x00" * 4096)
    r = _cli("run", "data.fio", "--size", "4k", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2 and "is not a fio job file" in r.stderr, r.stderr
