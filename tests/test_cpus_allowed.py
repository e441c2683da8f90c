"""``cpus_allowed`` and ``cpus_allowed_policy`` (fio's options of those names): a job's thread
runs on the CPUs it was given, seen from ``/proc`` while it runs, in this process and in the
job's own session; the caller's thread gets its CPUs back; a CPU the process may not use is
refused before anything is laid out or written. Loop devices need root."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import children

import flashback as fb
from flashback.errors import ParameterError

MiB = 1 << 20


def pinned_threads(pids: list[int]) -> dict[int, str]:
    """Threads of ``pids`` whose ``Cpus_allowed_list`` is not the machine's whole list: tid →
    that list, as the kernel reports it."""
    whole = Path("/proc/1/status").read_text().split("Cpus_allowed_list:")[1].split()[0]
    out = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                status = task.joinpath("status").read_text()
            except OSError:  # the thread ended
                continue
            cpus = status.split("Cpus_allowed_list:")[1].split()[0]
            if cpus != whole:
                out[int(task.name)] = cpus
    return out


class Watcher(threading.Thread):
    """Every pinned thread of this process and its children, polled every 5 ms while a run
    goes on: tid → CPU list."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, str] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.005):
            self.seen.update(pinned_threads([os.getpid(), *children()]))


def run_watched(dev: str, w: fb.Workload, session: str) -> tuple[fb.Capture, dict[int, str]]:
    watcher = Watcher()
    watcher.start()
    try:
        cap = fb.run(dev, w, session=session)
    finally:
        watcher.stop.set()
        watcher.join()
    return cap, watcher.seen


@pytest.mark.parametrize("session", ["own", "shared"])
def test_a_job_runs_on_the_cpu_it_was_given_and_the_caller_keeps_its_own(loopdev, session):
    mine = os.sched_getaffinity(0)
    if len(mine) < 2:
        pytest.skip("needs a process allowed on two CPUs, to see one chosen")
    cpu = max(mine)
    dev = loopdev(8 * MiB)
    w = fb.Workload(rw="randread", bs="4k", time="0.4s", cpus_allowed=str(cpu))
    cap, seen = run_watched(dev, w, session)
    assert cap.status == "complete" and cap.meta["totals"]["read_ios"] > 0
    assert sorted(set(seen.values())) == [str(cpu)], seen
    assert cap.meta["workload"]["cpus_allowed"] == str(cpu)
    assert cap.meta["workload"]["cpus_allowed_policy"] == "shared"
    assert os.sched_getaffinity(0) == mine
    assert pinned_threads([os.getpid()]) == {}, "every thread of this process got its CPUs back"


def test_split_gives_each_job_its_own_cpu(loopdev):
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        pytest.skip("needs a process allowed on two CPUs, one per job")
    a, b = mine[:2]
    dev = loopdev(8 * MiB)
    w = fb.Workload(rw="randread", bs="4k", jobs=2, time="0.4s", cpus_allowed=f"{a},{b}",
                    cpus_allowed_policy="split")  # fmt: skip
    cap, seen = run_watched(dev, w, "own")
    assert cap.status == "complete"
    assert sorted(seen.values()) == [str(a), str(b)], seen  # one thread per CPU
    assert cap.meta["workload"]["cpus_allowed_policy"] == "split"
    # shared (the default): every job on every CPU of the list, here one
    _, seen2 = run_watched(dev, w.replace(cpus_allowed=str(b), cpus_allowed_policy=None), "own")
    assert sorted(seen2.values()) == [str(b)] * 2, seen2


def test_a_cpu_the_process_may_not_use_is_refused_before_anything_is_written(loopdev, tmp_path):
    mine = os.sched_getaffinity(0)
    missing = next(c for c in range(1024) if c not in mine)
    dev = loopdev(4 * MiB)
    out = tmp_path / "out"
    out.mkdir()
    w = fb.Workload(rw="randwrite", bs="4k", written="1m", cpus_allowed=f"0-{missing}")
    with pytest.raises(ParameterError, match=rf"names CPU {missing}, which this process may not"):
        fb.run(dev, w, destroy=dev, capture_path=out / "c.arrow")
    with open(dev, "rb") as f:
        assert f.read() == bytes(4 * MiB), "the device was not written"
    assert list(out.iterdir()) == [], "no capture file, whole or partial"
    assert children() == {}
    # the CLI: one sentence, a non-zero exit, nothing written
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "run", dev, "--rw", "randwrite", "--written", "1m",
         "--cpus-allowed", str(missing), "--destroy", dev, "-o", str(out / "c.arrow"),
         "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert f"names CPU {missing}" in err and len(err.splitlines()) == 1, err
    assert list(out.iterdir()) == []


def test_a_fio_job_files_cpu_options_are_read(tmp_path):
    job = tmp_path / "pin.fio"
    job.write_text("[global]\ncpus_allowed=0,2-3\n[j]\nrw=randread\ncpus_allowed_policy=split\n")
    w = fb.Workload.from_fio(str(job))
    assert w.resolved["cpus_allowed"] == "0,2-3"
    assert w.resolved["cpus_allowed_policy"] == "split"
    with pytest.raises(ParameterError, match="runs backwards"):
        fb.Workload(cpus_allowed="3-2")
