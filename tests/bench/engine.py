"""flashback vs fio, side by side on the same loop device and the same file.

    .venv/bin/python tests/bench/engine.py [--time-s 2] [--reps 5]

For each workload both tools run as child processes, alternately (ABBA…), ``reps`` times.
The table gives each tool's median IOPS and CPU µs per I/O, and the ratios flashback / fio
(IOPS ≥ 1 and CPU per I/O ≤ 1 are the targets) as the median over the reps of each adjacent
pair's ratio, which cancels most of the drift of other load on the machine; the spread of
those per-pair ratios (min–max) shows how much noise is left. CPU: fio's from ``wait4`` of its
process (everything it did), flashback's from ``getrusage`` inside its process around the run
(the interpreter's start-up is left out; recording and capture writing are in). Then the cost
of per-interval recording: the same flashback run with recording on and off, paired the same
way, and the recording microbenchmark's ns per completion. The load average is printed with
every table: on a busy machine, loop-device IOPS follow the CPU share the loop's kernel
worker gets, not the tool.

At psync QD1 each I/O waits on cross-CPU wake-ups (tool → loop worker → softirq → tool), so
IOPS follow the VM's wake-up latency more than any tool; that row gets twice the pairs and two
more references in the same rotation: the same flashback run started from Rust with no
interpreter around it (``native/examples/fb_run.rs``), and a bare ``pread`` loop with two clock
reads per I/O and nothing else (``native/examples/pread_floor.rs``), the most any psync tool
could do at that moment.

Random-read workloads of one io_uring job are also run against fio's own ring benchmark,
``t/io_uring`` (registered files, buffers and ring like flashback; no polling; the same
submission batch, 4, and one completion waited for; no per-I/O latency tracking, which
flashback always does), when the environment variable ``FIO_T_IO_URING`` names a binary built
from fio's source (``make t/io_uring`` in a fio checkout); without it the row is left out and
the table says so. Its I/O count is its printed per-second IOPS times the run time, CPU from
``wait4`` as for fio.

Write workloads are also run against ``fio --refill_buffers``. By default fio fills its buffers
once and writes them again and again (64 MiB written as 128 KiB blocks compressed 122.7× with
zstd level 3 here; with ``--refill_buffers`` 1.004×), while flashback's ``data=random`` writes
fresh AES-CTR bytes every I/O. The default is the speed comparison users make; the refill run
is the like-for-like one for CPU per I/O.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from flashback.units import parse_size

HERE = Path(__file__).resolve().parent
MiB = 1 << 20
EXAMPLES = HERE.parents[1] / "native" / "target" / "release" / "examples"
FLOOR = EXAMPLES / "pread_floor"
FB_RUN = EXAMPLES / "fb_run"

WORKLOADS = [
    ("4k randread QD32", {"rw": "randread", "bs": "4k", "iodepth": 32}),
    ("4k randwrite QD32", {"rw": "randwrite", "bs": "4k", "iodepth": 32}),
    ("128k write QD8", {"rw": "write", "bs": "128k", "iodepth": 8}),
    ("4k randread psync QD1", {"rw": "randread", "bs": "4k", "iodepth": 1, "engine": "psync"}),
    # several jobs: flashback merges every job's completions into one recorder
    ("4k randread 2 jobs x QD16", {"rw": "randread", "bs": "4k", "iodepth": 16, "jobs": 2}),
]


def run_fio(target: str, fields: dict, time_s: float, *, refill: bool = False) -> dict:
    engine = fields.get("engine", "io_uring")
    cmd = [
        "fio", "--name=bench", f"--filename={target}", f"--ioengine={engine}",
        f"--rw={fields['rw']}", f"--bs={fields['bs']}", f"--iodepth={fields['iodepth']}",
        "--direct=1", f"--runtime={time_s}", "--time_based", "--output-format=json",
        f"--numjobs={fields.get('jobs', 1)}", "--group_reporting",
    ]  # fmt: skip
    if refill:
        cmd.append("--refill_buffers")
    out, cpu_s = run_child(cmd)
    job = json.loads(out[out.index("{") :])["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    dur = max(job["read"]["runtime"], job["write"]["runtime"], job["job_runtime"]) / 1e3
    return {"ios": ios, "duration_s": dur, "cpu_s": cpu_s}


#: fio's ring benchmark, built from fio's source by the user (never by this project).
T_IO_URING = os.environ.get("FIO_T_IO_URING")
#: flashback's default batches: entries handed over per enter and completions waited for
#: (native/src/engine/uring/, SUBMIT_BATCH and COMPLETE_BATCH); engine_ring.py and
#: engine_instr.py compare at t/io_uring's other batches too
SUBMIT_BATCH, COMPLETE_BATCH = 4, 1


def t_io_uring_applies(fields: dict) -> bool:
    """t/io_uring reads at random with one thread: compare like with like only."""
    return (
        fields["rw"] == "randread"
        and fields.get("engine", "io_uring") == "io_uring"
        and fields.get("jobs", 1) == 1
    )


def device_reads(target: str) -> int | None:
    """Reads the block device ``target`` has completed (the first field of its sysfs
    ``stat``); ``None`` for a file or a device without one."""
    stat = Path(f"/sys/block/{Path(target).name}/stat")
    if not target.startswith("/dev/") or not stat.exists():
        return None
    return int(stat.read_text().split()[0])


def run_t_io_uring(target: str, fields: dict, time_s: float) -> dict:
    """fio's ``t/io_uring`` at flashback's depth and default batches (``-s4 -c1``); no
    polling (loop devices and files cannot). Its I/Os are the reads the device completed
    meanwhile where it has a counter (its printed first second times the run time was
    0.54-1.60x that over 24 runs of 2 s, issue 29), else from what it printed."""
    bs = parse_size(fields["bs"], field="bs")
    runtime = max(1, round(time_s))
    cmd = [
        T_IO_URING, f"-d{fields['iodepth']}", f"-s{SUBMIT_BATCH}", f"-c{COMPLETE_BATCH}",
        f"-b{bs}", "-p0", "-B1", "-F1", "-X1", "-t0", f"-r{runtime}", target,
    ]  # fmt: skip
    before = device_reads(target)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"t/io_uring failed: {out.strip()[-300:]}")
    after = device_reads(target)
    ios = after - before if before is not None and after is not None else None
    return {"ios": t_io_uring_ios(out, runtime) if ios is None else ios,
            "duration_s": runtime, "cpu_s": ru.ru_utime + ru.ru_stime}  # fmt: skip


def t_io_uring_ios(out: str, runtime_s: int) -> float:
    """I/Os of a ``t/io_uring`` run of ``runtime_s`` seconds from what it printed: the mean of
    its once-a-second ``IOPS=`` lines times the run time."""
    per_s = [
        float(line.split("IOPS=")[1].split(",")[0].replace("K", "e3").replace("M", "e6"))
        for line in out.splitlines()
        if line.startswith("IOPS=")
    ]
    if not per_s:
        raise RuntimeError(f"t/io_uring printed no IOPS: {out.strip()[-300:]}")
    return statistics.mean(per_s) * runtime_s


def spawn_rusage(cmd: list[str]) -> tuple[str, resource.struct_rusage]:
    """Runs ``cmd`` to its end; its stdout and its resource usage from ``wait4`` (user and
    system CPU seconds, voluntary and involuntary context switches, of all its threads)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with p.stdout, p.stderr:
        out = p.stdout.read()
        err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed: {err.decode().strip()[-300:]}")
    return out.decode(), ru


def run_child(cmd: list[str]) -> tuple[str, float]:
    """Runs ``cmd``; returns its stdout and the CPU seconds of the process (from ``wait4``)."""
    out, ru = spawn_rusage(cmd)
    return out, ru.ru_utime + ru.ru_stime


def run_floor(target: str, fields: dict, time_s: float) -> dict:
    """The bare ``pread`` loop (``native/examples/pread_floor.rs``): the most IOPS any psync
    tool can get from ``target`` right now."""
    bs = parse_size(fields["bs"], field="bs")
    out, cpu_s = run_child([str(FLOOR), target, str(time_s), str(bs)])
    return dict(json.loads(out.strip().splitlines()[-1]), cpu_s=cpu_s)


def run_native(target: str, fields: dict, time_s: float) -> dict:
    """The same flashback run from Rust (``native/examples/fb_run.rs``), no interpreter."""
    kv = [f"{k}={v}" for k, v in dict(fields, time=f"{time_s}s").items()]
    out, cpu_s = run_child([str(FB_RUN), target, *kv])
    meta = json.loads(out.strip().splitlines()[-1])
    tot = meta["totals"]
    ios = tot["read_ios"] + tot["write_ios"] + tot["trim_ios"]
    return {"ios": ios, "duration_s": meta["duration_s"], "cpu_s": cpu_s}


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


def iops_of(r: dict) -> float:
    return r["ios"] / r["duration_s"]


def cpu_us_of(r: dict) -> float:
    return r["cpu_s"] / max(r["ios"], 1) * 1e6


def summarize(runs: list[dict]) -> tuple[float, float]:
    """Median IOPS and median CPU µs per I/O."""
    return statistics.median(map(iops_of, runs)), statistics.median(map(cpu_us_of, runs))


def paired(a: list[dict], b: list[dict], of) -> tuple[float, float, float]:
    """Median, min and max over the reps of ``of(a[i]) / of(b[i])``."""
    r = [of(x) / of(y) for x, y in zip(a, b, strict=True)]
    return statistics.median(r), min(r), max(r)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def compare(
    target: str, label: str, *, destroy: str | None, time_s: float, reps: int
) -> list[dict]:
    rows = []
    for name, fields in WORKLOADS:
        writes = "write" in fields["rw"]
        psync = fields.get("engine") == "psync"
        tools = ("fio", "fb")
        if writes:
            tools += ("fio-refill",)
        if psync and FLOOR.exists() and FB_RUN.exists():
            tools += ("floor", "native")
        if T_IO_URING and t_io_uring_applies(fields):
            tools += ("t_io_uring",)
        # at QD1 every I/O waits on two cross-CPU wake-ups, the most noise-prone case: more pairs
        n = 2 * reps if psync else reps
        runs: dict[str, list[dict]] = {t: [] for t in tools}
        for i in range(n):
            for tool in tools if i % 2 == 0 else tools[::-1]:
                if tool == "fb":
                    r = run_flashback(target, fields, time_s, destroy=destroy)
                elif tool == "floor":
                    r = run_floor(target, fields, time_s)
                elif tool == "native":
                    r = run_native(target, fields, time_s)
                elif tool == "t_io_uring":
                    r = run_t_io_uring(target, fields, time_s)
                else:
                    r = run_fio(target, fields, time_s, refill=tool == "fio-refill")
                runs[tool].append(r)
        fio_runs, fb_runs = runs["fio"], runs["fb"]
        refill_runs, floor_runs = runs.get("fio-refill"), runs.get("floor")
        native_runs = runs.get("native")
        fio_iops, fio_cpu = summarize(fio_runs)
        fb_iops, fb_cpu = summarize(fb_runs)
        iops_r, iops_lo, iops_hi = paired(fb_runs, fio_runs, iops_of)
        cpu_r, cpu_lo, cpu_hi = paired(fb_runs, fio_runs, cpu_us_of)
        row = {
            "target": label, "workload": name, "reps": n, "time_s": time_s,
            "fio_iops": fio_iops, "fb_iops": fb_iops, "iops_ratio": iops_r,
            "iops_ratio_min": iops_lo, "iops_ratio_max": iops_hi,
            "fio_cpu_us_per_io": fio_cpu, "fb_cpu_us_per_io": fb_cpu, "cpu_ratio": cpu_r,
            "cpu_ratio_min": cpu_lo, "cpu_ratio_max": cpu_hi,
        }  # fmt: skip
        # the engine's time-weighted mean of I/Os in flight (io_uring only)
        in_flight = [r["inflight_mean"] for r in fb_runs if r.get("inflight_mean") is not None]
        row["fb_inflight_mean"] = statistics.median(in_flight) if in_flight else None
        rows.append(row)
        print(
            f"{label:5} {name:25} fio {fio_iops:8.0f} IOPS {fio_cpu:6.2f} µs/IO | "
            f"flashback {fb_iops:8.0f} IOPS {fb_cpu:6.2f} µs/IO | "
            f"IOPS ratio {iops_r:.2f} ({iops_lo:.2f}–{iops_hi:.2f})  "
            f"CPU/IO ratio {cpu_r:.2f} ({cpu_lo:.2f}–{cpu_hi:.2f})"
            + (f"  in flight {row['fb_inflight_mean']:.2f}" if in_flight else ""),
            flush=True,
        )
        if refill_runs:
            ref_iops, ref_cpu = summarize(refill_runs)
            ri, ri_lo, ri_hi = paired(fb_runs, refill_runs, iops_of)
            rc, rc_lo, rc_hi = paired(fb_runs, refill_runs, cpu_us_of)
            row.update(
                refill_iops=ref_iops, refill_cpu_us_per_io=ref_cpu, refill_iops_ratio=ri,
                refill_cpu_ratio=rc, refill_cpu_ratio_min=rc_lo, refill_cpu_ratio_max=rc_hi,
            )  # fmt: skip
            print(
                f"{label:5} {'  vs fio --refill_buffers':25} fio {ref_iops:8.0f} IOPS "
                f"{ref_cpu:6.2f} µs/IO | (fresh data per I/O on both sides)          | "
                f"IOPS ratio {ri:.2f} ({ri_lo:.2f}–{ri_hi:.2f})  "
                f"CPU/IO ratio {rc:.2f} ({rc_lo:.2f}–{rc_hi:.2f})",
                flush=True,
            )
        if runs.get("t_io_uring"):
            t_runs = runs["t_io_uring"]
            t_iops, t_cpu = summarize(t_runs)
            tc, tc_lo, tc_hi = paired(fb_runs, t_runs, cpu_us_of)
            ti = paired(fb_runs, t_runs, iops_of)[0]
            row.update(
                t_io_uring_iops=t_iops, t_io_uring_cpu_us_per_io=t_cpu, t_io_uring_iops_ratio=ti,
                t_io_uring_cpu_ratio=tc, t_io_uring_cpu_ratio_range=[tc_lo, tc_hi],
            )  # fmt: skip
            print(
                f"{label:5} {'  vs fio t/io_uring':25} {t_iops:8.0f} IOPS {t_cpu:6.2f} µs/IO "
                f"| same depth, -s{SUBMIT_BATCH} -c{COMPLETE_BATCH}, no latency tracking       | "
                f"IOPS ratio {ti:.2f}  CPU/IO ratio {tc:.2f} ({tc_lo:.2f}–{tc_hi:.2f}) "
                "(target ≤ 1.0)",
                flush=True,
            )
        if floor_runs:
            fl_iops, fl_cpu = summarize(floor_runs)
            nat_iops, nat_cpu = summarize(native_runs)
            of_floor = {k: paired(runs[k], floor_runs, iops_of) for k in ("fb", "native", "fio")}
            row.update(
                floor_iops=fl_iops, floor_cpu_us_per_io=fl_cpu, native_iops=nat_iops,
                native_cpu_us_per_io=nat_cpu,
                native_iops_ratio=paired(native_runs, fio_runs, iops_of)[0],
                **{f"{k}_floor_ratio": v[0] for k, v in of_floor.items()},
                **{f"{k}_floor_ratio_range": [v[1], v[2]] for k, v in of_floor.items()},
            )  # fmt: skip
            print(
                f"{label:5} {'  flashback from Rust':25} {nat_iops:8.0f} IOPS {nat_cpu:6.2f} µs/IO "
                f"| no Python around the same engine (native/examples/fb_run.rs)        | "
                f"IOPS ratio {row['native_iops_ratio']:.2f}",
                flush=True,
            )
            print(
                f"{label:5} {'  bare pread loop (floor)':25} {fl_iops:8.0f} IOPS {fl_cpu:6.2f} µs/IO"
                " | fraction of the floor's IOPS: "
                + ", ".join(
                    f"{k} {v[0]:.2f} ({v[1]:.2f}–{v[2]:.2f})"
                    for k, v in zip(
                        ("flashback", "from Rust", "fio"), of_floor.values(), strict=True
                    )
                ),
                flush=True,
            )
    print(f"{label:5} {load()}", flush=True)
    return rows


def native_example(name: str) -> dict | None:
    """The JSON line a native benchmark example prints (built by ``make bench``)."""
    exe = EXAMPLES / name
    if not exe.exists():
        return None
    p = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def record_microbench() -> dict | None:
    """ns per completion of Session.record+tick, recording on and off."""
    return native_example("record_cost")


def recording_cost(target: str, *, destroy: str | None, time_s: float, reps: int) -> dict:
    """Same flashback run with per-interval recording on and off, alternately."""
    fields = {"rw": "randread", "bs": "4k", "iodepth": 32}
    on, off = [], []
    run_flashback(target, fields, 1, destroy=destroy)  # warm the caches first
    for i in range(reps):
        for recording in (True, False) if i % 2 == 0 else (False, True):
            r = run_flashback(target, fields, time_s, destroy=destroy, recording=recording)
            (on if recording else off).append(r)
    on_iops, on_cpu = summarize(on)
    off_iops, off_cpu = summarize(off)
    iops_r, iops_lo, iops_hi = paired(on, off, iops_of)
    cpu_r, cpu_lo, cpu_hi = paired(on, off, cpu_us_of)
    # recording runs in user mode: its cost shows most directly in user CPU per I/O
    user_r, user_lo, user_hi = paired(on, off, lambda r: r["cpu_user_s"] / max(r["ios"], 1))
    user_ns_on = statistics.median(r["cpu_user_s"] / max(r["ios"], 1) * 1e9 for r in on)
    user_ns_off = statistics.median(r["cpu_user_s"] / max(r["ios"], 1) * 1e9 for r in off)
    r = {
        "reps": reps, "time_s": time_s,
        "iops_on": on_iops, "iops_off": off_iops, "iops_cost": 1 - iops_r,
        "iops_cost_range": [1 - iops_hi, 1 - iops_lo],
        "cpu_on_us": on_cpu, "cpu_off_us": off_cpu, "cpu_cost": cpu_r - 1,
        "cpu_cost_range": [cpu_lo - 1, cpu_hi - 1],
        "user_cpu_cost": user_r - 1, "user_cpu_cost_range": [user_lo - 1, user_hi - 1],
        "user_ns_per_io_on": user_ns_on, "user_ns_per_io_off": user_ns_off,
    }  # fmt: skip
    print(
        f"recording on vs off (4k randread QD32, {reps} pairs): IOPS {on_iops:.0f} vs "
        f"{off_iops:.0f}: {r['iops_cost'] * 100:+.1f} % lost (pairs "
        f"{(1 - iops_hi) * 100:+.1f} … {(1 - iops_lo) * 100:+.1f} %); CPU/IO {on_cpu:.2f} vs "
        f"{off_cpu:.2f} µs: {r['cpu_cost'] * 100:+.1f} % (pairs {(cpu_lo - 1) * 100:+.1f} … "
        f"{(cpu_hi - 1) * 100:+.1f} %); user CPU/IO {(user_r - 1) * 100:+.1f} % (pairs "
        f"{(user_lo - 1) * 100:+.1f} … {(user_hi - 1) * 100:+.1f} %), medians {user_ns_on:.0f} vs "
        f"{user_ns_off:.0f} ns; {load()}",
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


def ram_dir() -> str | None:
    """tmpfs for the loop device's backing file (None: the default temp dir).

    A backing file on disk makes loop-device runs measure the page cache instead of the tool:
    once memory reclaim (here DAMON's proactive pageout) evicts its pages, the loop worker
    reads them back from disk one at a time and both tools drop from ~150k to ~5k IOPS at
    random. tmpfs pages stay in memory.
    """
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def make_loop(tmp: Path, size: int) -> str:
    img = tmp / "bench-loop.img"
    with open(img, "wb") as f:
        f.truncate(size)
    return subprocess.run(
        ["losetup", "--find", "--show", str(img)], check=True, capture_output=True, text=True
    ).stdout.strip()


@contextlib.contextmanager
def loop_device(size: int):
    """A loop device over a ``size``-byte file in tmpfs (see [`ram_dir`]), written full of data
    (``prefill``), detached on the way out; yields its path. Root only."""
    with tempfile.TemporaryDirectory(prefix="flashback-loop-", dir=ram_dir()) as ram:
        dev = make_loop(Path(ram), size)
        try:
            prefill(dev, size)
            yield dev
        finally:
            subprocess.run(["losetup", "--detach", dev], check=False)


@contextlib.contextmanager
def page_cached_file(size: int):
    """A ``size``-byte file of random data on ext4, made on a loop device over a tmpfs file of
    this bench's own and mounted under a temporary directory, read once so that every page is
    cached; yields its path, then unmounts and detaches. Root only.

    A buffered read of a cached page on ext4 is done inside the ``io_uring_enter`` that
    submits it (ext4 takes reads that must not block), so a QD1 run there wakes no other
    thread: no loop device worker, no io_uring worker. tmpfs, zram and the loop device itself
    each hand a read to a kernel worker (``iou-wrk-*``, ``kworker``) whose CPU the scheduler
    draws per wake-up, which on this VM decides a run's IOPS more than the tool (issue 29).
    Here IOPS and latency are the engines' own cost per I/O, the loop's and the syscalls'.
    """
    with contextlib.ExitStack() as stack:
        ram = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="flashback-pc-", dir=ram_dir())
        )
        dev = make_loop(Path(ram), size + 64 * MiB)  # room for ext4's own metadata
        stack.callback(subprocess.run, ["losetup", "--detach", dev], check=False)
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
        # an empty directory, removed as one (never as a tree: it is a mount point)
        mnt = tempfile.mkdtemp(prefix="flashback-pc-mnt-")
        stack.callback(os.rmdir, mnt)
        subprocess.run(["mount", "-t", "ext4", dev, mnt], check=True, capture_output=True)
        stack.callback(unmount, mnt)
        path = Path(mnt) / "f.img"
        with open(path, "wb") as f:
            for _ in range(size // MiB):
                f.write(os.urandom(MiB))
        path.read_bytes()
        yield str(path)


def unmount(mnt: str) -> None:
    """Unmounts ``mnt``; if it is busy (a tool's child still holding a file), detaches it
    lazily, so the directory and the loop device under it can still go."""
    if subprocess.run(["umount", mnt], capture_output=True).returncode != 0:
        subprocess.run(["umount", "--lazy", mnt], check=True, capture_output=True)


def prefill(target: str, size: int) -> None:
    """Writes real data everywhere so reads read something."""
    subprocess.run(
        ["fio", "--name=fill", f"--filename={target}", "--rw=write", "--bs=1m", f"--size={size}",
         "--direct=1", "--ioengine=io_uring", "--iodepth=8", "--output-format=terse"],
        check=True, capture_output=True,
    )  # fmt: skip


def main(*, time_s: float = 2.0, reps: int = 4, size: int = 256 * MiB) -> dict:
    results: dict = {"time_s": time_s, "reps": reps, "rows": []}
    print(f"engine: {reps} alternating reps of {time_s} s per tool and workload; {load()}")
    if not T_IO_URING:
        print(
            "FIO_T_IO_URING is not set: no comparison with fio's t/io_uring (build it in a fio "
            "checkout with `make t/io_uring` and point FIO_T_IO_URING at the binary)"
        )
    with (
        tempfile.TemporaryDirectory(prefix="flashback-bench-") as d,
        tempfile.TemporaryDirectory(prefix="flashback-bench-", dir=ram_dir()) as ram,
    ):
        tmp = Path(d)
        dev = None
        if os.geteuid() == 0:
            dev = make_loop(Path(ram), size)
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
            results["recording"] = recording_cost(t, destroy=dev, time_s=time_s, reps=3 * reps)
            fill = native_example("fill_cost")
            if fill:
                results["fill"] = fill
                print(
                    f"random write data (AES, refilled per I/O): {fill['fill_gbps_4k']:.1f} GB/s "
                    f"in 4 KiB buffers, {fill['fill_gbps_128k']:.1f} GB/s in 128 KiB buffers",
                    flush=True,
                )
        finally:
            if dev:
                subprocess.run(["losetup", "--detach", dev], check=False)
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-s", type=float, default=2.0, help="seconds per run")
    ap.add_argument("--reps", type=int, default=4, help="runs per tool and workload")
    a = ap.parse_args()
    main(time_s=a.time_s, reps=a.reps)
