"""A real target's job in a child process of a session of its own (``session="own"``, as fio
runs a job; issue 29): the same bytes, rows and errors as the run in this process, the stop
request, a killed child, a dead parent, and no zombie left. Loop devices need root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import children, running

import flashback as fb
from flashback.errors import RunInterrupted

MiB = 1 << 20


def read_dev(dev: str, n: int) -> bytes:
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.pread(fd, n, 0)
    finally:
        os.close(fd)


@pytest.mark.parametrize("jobs", [1, 2])
def test_own_session_writes_and_returns_what_the_run_in_this_process_does(loopdev, tmp_path, jobs):
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, jobs=jobs, size="4m", loops=1,
                    seed=11, interval="0.005s")  # fmt: skip
    caps, data = {}, {}
    for session in ("shared", "own"):
        dev = loopdev(8 * MiB)
        out = tmp_path / f"{session}.arrow"
        caps[session] = fb.run(dev, w, destroy=dev, session=session, capture_path=out)
        data[session] = read_dev(dev, 8 * MiB)
        # the rows returned are the rows the child streamed to the file, bit for bit
        assert fb.load(out).intervals.equals(caps[session].intervals)
    shared, own = caps["shared"], caps["own"]
    assert data["own"] == data["shared"], "same offsets and data"
    assert data["own"] != bytes(8 * MiB)
    assert own.status == shared.status == "complete"
    assert own.meta["totals"] == shared.meta["totals"]
    assert set(own.meta) == set(shared.meta)
    assert own.intervals.columns == shared.intervals.columns
    assert own.intervals["host_written_bytes"][-1] == 4 * MiB
    assert int(own.intervals["write_ios"].sum()) == 1024
    assert children() == {}, "the child was reaped"


def test_the_job_runs_in_a_session_of_its_own_and_the_target_keeps_count(loopdev):
    dev = loopdev(8 * MiB)
    t = fb.Target(dev, destroy=dev)
    seen: list[tuple[int, int, int]] = []  # (child pid, its session, rows so far)

    def progress(row: dict) -> None:
        for pid in children():
            seen.append((pid, os.getsid(pid), t.host_written_bytes))

    w = fb.Workload(rw="write", bs="64k", size="4m", loops=2, interval="0.01s")
    cap = t.run(w, progress=progress, session="own")
    assert seen, "the progress callback ran while the child ran"
    assert all(pid == sid and sid != os.getsid(0) for pid, sid, _ in seen), seen
    assert cap.status == "complete"
    assert t.host_written_bytes == 8 * MiB, "the target's count comes back from the child"
    assert t.meta["kind"] == "block"
    seen.clear()
    t.run(w, progress=progress, session="shared")
    assert seen == [] and t.host_written_bytes == 16 * MiB


def test_a_stop_from_the_progress_callback_ends_the_child_interrupted_with_a_whole_capture(
    loopdev, tmp_path
):
    dev = loopdev(8 * MiB)
    out = tmp_path / "cap.arrow"
    rows = []

    def progress(row: dict) -> None:
        rows.append(row)
        if len(rows) == 3:
            raise KeyboardInterrupt

    w = fb.Workload(rw="randread", bs="4k", time="20s", interval="0.05s")
    t0 = time.monotonic()
    with pytest.raises(RunInterrupted) as e:
        fb.run(dev, w, progress=progress, capture_path=out, session="own")
    assert time.monotonic() - t0 < 5
    cap = fb.load(out)  # whole: the child finished the file
    assert cap.status == "interrupted" == e.value.capture.status
    assert cap.intervals.equals(e.value.capture.intervals)
    assert children() == {}


def test_a_killed_child_raises_a_device_error_naming_the_signal(loopdev, tmp_path):
    dev = loopdev(8 * MiB)
    out = tmp_path / "cap.arrow"

    def progress(row: dict) -> None:
        for pid in children():
            os.kill(pid, signal.SIGKILL)

    w = fb.Workload(rw="randread", bs="4k", time="20s", interval="0.05s")
    t0 = time.monotonic()
    with pytest.raises(fb.DeviceError, match=r"killed by signal 9 \(SIGKILL\)"):
        fb.run(dev, w, progress=progress, capture_path=out, session="own")
    assert time.monotonic() - t0 < 5
    assert children() == {}, "no zombie"
    with pytest.raises(fb.CaptureFileError, match="recover"):
        fb.load(out)  # torn, as after a kill -9 of a run in this process
    assert fb.recover(out).status == "interrupted"


@pytest.mark.parametrize(
    "fields, err",
    [
        ({"rw": "read", "offset": "16m"}, fb.ParameterError),  # past the end: the run's check
        ({"rw": "read", "engine": "psync", "iodepth": "4", "size": "1m"}, None),
    ],
)
def test_errors_and_results_of_the_run_itself_are_the_same_in_either_session(loopdev, fields, err):
    dev = loopdev(8 * MiB)
    got = {}
    for session in ("shared", "own"):
        if err is None:
            got[session] = fb.run(dev, fb.Workload(**fields), session=session).meta["engine"]
        else:
            with pytest.raises(err) as e:
                fb.run(dev, fb.Workload(**fields), session=session)
            got[session] = (type(e.value), str(e.value))
    assert got["own"] == got["shared"]


def test_an_existing_capture_file_is_refused_the_same_in_either_session(loopdev, tmp_path):
    dev = loopdev(8 * MiB)
    out = tmp_path / "cap.arrow"
    out.write_bytes(b"keep")
    got = []
    for session in ("shared", "own"):
        with pytest.raises(fb.FlashbackError) as e:
            fb.run(dev, fb.Workload(rw="read", size="1m"), session=session, capture_path=out)
        got.append((type(e.value), str(e.value)))
    assert got[0] == got[1]
    assert out.read_bytes() == b"keep"


def test_a_session_that_is_neither_own_nor_shared_is_refused():
    with pytest.raises(fb.ParameterError, match="session='mine'"):
        fb.run("sim:generic?scale=1/256", fb.Workload(rw="write", size="1m"), session="mine")


def test_when_the_parent_dies_the_child_ends_the_run_and_the_capture_is_whole(loopdev, tmp_path):
    dev = loopdev(8 * MiB)
    out = tmp_path / "cap.arrow"
    script = textwrap.dedent(f"""
        import flashback as fb
        w = fb.Workload(rw="randread", bs="4k", time="30s", interval="0.05s")
        fb.run({dev!r}, w, capture_path={str(out)!r})  # the default: own
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 20
    child = None
    while time.monotonic() < end and child is None:
        child = next(iter(children(p.pid)), None)
        time.sleep(0.05)
    assert child is not None, p.communicate(timeout=5)
    while not out.exists() and time.monotonic() < end:
        time.sleep(0.05)
    time.sleep(0.3)
    p.kill()
    p.communicate(timeout=10)

    while running(child) and time.monotonic() < end:
        time.sleep(0.02)
    assert not running(child), "the child outlived its parent"
    cap = fb.load(out)  # the child got SIGTERM and finished the file
    assert cap.status == "interrupted"
    assert cap.meta["duration_s"] < 10


def test_a_job_in_its_own_session_does_not_wait_for_a_slow_callback_or_the_gil(tmp_path):
    """In this process the job's thread waits for each progress call and for the GIL
    (``test_live``'s ``observer_s`` tests); in its own session it only writes the rows to a
    pipe: a callback that sleeps 20 ms per row, and a thread holding the GIL for most of a
    second, leave its ``observer_s`` far below either."""
    import threading

    held: list[float] = []
    calls: list[dict] = []

    def hog() -> None:
        t0 = time.perf_counter()
        sum(range(3 * 10**7))  # one C call: the GIL is not released until it returns
        held.append(time.perf_counter() - t0)

    hogs: list[threading.Thread] = []

    def slow(row: dict) -> None:
        calls.append(row)
        if not hogs:
            hogs.append(threading.Thread(target=hog))
            hogs[0].start()
        time.sleep(0.02)

    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, size="8m", time="1s", interval="0.05s")
    cap = fb.run(str(tmp_path / "s.bin"), w, progress=slow, session="own")
    hogs[0].join()
    assert len(calls) >= 10
    assert cap.meta["observer_s"] < min(held[0], len(calls) * 0.02) / 4, (
        cap.meta["observer_s"], held, len(calls))  # fmt: skip


def test_the_child_holds_none_of_the_parents_other_descriptors(loopdev):
    """A pipe this process holds open (another thread may wait for its write end to close)
    is not held by the run's child as well: it keeps stdio, the target and its pipe."""
    dev = loopdev(8 * MiB)
    r, w_fd = os.pipe()
    mine = os.readlink(f"/proc/self/fd/{w_fd}")
    held: list[list[str]] = []

    def progress(row: dict) -> None:
        for pid in children():
            fds = []
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    fds.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    pass
            held.append(fds)

    try:
        w = fb.Workload(rw="randread", bs="4k", time="0.3s", interval="0.05s")
        fb.run(dev, w, progress=progress, session="own")
    finally:
        os.close(r)
        os.close(w_fd)
    # the child's last rows may reach the callback after it closed the target: the listings
    # taken while it held the target are the run's
    running = [fds for fds in held if dev in fds]
    assert running, held
    assert all(mine not in fds for fds in held), held[0]


def _sessions_of_children(stop: threading.Event, seen: list[tuple[int, int]]) -> None:
    """Polls this process's children and their sessions until ``stop``."""
    while not stop.is_set():
        for pid in children():
            try:
                seen.append((pid, os.getsid(pid)))
            except ProcessLookupError:
                pass
        time.sleep(0.002)


@pytest.mark.parametrize("session", ["own", "shared"])
def test_replay_trace_runs_its_job_in_the_session_asked(tmp_path, session):
    # a recorded trace on a file: 0.4 s of recorded time, replayed at its timing
    lines = ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    lines += [f"{i * 20} /dev/x write {i * 4096} 4096" for i in range(21)]
    log = tmp_path / "timed.iolog"
    log.write_text("\n".join(lines) + "\n")
    target = fb.Target(tmp_path / "scratch.bin", size="1m")
    seen: list[tuple[int, int]] = []
    stop = threading.Event()
    poll = threading.Thread(target=_sessions_of_children, args=(stop, seen))
    poll.start()
    try:
        cap = fb.replay_trace(
            log, target=target, time_scale=1.0, interval_s=0.05, direct=False, session=session
        )
    finally:
        stop.set()
        poll.join()
    assert int(cap.intervals["write_ios"].sum()) == 21
    own = [pid for pid, sid in seen if pid == sid and sid != os.getsid(0)]
    assert bool(own) == (session == "own"), seen
    assert not children(), "the child was reaped"


def test_replay_trace_refuses_a_session_that_is_neither_own_nor_shared(tmp_path):
    log = tmp_path / "t.iolog"
    log.write_text("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x write 0 4096\n")
    with pytest.raises(fb.ParameterError, match="session='thread' is not a session"):
        fb.replay_trace(log, target=tmp_path / "scratch.bin", session="thread")
    assert not (tmp_path / "scratch.bin").exists(), "refused before the target was opened"


@pytest.mark.parametrize("session", ["own", "shared"])
def test_flashback_run_session_flag(tmp_path, session):
    # the CLI's job: a child of `flashback run` in a session of its own, or none with shared
    out = tmp_path / "cap.arrow"
    cmd = [
        sys.executable, "-m", "flashback", "run", str(tmp_path / "scratch.bin"),
        "--rw", "randread", "--bs", "4k", "--size", "8m", "--time", "30s",
        "--interval", "0.1s", "-o", str(out), "--no-progress", "--session", session,
    ]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while not (out.exists() and out.stat().st_size > 0) and time.monotonic() < end:
            assert p.poll() is None, p.communicate()[1]
            time.sleep(0.05)
        kids = list(children(p.pid))
        assert [os.getsid(k) == k for k in kids] == ([True] if session == "own" else []), kids
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
    assert fb.load(out).status == "interrupted"


def test_flashback_run_refuses_a_session_that_is_neither_own_nor_shared(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "flashback", "run", str(tmp_path / "x.bin"), "--session", "thread"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "invalid choice: 'thread'" in r.stderr
    assert not (tmp_path / "x.bin").exists()
