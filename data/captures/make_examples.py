"""Regenerates the example captures in this folder (``python data/captures/make_examples.py``).

Each example is a real run: two replays on simulated drives, one flashback capture on a
temporary file, and fio's own logs and JSON from the same workload on a temporary file.
Nothing is written outside a temporary directory except the examples themselves.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import flashback as fb

HERE = Path(__file__).resolve().parent
FIO_ARGS = [
    "--name=randwrite",
    "--rw=randwrite",
    "--bs=4k",
    "--iodepth=32",
    "--ioengine=io_uring",
    "--direct=1",
    "--size=256m",
    "--time_based",
    "--runtime=20",
    "--randrepeat=0",
    "--log_avg_msec=1000",
]


def sim_examples() -> list[str]:
    made = []
    rep = fb.replay("anandtech-consistency", scale="1/32")
    rep.capture().save(HERE / "sim-intel-530-consistency-1of32.parquet")
    made.append("sim-intel-530-consistency-1of32.parquet")
    rep = fb.replay("puget-cdm-loop", scale="1/64")
    rep.capture().save(HERE / "sim-intel-520-puget-1of64.parquet")
    made.append("sim-intel-520-puget-1of64.parquet")
    return made


def file_examples(tmp: Path) -> list[str]:
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, size="256m", time="20s")
    cap = fb.run(tmp / "flashback.bin", w)
    cap.save(HERE / "file-randwrite-4k-qd32.arrow")
    made = ["file-randwrite-4k-qd32.arrow"]
    if shutil.which("fio") is None:
        print("fio is not installed; the fio example was not regenerated", file=sys.stderr)
        return made
    out = HERE / "fio-randwrite-4k-qd32"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    prefix = tmp / "fio"
    subprocess.run(
        [
            "fio",
            f"--filename={tmp / 'fio.bin'}",
            *FIO_ARGS,
            "--output-format=json",
            f"--output={out / 'fio.json'}",
            f"--write_bw_log={prefix}",
            f"--write_iops_log={prefix}",
            f"--write_lat_log={prefix}",
        ],
        check=True,
    )
    (out / "logs").mkdir()
    for log in sorted(tmp.glob("fio_*.log")):
        shutil.copy(log, out / "logs" / log.name)
    doc = json.loads((out / "fio.json").read_text())
    (out / "command.txt").write_text(
        "fio --filename=<temporary file> "
        + " ".join(FIO_ARGS)
        + " --output-format=json --write_bw_log=fio --write_iops_log=fio --write_lat_log=fio\n"
        + f"fio {doc.get('fio version', '?')}, {platform.system()} {platform.release()}\n"
    )
    made.append(out.name + "/")
    return made


def main() -> None:
    made = sim_examples()
    with tempfile.TemporaryDirectory(prefix="flashback-examples-") as d:
        made += file_examples(Path(d))
    print("wrote " + ", ".join(made) + f" in {HERE}")


if __name__ == "__main__":
    main()
