"""The README's code, run as written: its Python blocks in one interpreter (a reader's
session, in order) and its shell blocks line by line, in a fresh temporary directory.

What the README leaves to the reader — a fio job file, a block trace and a fio output
directory it names — is put in that directory first (real fio output pinned in
``tests/data/fio``); nothing in the README's own text is replaced.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DATA = Path(__file__).resolve().parent / "data" / "fio"
BIN = Path(sys.executable).parent

#: shell lines not run here, with the reason
NOT_RUN = {
    "make demo": "builds the project (what this test runs in)",
    "make test": "runs this test",
    "flashback report -o out": "what `make demo` runs: tests/test_report_demo.py",
    "flashback purge /dev/sdb --plan": "needs a real SATA drive: tests/test_purge.py runs the "
    "CLI against fake controllers, tests/hardware/ on a spare drive",
    "flashback purge /dev/sdb --destroy /dev/sdb --method ata-secure-erase-enhanced": "erases a "
    "real drive: tests/test_purge.py runs it against a fake hdparm",
}

#: Python blocks not run here (a block containing the key), with the reason
NOT_RUN_PY = {
    "fb.purge(": "needs a real NVMe drive: tests/test_purge.py runs fb.purge against fake "
    "controllers, tests/hardware/ on a spare drive",
}


def blocks(lang: str) -> list[str]:
    """The README's fenced code blocks in ``lang``, in order."""
    text = README.read_text()
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def _reader_files(cwd: Path) -> None:
    """The files the README supposes the reader has: a job file, a trace, a fio run."""
    (cwd / "job.fio").write_text(
        "[global]\nfilename=job-scratch.bin\nsize=16m\n\n[writes]\nrw=randwrite\nbs=4k\n"
        "iodepth=8\nruntime=2\ntime_based=1\n"
    )
    lines = ["fio version 2 iolog", "trace.bin add", "trace.bin open"]
    lines += [f"trace.bin write {i * 4096 * 7 % (8 << 20)} 4096" for i in range(2000)]
    (cwd / "trace.iolog").write_text("\n".join([*lines, "trace.bin close", ""]))
    (cwd / "run").mkdir()
    shutil.copy(DATA / "louwrentius__fio-plot__example_data01_randwrite-04.json", cwd / "run")
    # a drive's `smartctl -j` output, for the telemetry block (real: tests/data/realdrive)
    shutil.copy(
        DATA.parent
        / "realdrive"
        / "AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-nvme.json",
        cwd / "smart.json",
    )


@pytest.fixture
def reader_dir(tmp_path: Path) -> Path:
    _reader_files(tmp_path)
    return tmp_path


def test_readme_has_code_to_run():
    assert len(blocks("python")) >= 3 and len(blocks("sh")) >= 2


def test_python_blocks_run_as_written(reader_dir: Path):
    script = "\n\n".join(b for b in blocks("python") if not any(key in b for key in NOT_RUN_PY))
    main = 'if __name__ == "__main__":\n' + "\n".join(
        "    " + line if line else "" for line in script.splitlines()
    )
    (reader_dir / "readme_blocks.py").write_text(main + "\n")
    r = subprocess.run(
        [sys.executable, "readme_blocks.py"],
        cwd=reader_dir,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "FLASHBACK_PROGRESS_EVERY_S": "5"},
    )
    assert r.returncode == 0, r.stderr[-3000:]


def _shell_lines() -> list[str]:
    out = []
    for block in blocks("sh"):
        for line in block.splitlines():
            cmd = line.split(" #", 1)[0].strip()
            if cmd:
                out.append(cmd)
    return out


def test_shell_blocks_run_as_written(reader_dir: Path):
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "FLASHBACK_PROGRESS_EVERY_S": "5"}
    ran = []
    for cmd in _shell_lines():
        if cmd in NOT_RUN:
            continue
        r = subprocess.run(
            shlex.split(cmd), cwd=reader_dir, capture_output=True, text=True, timeout=600, env=env
        )
        assert r.returncode == 0, f"{cmd}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"
        ran.append(cmd)
    assert any(c.startswith("flashback run scratch.bin") for c in ran)
