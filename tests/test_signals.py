"""Ctrl-C and kill -9 in the middle of `flashback run`: the capture survives (a kill loses at
most the last second of wall time: streams write a batch at least every second) and
`recover()` salvages it and a torn copy; `load()` refuses both, as unfinished."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import children, running

import flashback as fb

INTERVAL_S = 0.2


def start_run(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "cap.arrow"
    cmd = [
        sys.executable, "-m", "flashback", "run", str(tmp_path / "scratch.bin"),
        "--rw", "randread", "--bs", "4k", "--iodepth", "4", "--size", "16m",
        "--time", "60s", "--interval", f"{INTERVAL_S}s", "-o", str(out), "--no-progress",
    ]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p, out


def wait_rows(p: subprocess.Popen, out: Path, n: int, timeout_s: float = 30.0) -> fb.Capture:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if p.poll() is not None:
            pytest.fail(f"flashback run exited early: {p.communicate()[1]}")
        if out.exists():
            try:
                cap = fb.recover(out)
                if len(cap.intervals) >= n:
                    return cap
            except fb.CaptureFileError:
                pass
        time.sleep(0.05)
    p.kill()
    p.communicate()
    pytest.fail("the capture file did not grow")


def start_wall(cap: fb.Capture) -> float:
    return dt.datetime.fromisoformat(cap.meta["start_time"].replace("Z", "+00:00")).timestamp()


def test_ctrl_c_stops_within_a_second_and_marks_interrupted(tmp_path):
    p, out = start_run(tmp_path)
    wait_rows(p, out, 4)
    sent = time.time()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)  # communicate: the stderr pipe is closed after
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("flashback run did not stop after SIGINT")
    assert p.returncode == 130, err
    cap = fb.load(out)
    assert cap.status == "interrupted"
    df = cap.intervals
    ran_s = sent - start_wall(cap)
    # stopped within a second of the signal, and every interval up to the stop is there
    assert cap.meta["duration_s"] - ran_s < 1.0
    assert df["interval_s"].sum() == pytest.approx(cap.meta["duration_s"], abs=1e-6)
    assert len(df) >= int(ran_s / INTERVAL_S)
    assert (df["t_s"].diff().drop_nulls() > 0).all()
    assert df["read_ios"].sum() == cap.meta["totals"]["read_ios"]


def job_of(p: subprocess.Popen) -> int:
    """The pid of ``flashback run``'s job: its child in a session of its own."""
    kids = children(p.pid)
    if not kids:
        pytest.fail("flashback run has no child process")
    return next(iter(kids))


def test_kill_9_loses_at_most_the_last_second_and_recover_salvages_a_torn_copy(tmp_path):
    p, out = start_run(tmp_path)
    wait_rows(p, out, 4)
    job = job_of(p)  # the job writes the file: killing it is what tears it
    killed = time.time()
    os.kill(job, signal.SIGKILL)
    _, err = p.communicate(timeout=10)
    assert p.returncode != 0 and "killed by signal 9 (SIGKILL)" in err, err
    with pytest.raises(fb.CaptureFileError, match="recover"):
        fb.load(out)  # unfinished: never loaded as if whole
    cap = fb.recover(out)
    assert cap.status == "interrupted"
    expected = int((killed - start_wall(cap)) / INTERVAL_S)
    lost = len(cap.intervals) - expected
    # at most one second of intervals waiting for their batch, and the one in flight
    assert lost >= -(int(1.0 / INTERVAL_S) + 1), (len(cap.intervals), expected)
    assert (cap.intervals["interval_s"] - INTERVAL_S).abs().max() < 1e-9

    torn = tmp_path / "torn.arrow"
    shutil.copy(out, torn)
    size = torn.stat().st_size
    with open(torn, "r+b") as f:
        f.truncate(size - 100)  # tear the last batch in half
    with pytest.raises(fb.CaptureFileError):
        fb.load(torn)
    rec = fb.recover(torn, out=tmp_path / "salvaged.arrow")
    assert rec.status == "interrupted"
    assert rec.meta["recovered"]["torn_tail"] is True
    # the torn batch (at most a second of intervals) is dropped
    assert len(cap.intervals) - int(1.0 / INTERVAL_S) - 1 <= len(rec.intervals) < len(cap.intervals)
    again = fb.load(tmp_path / "salvaged.arrow")
    assert again.intervals.equals(rec.intervals)
    os.remove(torn)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_flashback_run_ends_its_job_and_the_capture_is_whole(tmp_path, sig):
    """The job runs in a child of a session of its own (as fio's), which no signal sent to
    ``flashback run``'s process group reaches: when ``flashback run`` dies of a signal, the
    child is sent SIGTERM, ends the run ``interrupted`` and finishes the file."""
    p, out = start_run(tmp_path)
    wait_rows(p, out, 4)
    job = job_of(p)
    p.send_signal(sig)
    p.communicate(timeout=10)

    end = time.monotonic() + 10
    while running(job) and time.monotonic() < end:
        time.sleep(0.02)
    assert not running(job), "the job outlived flashback run"
    cap = fb.load(out)
    assert cap.status == "interrupted"
    assert cap.intervals["read_ios"].sum() == cap.meta["totals"]["read_ios"]
