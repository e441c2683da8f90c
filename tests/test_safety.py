"""Every safety refusal, with the target checksummed before and after: a refusal writes
nothing. Block-device cases use loop devices (root); the foreign-file cases run anywhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import need_root_and, sh, sha256

import flashback as fb

MiB = 1 << 20
WRITE = fb.Workload(rw="write", bs="64k", size="1m")


def one_sentence(e: BaseException) -> str:
    msg = str(e)
    assert msg and "\n" not in msg, msg
    return msg


def fill(dev: str, byte: int = 0xA5, n: int = 4 * MiB) -> None:
    with open(dev, "r+b") as f:
        f.write(bytes([byte]) * n)
        f.flush()
        os.fsync(f.fileno())


# --- regular files -------------------------------------------------------------------------


def test_foreign_file_is_never_written_grown_or_trimmed(tmp_path):
    path = tmp_path / "precious.bin"
    path.write_bytes(os.urandom(MiB))
    before, st = sha256(path), path.stat()
    t = fb.Target(path, size="4m")  # a create size never grows a foreign file
    for action in (
        lambda: t.run(fb.Workload(rw="write", bs="4k")),
        lambda: t.run(fb.Workload(rw="randtrim", bs="4k")),
        lambda: t.run(fb.Workload(rw="randrw", bs="4k")),
        lambda: t.discard(),
        lambda: t.sanitize(),
        lambda: fb.run(path, WRITE),
    ):
        with pytest.raises(fb.SafetyError) as ei:
            action()
        msg = one_sentence(ei.value)
        assert "did not create" in msg and "overwrite" in msg
    assert sha256(path) == before
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_overwrite_allows_a_foreign_file(tmp_path):
    path = tmp_path / "mine-now.bin"
    path.write_bytes(bytes(MiB))
    cap = fb.run(path, fb.Workload(rw="write", bs="64k", data="pattern:11"), overwrite=True)
    assert cap.status == "complete"
    assert path.read_bytes() == b"\x11" * MiB


def test_cli_refusal_is_one_line_and_nonzero(tmp_path):
    path = tmp_path / "precious.bin"
    path.write_bytes(b"x" * MiB)
    before = sha256(path)
    p = subprocess.run(
        [sys.executable, "-m", "flashback", "run", str(path), "--rw", "write", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0
    assert p.stderr.strip().count("\n") == 0 and "overwrite" in p.stderr
    assert sha256(path) == before


# --- block devices -------------------------------------------------------------------------


def test_block_device_without_destroy_refuses_writes_but_reads(loopdev):
    dev = loopdev(16 * MiB)
    fill(dev)
    before = sha256(dev)
    t = fb.Target(dev)
    assert t.kind == "block" and t.size_bytes == 16 * MiB
    for action in (lambda: t.run(WRITE), lambda: t.discard(), lambda: t.sanitize()):
        with pytest.raises(fb.SafetyError, match="destroy="):
            action()
    with pytest.raises(fb.SafetyError, match="destroy="):
        fb.run(dev, WRITE)
    cap = t.run(fb.Workload(rw="read", bs="1m"))
    assert cap.intervals["read_bytes"].sum() == 16 * MiB
    assert sha256(dev) == before


def test_destroy_naming_another_device_is_refused(loopdev):
    dev, other = loopdev(8 * MiB), loopdev(8 * MiB)
    fill(dev)
    before = sha256(dev)
    with pytest.raises(fb.SafetyError, match="does not name"):
        fb.run(dev, WRITE, destroy=other)
    with pytest.raises(fb.SafetyError, match="does not name"):
        fb.Target(dev, destroy="/dev/definitely-not-here")
    assert sha256(dev) == before


def test_symlink_to_a_device_is_resolved_on_both_sides(loopdev, tmp_path):
    dev = loopdev(8 * MiB)
    fill(dev)
    link = tmp_path / "fast-disk"
    link.symlink_to(dev)
    before = sha256(dev)
    with pytest.raises(fb.SafetyError, match="destroy="):
        fb.run(link, WRITE)
    with pytest.raises(fb.SafetyError, match="does not name"):
        fb.run(link, WRITE, destroy=str(tmp_path / "other-link"))
    assert sha256(dev) == before
    # naming the device through either path confirms it
    cap = fb.run(link, fb.Workload(rw="write", bs="64k", size="1m", data="zeros"), destroy=dev)
    assert cap.meta["target"]["path"] == os.path.realpath(dev)
    cap = fb.run(dev, fb.Workload(rw="write", bs="64k", size="1m", data="zeros"), destroy=str(link))
    assert cap.status == "complete"


def test_mounted_device_is_refused_even_with_destroy(loopdev):
    dev = loopdev(32 * MiB)
    need_root_and("mkfs.ext4")
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    mnt = loopdev.mount(dev)
    (mnt / "keep.txt").write_text("data that must survive")
    os.sync()
    before = sha256(dev)
    with pytest.raises(fb.SafetyError) as ei:
        fb.run(dev, WRITE, destroy=dev)
    msg = one_sentence(ei.value)
    assert "mounted at" in msg and str(mnt) in msg
    with pytest.raises(fb.SafetyError, match="mounted"):
        fb.Target(dev, destroy=dev)
    os.sync()
    assert sha256(dev) == before
    assert (mnt / "keep.txt").read_text() == "data that must survive"


def test_partition_table_with_mounted_partition_is_refused(loopdev):
    need_root_and("sfdisk", "mkfs.ext4")
    dev = loopdev(32 * MiB, partitions=True)
    part = loopdev.partition(dev)
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", part)
    mnt = loopdev.mount(part)
    os.sync()
    before = sha256(dev)
    with pytest.raises(fb.SafetyError) as ei:
        fb.run(dev, WRITE, destroy=dev)
    assert f"partition {part} is mounted at {mnt}" in one_sentence(ei.value)
    # the partition named instead of the disk is a different device
    with pytest.raises(fb.SafetyError, match="does not name"):
        fb.run(dev, WRITE, destroy=part)
    with pytest.raises(fb.SafetyError, match="mounted"):
        fb.run(part, WRITE, destroy=part)
    os.sync()
    assert sha256(dev) == before


def test_unmounted_partitioned_device_is_writable_when_confirmed(loopdev):
    need_root_and("sfdisk")
    dev = loopdev(16 * MiB, partitions=True)
    loopdev.partition(dev)
    cap = fb.run(dev, fb.Workload(rw="write", bs="64k", size="1m", data="pattern:77"), destroy=dev)
    assert cap.status == "complete"
    with open(dev, "rb") as f:
        assert f.read(MiB) == b"\x77" * MiB


def test_swap_device_is_refused(loopdev):
    need_root_and("mkswap", "swapon", "swapoff")
    dev = loopdev(16 * MiB)
    sh("mkswap", dev)
    r = sh("swapon", dev, check=False)
    if r.returncode != 0:
        pytest.skip(f"swapon is not permitted here ({r.stderr.strip()})")
    try:
        before = sha256(dev)
        with pytest.raises(fb.SafetyError, match="swap"):
            fb.run(dev, WRITE, destroy=dev)
        assert sha256(dev) == before
    finally:
        sh("swapoff", dev, check=False)


def test_held_device_is_refused(loopdev):
    need_root_and("dmsetup")
    dev = loopdev(16 * MiB)
    name = f"fbtest{os.getpid()}"
    sectors = 16 * MiB // 512
    r = subprocess.run(
        ["dmsetup", "create", name],
        input=f"0 {sectors} linear {dev} 0\n",
        text=True,
        capture_output=True,
    )
    if r.returncode != 0:
        pytest.skip(f"device-mapper is not usable here ({r.stderr.strip().splitlines()[0]})")
    try:
        before = sha256(dev)
        with pytest.raises(fb.SafetyError, match="held by"):
            fb.run(dev, WRITE, destroy=dev)
        assert sha256(dev) == before
    finally:
        sh("dmsetup", "remove", name, check=False)


def test_system_disk_is_refused():
    need_root_and()
    root_dev = os.stat("/").st_dev
    sysdir = f"/sys/dev/block/{os.major(root_dev)}:{os.minor(root_dev)}"
    if not os.path.exists(sysdir):
        pytest.skip("the root filesystem is not on a block device (overlay or tmpfs)")
    dev = "/dev/" + os.path.basename(os.path.realpath(sysdir))
    if not os.path.exists(dev):
        pytest.skip(f"no device node {dev} for the root filesystem")
    # The refusal comes before the device is opened for writing; Target() itself never writes.
    with pytest.raises(fb.SafetyError, match="running system"):
        fb.Target(dev, destroy=dev)


@pytest.mark.skipif(shutil.which("losetup") is None, reason="needs losetup")
def test_cli_refuses_block_device_without_destroy(loopdev):
    dev = loopdev(8 * MiB)
    fill(dev)
    before = sha256(dev)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "flashback",
            "run",
            dev,
            "--rw",
            "write",
            "--size",
            "1m",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0
    assert "--destroy" in p.stderr and p.stderr.strip().count("\n") == 0
    assert sha256(dev) == before
