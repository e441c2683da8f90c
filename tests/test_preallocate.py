"""A file target that does not fit its filesystem fails with one sentence and leaves nothing
behind: a new file is removed, an existing one keeps its size, and the space is returned.
Tried on a small tmpfs mounted for the test under a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import need_root_and, sh

import flashback as fb


@pytest.fixture
def small_fs(tmp_path: Path):
    need_root_and("mount", "umount")
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = sh("mount", "-t", "tmpfs", "-o", "size=8m", "flashback-test", str(mnt), check=False)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({p.stderr.strip()})")
    try:
        yield mnt
    finally:
        sh("umount", str(mnt), check=False)


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_new_file_too_big_is_removed_and_space_returned(small_fs):
    free0 = free_bytes(small_fs)
    target = small_fs / "big.bin"
    with pytest.raises(fb.FlashbackError) as e:
        fb.run(target, fb.Workload(rw="write", bs="1m", size="64m"))
    msg = str(e.value)
    assert "big.bin" in msg and "free" in msg and "\n" not in msg
    assert sorted(os.listdir(small_fs)) == [], "a file was left behind"
    assert free_bytes(small_fs) == free0


def test_existing_file_keeps_its_size_when_growth_fails(small_fs):
    target = small_fs / "mine.bin"
    cap = fb.run(target, fb.Workload(rw="write", bs="64k", size="1m"))
    assert cap.status == "complete" and target.stat().st_size == 1 << 20
    free0 = free_bytes(small_fs)
    with pytest.raises(fb.FlashbackError, match="left at its size of 1048576 bytes"):
        fb.run(target, fb.Workload(rw="write", bs="64k", size="64m"))
    assert target.stat().st_size == 1 << 20
    assert free_bytes(small_fs) == free0


def test_failed_allocation_removes_the_new_file(tmp_path):
    # the file-size limit makes fallocate itself fail (EFBIG) after the room check passed
    code = textwrap.dedent(
        f"""
        import resource, signal, flashback as fb
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        try:
            fb.run({str(tmp_path / "f.bin")!r}, fb.Workload(rw="write", bs="64k", size="4m"))
        except fb.DeviceError as e:
            print("refused:", e)
        """
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("refused:") and "the new file was removed" in p.stdout
    assert os.listdir(tmp_path) == []
