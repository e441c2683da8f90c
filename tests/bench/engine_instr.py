"""User-space instructions and syscalls per I/O: flashback's io_uring loop against fio's
``t/io_uring`` at the same submit/complete batches, measured so the machine's load does not
enter (issue 29).

    .venv/bin/python tests/bench/engine_instr.py [--rounds 3] [--short-s 1] [--long-s 3]

Timing on a shared 2-core machine is noise; these are counts. For each tool and batch
(4/1, 8/8, 32/32; 4 KiB randread at QD32 on a loop device over a tmpfs file made here):

* **instructions/IO**: user-space instructions counted by ``valgrind --tool=cachegrind``
  (``Ir``; the kernel's share is not counted: syscall and block-layer work is the same kernel
  code for both tools);
* **syscalls/IO**: every syscall entered, counted by ``perf stat -e raw_syscalls:sys_enter``
  (a tracepoint: no hardware counter needed, little slowdown), or ``strace -c -f`` where perf
  cannot (then the slowdown shifts completions per wait and the row says so);
* **I/Os**: the loop device's own count of reads completed (``/sys/block/loopN/stat``), the
  same for both tools.

Each count is taken over a short and a long run and the difference divided by the difference in
I/Os: start-up, set-up and the end-of-run report (flashback's meta JSON) cancel, what is left
is the cost of the steady loop. Under valgrind the program runs some 30× slower while the loop
device does not, so more completions are waiting at each ``io_uring_enter`` than in a native
run: per-enter costs are amortised over more I/Os on both sides; the syscall counts come from
native-speed runs. ``t/io_uring`` runs without latency tracking; flashback records every I/O's
latency in its histograms. flashback draws its offsets as ``t/io_uring`` does, each uniformly
(``engine_ring.T_IO_URING_OFFSETS``; since session 21: the counts below, from before, are of
its default permutation, some 30 instructions per I/O more at 8/8). ``t/io_uring`` is built
by ``engine_ring.build_t_io_uring`` (from fio's source, for a generic x86-64: valgrind cannot
run AVX-512, which ``-march=native`` may emit). Rows: the median over ``rounds`` interleaved
rounds, with the range, and the load average (printed, though counts do not depend on it).
``$FB_RUN_BASELINE`` naming an ``fb_run`` built from an earlier commit adds it to the rotation
("before").

Caveat: the end-of-run report does not cancel exactly. ``fb_run`` prints its latency histograms
as JSON, and a longer run under valgrind records a wider spread of latencies, so more buckets:
at 4/1 and 8/8 the printing (``memrchr``, ``write_all``, ``serde_json``) came to 15–20
instructions per I/O of a 5-pass run, noise of that size in these rows. ``callgrind``'s
inclusive count of ``engine::uring::run`` (the loop and its recording, no start-up, no report)
over the same runs is the steadier figure for flashback alone.

Measured (issue 29, session 16, 2026-11-26, load 4.1–4.7, 3 rounds): instructions/IO at 4/1,
8/8, 32/32 — ``t/io_uring`` 178 / 148 / 138, flashback 577 / 446 / 346, the build before
(``FB_RUN_BASELINE``) 594 / 448 / 412; syscalls/IO equal (ratios 1.04 / 1.01 / 1.01). A second
run (load 2.4–3.4): flashback 637 / 395 / 314 against 554 / 432 / 380 before, the 4/1 rows'
ranges 584–661 and 440–676 overlapping (per-enter work under valgrind varies run to run).
Inclusive ``engine::uring::run`` per I/O (5 passes of 16,384): 468 → 431 and, in a second
pair, 509 → 447 at 4/1; 391 → 346 at 8/8; 353 → 296 at 32/32. At
32/32 the loop's share is the refill ~105 (SQE built in place in the ring, slot written), the
offset permutation ~80 (four Feistel rounds of ``mix64``, the sequence itself; ``t/io_uring``'s
random offsets ~55), reaping ~63 and recording ~22.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import engine  # the loop device and prefill helpers
import engine_ring  # fb_run, the t/io_uring build and BATCHES

MiB = 1 << 20


def t_cmd(exe: str, dev: str, batch: tuple[int, int], seconds: int) -> list[str]:
    return engine_ring.t_cmd(exe, dev, batch, seconds)


def fb_cmd(dev: str, batch: tuple[int, int], loops: int, exe: str | None = None) -> list[str]:
    """``loops`` passes over the device: a count of I/Os that does not depend on the CPU share
    a run under valgrind gets (``t/io_uring`` can only run for a time)."""
    fields = {"rw": "randread", "bs": "4k", "iodepth": 32, "loops": loops,
              **engine_ring.T_IO_URING_OFFSETS}  # fmt: skip
    return engine_ring.fb_cmd(exe or str(engine_ring.FB_RUN), dev, fields, None, batch)


def run_counted(dev: str, cmd: list[str]) -> int:
    """Runs ``cmd`` (output discarded); the loop device's reads completed meanwhile."""
    before = engine_ring.loop_reads(dev)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed: {p.stderr.strip()[-300:]}")
    return engine_ring.loop_reads(dev) - before


def instructions(dev: str, cmd: list[str]) -> tuple[int, int]:
    """(user-space instructions, I/Os) of ``cmd`` under cachegrind."""
    with tempfile.NamedTemporaryFile(prefix="flashback-cg-", dir=engine.ram_dir()) as out:
        ios = run_counted(
            dev,
            ["valgrind", "--tool=cachegrind", "--fair-sched=yes", "--cache-sim=no", "--branch-sim=no",
             f"--cachegrind-out-file={out.name}", *cmd],
        )  # fmt: skip
        summary = [
            ln for ln in Path(out.name).read_text().splitlines() if ln.startswith("summary:")
        ]
    if not summary:
        raise RuntimeError(f"cachegrind wrote no summary for {Path(cmd[0]).name}")
    return int(summary[0].split()[1]), ios


def perf_works() -> bool:
    """perf can count the syscall tracepoint here."""
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "true"],
                       capture_output=True, text=True)  # fmt: skip
    return p.returncode == 0 and "raw_syscalls:sys_enter" in p.stderr


def syscalls(dev: str, cmd: list[str], *, perf: bool) -> tuple[int, int]:
    """(syscalls entered by ``cmd`` and its threads, I/Os)."""
    with tempfile.NamedTemporaryFile(prefix="flashback-sc-", dir=engine.ram_dir()) as out:
        if perf:
            wrap = ["perf", "stat", "-x,", "-o", out.name, "-e", "raw_syscalls:sys_enter"]
        else:
            wrap = ["strace", "-f", "-c", "-o", out.name]
        ios = run_counted(dev, [*wrap, *cmd])
        text = Path(out.name).read_text()
    if perf:
        line = next(ln for ln in text.splitlines() if "raw_syscalls:sys_enter" in ln)
        return int(line.split(",")[0]), ios
    # strace -c: the last line is "100.00 <seconds> <usecs/call> <calls> [<errors>] total"
    total = [ln for ln in text.splitlines() if ln.rstrip().endswith("total")]
    return int(total[-1].split()[3]), ios


def marginal(count, cmd, short: int, long: int) -> float:
    """(count(long) − count(short)) / (I/Os(long) − I/Os(short)): the steady loop's cost.
    ``cmd(n)`` is the command at length ``n``; a timed run that got so little CPU that the long
    run made under 1.5× the short one's I/O is made again twice as long (at most twice)."""
    a, ia = count(cmd(short))
    for k in (1, 2, 4):
        b, ib = count(cmd(long * k))
        if ib >= 1.5 * ia:
            return (b - a) / (ib - ia)
    raise RuntimeError(f"the long run made too little I/O against the short one ({ib} vs {ia})")


def fmt(v: list[float], digits: int = 0) -> str:
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def measure(dev: str, exe: str, rounds: int, short_s: int, long_s: int) -> list[dict]:
    perf = perf_works()
    how = "perf stat raw_syscalls:sys_enter" if perf else "strace -c -f (slows syscalls)"
    print(f"syscalls counted with {how}; instructions with cachegrind", flush=True)
    rows = []
    for batch in engine_ring.BATCHES:
        cmds = {
            "t": lambda s, b=batch: t_cmd(exe, dev, b, s),
            "fb": lambda n, b=batch: fb_cmd(dev, b, n),
        }
        if engine_ring.BASELINE:
            cmds["before"] = lambda n, b=batch: fb_cmd(dev, b, n, engine_ring.BASELINE)
        # t/io_uring: seconds; flashback: passes over the device (16,384 I/Os each)
        lengths = {"t": (short_s, long_s), "fb": (1, 5), "before": (1, 5)}
        got: dict[str, dict[str, list[float]]] = {n: {"instr": [], "sys": []} for n in cmds}
        for r in range(rounds):
            for n in cmds if r % 2 == 0 else list(cmds)[::-1]:
                c = cmds[n]
                got[n]["instr"].append(marginal(lambda x: instructions(dev, x), c, *lengths[n]))
                got[n]["sys"].append(
                    marginal(lambda x: syscalls(dev, x, perf=perf), c, *lengths[n])
                )
        ratio = {
            k: [f / t for f, t in zip(got["fb"][k], got["t"][k], strict=True)]
            for k in ("instr", "sys")
        }
        la = engine.load()
        row = {"batch": list(batch), "rounds": rounds, "load": la, "syscalls_by": how,
               "t_instr_per_io": got["t"]["instr"], "fb_instr_per_io": got["fb"]["instr"],
               "t_syscalls_per_io": got["t"]["sys"], "fb_syscalls_per_io": got["fb"]["sys"],
               "instr_ratio": statistics.median(ratio["instr"]),
               "syscalls_ratio": statistics.median(ratio["sys"])}  # fmt: skip
        before = ""
        if "before" in got:
            row["before_instr_per_io"] = got["before"]["instr"]
            row["before_syscalls_per_io"] = got["before"]["sys"]
            before = (
                f" | before ($FB_RUN_BASELINE): {fmt(got['before']['instr'])} instructions/IO, "
                f"{fmt(got['before']['sys'], 3)} syscalls/IO"
            )
        print(
            f"4k randread QD32 -s{batch[0]} -c{batch[1]}: user instructions/IO t/io_uring "
            f"{fmt(got['t']['instr'])} flashback {fmt(got['fb']['instr'])} ratio "
            f"{fmt(ratio['instr'], 2)} | syscalls/IO t/io_uring {fmt(got['t']['sys'], 3)} "
            f"flashback {fmt(got['fb']['sys'], 3)} ratio {fmt(ratio['sys'], 2)} "
            f"(target ≤ 1.0){before}; {la}",
            flush=True,
        )
        rows.append(row)
    return rows


def main(*, rounds: int = 3, short_s: int = 1, long_s: int = 3, size: int = 64 * MiB) -> list:
    print(f"\n== io_uring engine: user instructions and syscalls per I/O vs t/io_uring "
          f"({rounds} rounds of {short_s} s and {long_s} s runs; {engine.load()})")  # fmt: skip
    if os.geteuid() != 0:
        print("not root: no loop device, instruction rows skipped")
        return []
    if not shutil.which("valgrind"):
        print("valgrind is not installed (apt-get install valgrind): instruction rows skipped")
        return []
    if not engine_ring.FB_RUN.exists():
        print(f"{engine_ring.FB_RUN} is missing (make bench builds it): instruction rows skipped")
        return []
    exe, how = engine_ring.build_t_io_uring()
    if exe is None:
        print(f"instruction rows skipped: {how}")
        return []
    print(f"t/io_uring: {how}", flush=True)
    with engine.loop_device(size) as dev:
        return measure(dev, exe, rounds, short_s, long_s)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per batch")
    ap.add_argument("--short-s", type=int, default=1, help="seconds of the short run")
    ap.add_argument("--long-s", type=int, default=3, help="seconds of the long run")
    a = ap.parse_args()
    main(rounds=a.rounds, short_s=a.short_s, long_s=a.long_s)
    sys.exit(0)
