"""A target can be read while it runs (progress callback, another thread), and Ctrl-C in
``fb.run`` raises ``KeyboardInterrupt`` after the capture is saved and marked interrupted.

The hangs this guards against held the GIL forever, so each case runs in a child process; the
timeout only keeps a regression from hanging the suite.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import flashback as fb

GUARD_S = 120


def run_child(code: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=GUARD_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child hung (no result after {GUARD_S} s)")


def test_progress_callback_reads_the_running_target():
    p = run_child(
        """
        import flashback as fb
        t = fb.Target("sim:generic?scale=1/256")
        seen = []
        def cb(row):
            seen.append((t.host_written_bytes, t.size_bytes, t.kind, t.meta["kind"], repr(t)))
        cap = t.run(fb.Workload(rw="write", bs="128k", size="32m", loops=2, interval="0.01s"), progress=cb)
        assert len(seen) == len(cap.intervals) > 3, (len(seen), len(cap.intervals))
        hw = [s[0] for s in seen]
        assert hw == sorted(hw) and hw[-1] == 64 << 20, hw
        assert hw == cap.intervals["host_written_bytes"].to_list(), hw
        assert t.host_written_bytes == 64 << 20
        print("ok", len(seen))
        """
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok")


def test_another_thread_reads_the_target_during_a_run():
    p = run_child(
        """
        import threading, flashback as fb
        t = fb.Target("sim:generic?scale=1/256")
        stop = threading.Event(); reads = []
        def reader():
            while not stop.is_set():
                reads.append((t.size_bytes, t.host_written_bytes, t.meta["size_bytes"]))
        th = threading.Thread(target=reader); th.start()
        # long enough (> 100 ms of wall time) for the run to poll for Ctrl-C while it runs
        cap = t.run(fb.Workload(rw="randwrite", bs="4k", size="32m", written="3g", interval="0.05s"))
        stop.set(); th.join()
        assert reads and all(r[0] == t.size_bytes for r in reads)
        assert max(r[1] for r in reads) <= 3 << 30 and len({r[1] for r in reads}) > 2
        # and an operation from another thread waits for the run instead of deadlocking
        done = []
        th = threading.Thread(target=lambda: done.append(t.run(fb.Workload(rw="randwrite", bs="4k", size="8m", written="8m"))))
        th.start()
        t.run(fb.Workload(rw="randwrite", bs="4k", size="8m", written="16m"))
        th.join()
        assert done and done[0].status == "complete"
        print("ok", len(reads))
        """
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok")


def test_a_callback_that_runs_its_own_target_gets_one_sentence():
    p = run_child(
        """
        import flashback as fb
        t = fb.Target("sim:generic?scale=1/256")
        w = fb.Workload(rw="write", bs="128k", size="8m", interval="0.01s")
        def cb(row):
            t.discard()
        try:
            t.run(w, progress=cb)
        except fb.ParameterError as e:
            assert "busy running in this thread" in str(e), e
        else:
            raise AssertionError("the nested call was not refused")
        assert t.run(w).status == "complete"  # usable again afterwards
        print("ok")
        """
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok")


def test_ctrl_c_in_a_progress_callback_stops_the_run_and_keeps_its_rows(tmp_path: Path):
    """Ctrl-C often lands in the progress callback (the Python code that runs during a run):
    the run stops as a polled Ctrl-C stops it, status ``interrupted``, its rows kept, and the
    callback is not called again. It used to fail the call like any callback error (the
    native run raised ``KeyboardInterrupt``), losing the rows."""
    p = run_child(
        f"""
        import flashback as fb
        from flashback.capture import from_native
        t = fb.Target({str(tmp_path / "scratch.bin")!r}, size="16m")
        w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, time="60s", interval="0.05s")
        calls = []
        def cb(row):
            calls.append(row)
            if len(calls) == 2:
                raise KeyboardInterrupt
        table, meta = t._t.run(w.fields(), progress=cb)
        cap = from_native(table, meta)
        assert meta["status"] == "interrupted", meta["status"]
        assert len(calls) == 2, len(calls)
        # stopped early: a whole 60 s run has 1200 rows
        assert 2 <= len(cap.intervals) < 1200, len(cap.intervals)
        print("ok", len(cap.intervals))
        """
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok")


CTRL_C_CHILD = """
import sys, flashback as fb
out = sys.argv[1]
w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, size="16m", time="60s", interval="0.2s")
try:
    for i in range(3):
        fb.run(sys.argv[2], w, capture_path=out)
        print("the loop carried on", flush=True)
except KeyboardInterrupt as e:
    print("raised", type(e).__name__, e.capture.status, len(e.capture.intervals), flush=True)
    raise
"""


def test_ctrl_c_in_fb_run_raises_after_saving_the_capture(tmp_path: Path):
    out = tmp_path / "cap.arrow"
    p = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD, str(out), str(tmp_path / "scratch.bin")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + GUARD_S
        while time.monotonic() < end:
            assert p.poll() is None, p.stderr.read()
            try:
                if len(fb.recover(out).intervals) >= 3:
                    break
            except fb.CaptureFileError:
                pass
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert "the loop carried on" not in stdout
    assert "raised RunInterrupted interrupted" in stdout, (stdout, stderr)
    assert "flashback.errors.RunInterrupted" in stderr  # uncaught, as Ctrl-C should be
    assert p.returncode != 0
    cap = fb.load(out)  # saved whole, with its final metadata
    assert cap.status == "interrupted"
    assert len(cap.intervals) == int(stdout.split()[-1]) >= 3
