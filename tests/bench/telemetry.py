"""Cost of the drive-telemetry sampler (``make bench``): the same 4K random-read QD32 run on a
loop device, once as the engine runs it there (no drive behind a loop device: no sampler) and
once with the sysfs of a drive played beside it (``fb_run --sys-root``: a recorded hwmon tree
for the loop device and a fake ``smartctl`` first on PATH replaying a real drive's
``smartctl -j`` output), so the sampler thread reads hwmon every second and runs smartctl at
its cadence while the engine runs. Interleaved pairs (alternating which goes first); prints
the median ratios of IOPS and of p99 latency (sampled / none; target: within 1 %), the
sampler's reads, and the load average.

What this cannot show: the cost of a real drive's reads (an NVMe Get Log Page through the
admin ioctl, a real smartctl talking to a SATA drive). The sampler runs them on its own thread
and the engine only try-locks its latest sample, so their duration does not reach the I/O
path; their CPU does, and it is of the order measured here (hwmon: one sysfs read; smartctl:
one process).

Needs root (losetup). Run alone: ``.venv/bin/python tests/bench/telemetry.py [PAIRS] [SECONDS]``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine
import engine_ring

REAL_SMARTCTL = (
    Path(__file__).resolve().parents[2].parent
    / "shared/realdrive/AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-ata-full.json"
)
SIZE = 256 * 2**20


def drive_tree(root: Path, dev: str) -> Path:
    """A sysfs tree under ``root`` in which block device ``dev`` has a drive with an NVMe-style
    hwmon sensor (the layout of ``/sys/block/nvme0n1/device/hwmon/hwmonN``)."""
    hw = root / "block" / dev / "device" / "hwmon" / "hwmon0"
    hw.mkdir(parents=True)
    (hw / "temp1_label").write_text("Composite\n")
    (hw / "temp1_input").write_text("45850\n")
    return root


def fake_smartctl(bin_dir: Path, recorded: Path) -> Path:
    """``smartctl`` that prints a real drive's recorded ``smartctl -j`` output."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    p = bin_dir / "smartctl"
    p.write_text(f"#!/bin/sh\ncat '{recorded}'\n")
    p.chmod(0o755)
    return bin_dir


def one(dev: str, seconds: float, sys_root: Path | None) -> dict:
    cmd = [str(engine_ring.FB_RUN), dev]
    if sys_root is not None:
        cmd += ["--sys-root", str(sys_root)]
    cmd += ["rw=randread", "bs=4k", "iodepth=32", f"time={seconds}s", "engine=io_uring"]
    out, cpu_s = engine_ring.spawn(cmd)
    meta = json.loads(out.strip().splitlines()[-1])
    lat = meta["latency"]["read"]
    sampler = meta.get("telemetry", {}).get("sampler", [])
    return {
        "iops": meta["totals"]["read_ios"] / meta["duration_s"],
        "p99_us": lat["p99_us"],
        "cpu_s": cpu_s,
        "source": meta.get("telemetry", {}).get("source"),
        "reads": {s["source"]: s["reads"] for s in sampler},
        "failed": sum(s["failed"] for s in sampler),
    }


def main(argv: list[str] | None = None) -> dict:
    argv = argv or []
    pairs = int(argv[0]) if argv else 8
    seconds = float(argv[1].rstrip("s")) if len(argv) > 1 else 3.0
    print(f"\n== telemetry sampler: {pairs} interleaved pairs of {seconds:g} s 4K randread QD32 "
          f"on a loop device, with and without a drive's sysfs and smartctl ({engine.load()})")  # fmt: skip
    if os.geteuid() != 0:
        print("not root: no loop device, telemetry rows skipped")
        return {}
    if not engine_ring.FB_RUN.exists():
        print(f"{engine_ring.FB_RUN} is missing (make bench builds it): telemetry rows skipped")
        return {}
    if not REAL_SMARTCTL.exists():
        print(f"{REAL_SMARTCTL} is missing (../shared beside the clone): telemetry rows skipped")
        return {}
    load0 = os.getloadavg()
    old_path = os.environ.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="flashback-telemetry-", dir=engine.ram_dir()) as ram:
        dev = engine.make_loop(Path(ram), SIZE)
        try:
            engine.prefill(dev, SIZE)
            root = drive_tree(Path(ram) / "sys", Path(dev).name)
            os.environ["PATH"] = f"{fake_smartctl(Path(ram) / 'bin', REAL_SMARTCTL)}:{old_path}"
            with_ = one(dev, seconds, root)
            if with_["source"] != "hwmon+smartctl" or not with_["reads"].get("hwmon"):
                raise RuntimeError(f"the sampler did not run as intended: {with_}")
            iops, p99, cpu, reads = [], [], [], []
            for i in range(pairs):
                order = (False, True) if i % 2 == 0 else (True, False)
                got = {s: one(dev, seconds, root if s else None) for s in order}
                iops.append(got[True]["iops"] / got[False]["iops"])
                p99.append(got[True]["p99_us"] / got[False]["p99_us"])
                cpu.append(got[True]["cpu_s"] / got[False]["cpu_s"])
                reads.append(got[True]["reads"])
        finally:
            os.environ["PATH"] = old_path
            engine_ring.subprocess.run(["losetup", "--detach", dev], check=False)
    load1 = os.getloadavg()
    out = {
        "pairs": pairs,
        "seconds": seconds,
        "iops_ratio_median": statistics.median(iops),
        "p99_ratio_median": statistics.median(p99),
        "cpu_ratio_median": statistics.median(cpu),
        "iops_ratios": iops,
        "p99_ratios": p99,
        "sampler_reads": reads,
        "load_avg_1m": [load0[0], load1[0]],
    }
    print(
        f"IOPS sampled/none median {out['iops_ratio_median']:.3f} "
        f"(spread {min(iops):.3f}-{max(iops):.3f}); p99 median {out['p99_ratio_median']:.3f} "
        f"(spread {min(p99):.3f}-{max(p99):.3f}); process CPU median "
        f"{out['cpu_ratio_median']:.3f}; target within 1 %"
    )
    print(f"sampler reads per run: {reads[0]}")
    print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
