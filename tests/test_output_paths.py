"""``flashback run -o`` and ``recover -o`` check their output before any I/O: a known suffix,
an existing directory, and no existing file unless ``--overwrite``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import flashback as fb


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flashback", *args], capture_output=True, text=True, timeout=300
    )


def run_args(target: Path, out: str) -> list[str]:
    return [
        "run",
        str(target),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "2m",
        "--no-progress",
        "-o",
        out,
    ]


@pytest.mark.parametrize(
    "out, says",
    [
        ("x.csv", "use a .arrow or .parquet file name"),
        ("somedir", "is a directory"),
        ("nodir/x.parquet", "that directory does not exist"),
        ("nodir/x.arrow", "that directory does not exist"),
    ],
)
def test_bad_output_is_refused_before_the_target_is_touched(tmp_path, out, says):
    (tmp_path / "somedir").mkdir()
    target = tmp_path / "scratch.bin"
    p = cli(*run_args(target, str(tmp_path / out)))
    assert p.returncode == 2, p.stderr
    assert says in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not target.exists(), "the run started before -o was checked"


def test_existing_output_needs_overwrite(tmp_path):
    target = tmp_path / "scratch.bin"
    out = tmp_path / "cap.arrow"
    out.write_bytes(b"another capture, or anything")
    p = cli(*run_args(target, str(out)))
    assert p.returncode == 2 and "already exists" in p.stderr and "--overwrite" in p.stderr
    assert out.read_bytes() == b"another capture, or anything" and not target.exists()
    p = cli(*run_args(target, str(out)), "--overwrite")
    assert p.returncode == 0, p.stderr
    assert fb.load(out).status == "complete"


def test_recover_output_is_checked_and_never_silently_replaced(tmp_path):
    src = tmp_path / "cap.arrow"
    fb.run(
        "sim:generic?scale=1/256", fb.Workload(rw="write", bs="64k", size="2m"), capture_path=src
    )
    dest = tmp_path / "cap.recovered.arrow"
    dest.write_bytes(b"keep me")
    p = cli("recover", str(src))
    assert p.returncode == 2 and "already exists" in p.stderr
    assert dest.read_bytes() == b"keep me"
    p = cli("recover", str(src), "-o", str(tmp_path / "x.txt"))
    assert p.returncode == 2 and ".arrow or .parquet" in p.stderr
    p = cli("recover", str(src), "--overwrite")
    assert p.returncode == 0, p.stderr
    assert fb.load(dest).status == "complete"
