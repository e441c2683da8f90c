"""flashback vs fio, side by side on the same loop device and the same file.

For each workload both tools run as child processes, alternately, ``reps`` times; the table
gives the medians, the IOPS ratio (flashback / fio, ≥ 1 is the target) and the CPU-seconds-
per-I/O ratio (flashback / fio, ≤ 1 is the target). CPU: fio's from ``wait4`` of its process
(everything it did), flashback's from ``getrusage`` inside its process around the run (the
interpreter's start-up is left out; recording and capture writing are in). Then the cost of
per-interval recording: the same flashback run with recording on and off.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MiB = 1 << 20

WORKLOADS = [
    ("4k randread QD32", {"rw": "randread", "bs": "4k", "iodepth": 32}),
    ("4k randwrite QD32", {"rw": "randwrite", "bs": "4k", "iodepth": 32}),
    ("128k write QD8", {"rw": "write", "bs": "128k", "iodepth": 8}),
    ("4k randread psync QD1", {"rw": "randread", "bs": "4k", "iodepth": 1, "engine": "psync"}),
    # several jobs: flashback merges every job's completions into one recorder
    ("4k randread 2 jobs x QD16", {"rw": "randread", "bs": "4k", "iodepth": 16, "jobs": 2}),
]


def run_fio(target: str, fields: dict, time_s: float) -> dict:
    engine = fields.get("engine", "io_uring")
    cmd = [
        "fio", "--name=bench", f"--filename={target}", f"--ioengine={engine}",
        f"--rw={fields['rw']}", f"--bs={fields['bs']}", f"--iodepth={fields['iodepth']}",
        "--direct=1", f"--runtime={time_s}", "--time_based", "--output-format=json",
        f"--numjobs={fields.get('jobs', 1)}", "--group_reporting",
    ]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"fio failed: {cmd}")
    job = json.loads(out[out.index("{") :])["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    dur = max(job["read"]["runtime"], job["write"]["runtime"], job["job_runtime"]) / 1e3
    return {"ios": ios, "duration_s": dur, "cpu_s": ru.ru_utime + ru.ru_stime}


def run_flashback(
    target: str, fields: dict, time_s: float, *, destroy: str | None, recording: bool = True
) -> dict:
    f = dict(fields, time=f"{time_s}s")
    cmd = [sys.executable, str(HERE / "fb_child.py"), target, "--fields", json.dumps(f)]
    if destroy:
        cmd += ["--destroy", destroy]
    if not recording:
        cmd.append("--no-recording")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"flashback failed: {p.stderr.strip()}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if r["status"] != "complete":
        raise RuntimeError(f"flashback run ended {r['status']}")
    return r


def summarize(runs: list[dict]) -> tuple[float, float]:
    """Median IOPS and median CPU µs per I/O."""
    iops = statistics.median(r["ios"] / r["duration_s"] for r in runs)
    cpu = statistics.median(r["cpu_s"] / max(r["ios"], 1) * 1e6 for r in runs)
    return iops, cpu


def compare(
    target: str, label: str, *, destroy: str | None, time_s: float, reps: int
) -> list[dict]:
    rows = []
    for name, fields in WORKLOADS:
        fio_runs, fb_runs = [], []
        for _ in range(reps):
            fio_runs.append(run_fio(target, fields, time_s))
            fb_runs.append(run_flashback(target, fields, time_s, destroy=destroy))
        fio_iops, fio_cpu = summarize(fio_runs)
        fb_iops, fb_cpu = summarize(fb_runs)
        row = {
            "target": label, "workload": name,
            "fio_iops": fio_iops, "fb_iops": fb_iops, "iops_ratio": fb_iops / fio_iops,
            "fio_cpu_us_per_io": fio_cpu, "fb_cpu_us_per_io": fb_cpu, "cpu_ratio": fb_cpu / fio_cpu,
        }  # fmt: skip
        rows.append(row)
        print(
            f"{label:5} {name:22} fio {fio_iops:9.0f} IOPS {fio_cpu:6.2f} µs/IO | "
            f"flashback {fb_iops:9.0f} IOPS {fb_cpu:6.2f} µs/IO | "
            f"IOPS ratio {row['iops_ratio']:.2f}  CPU/IO ratio {row['cpu_ratio']:.2f}",
            flush=True,
        )
    return rows


def record_microbench() -> dict | None:
    """ns per completion of Session.record+tick, recording on and off (native example)."""
    exe = HERE.parents[1] / "native" / "target" / "release" / "examples" / "record_cost"
    if not exe.exists():
        return None
    p = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def recording_cost(target: str, *, destroy: str | None, time_s: float, reps: int) -> dict:
    """Same flashback run with per-interval recording on and off, alternately."""
    fields = {"rw": "randread", "bs": "4k", "iodepth": 32}
    on, off = [], []
    for _ in range(reps):
        on.append(run_flashback(target, fields, time_s, destroy=destroy, recording=True))
        off.append(run_flashback(target, fields, time_s, destroy=destroy, recording=False))
    on_iops, on_cpu = summarize(on)
    off_iops, off_cpu = summarize(off)
    r = {
        "iops_on": on_iops, "iops_off": off_iops, "iops_cost": 1 - on_iops / off_iops,
        "cpu_on_us": on_cpu, "cpu_off_us": off_cpu, "cpu_cost": on_cpu / off_cpu - 1,
    }  # fmt: skip
    print(
        f"recording on vs off (4k randread QD32, median of {reps}): IOPS {on_iops:.0f} vs "
        f"{off_iops:.0f} ({r['iops_cost'] * 100:+.1f} % lost), CPU/IO {on_cpu:.2f} vs "
        f"{off_cpu:.2f} µs ({r['cpu_cost'] * 100:+.1f} %)",
        flush=True,
    )
    micro = record_microbench()
    if micro:
        extra_ns = micro["record_ns_on"] - micro["record_ns_off"]
        r["micro"] = micro
        r["micro_cost"] = extra_ns / (off_cpu * 1e3)
        print(
            f"recording microbenchmark: {micro['record_ns_on']:.1f} ns per completion on, "
            f"{micro['record_ns_off']:.1f} ns off: {extra_ns:.1f} ns = "
            f"{r['micro_cost'] * 100:.2f} % of the {off_cpu:.2f} µs CPU per I/O",
            flush=True,
        )
    return r


def make_loop(tmp: Path, size: int) -> str:
    img = tmp / "bench-loop.img"
    with open(img, "wb") as f:
        f.truncate(size)
    return subprocess.run(
        ["losetup", "--find", "--show", str(img)], check=True, capture_output=True, text=True
    ).stdout.strip()


def prefill(target: str, size: int) -> None:
    """Writes real data everywhere so reads read something."""
    subprocess.run(
        ["fio", "--name=fill", f"--filename={target}", "--rw=write", "--bs=1m", f"--size={size}",
         "--direct=1", "--ioengine=io_uring", "--iodepth=8", "--output-format=terse"],
        check=True, capture_output=True,
    )  # fmt: skip


def main(*, time_s: float = 3.0, reps: int = 2, size: int = 256 * MiB) -> dict:
    results: dict = {"time_s": time_s, "reps": reps, "rows": []}
    with tempfile.TemporaryDirectory(prefix="flashback-bench-") as d:
        tmp = Path(d)
        dev = None
        if os.geteuid() == 0:
            dev = make_loop(tmp, size)
        else:
            print("not root: skipping the loop device (files only)")
        try:
            if dev:
                prefill(dev, size)
                results["rows"] += compare(dev, "loop", destroy=dev, time_s=time_s, reps=reps)
            f = tmp / "bench.bin"
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import flashback as fb; fb.Target({str(f)!r}, size={size})",
                ],
                check=True,
            )
            prefill(str(f), size)
            results["rows"] += compare(str(f), "file", destroy=None, time_s=time_s, reps=reps)
            t = dev or str(f)
            results["recording"] = recording_cost(t, destroy=dev, time_s=time_s, reps=2 * reps)
        finally:
            if dev:
                subprocess.run(["losetup", "--detach", dev], check=False)
    return results
