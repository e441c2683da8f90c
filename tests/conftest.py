"""Shared fixtures: loop devices on sparse files, checksums, small helpers.

Loop devices need root. Tests that use them skip with the reason elsewhere; CI runs as root.
Every loop device, mount and temporary file made here is removed at teardown.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0


def _have(cmd: str) -> bool:
    return shutil.which(cmd) is not None


def need_root_and(*cmds: str) -> None:
    """Skips the calling test unless we are root and every command exists."""
    if not IS_ROOT:
        pytest.skip("needs root to create loop devices (CI runs as root)")
    missing = [c for c in cmds if not _have(c)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (make setup installs them as root)")


def sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's or block device's whole contents."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


class LoopFactory:
    """Makes loop devices on sparse files in a temporary directory; cleans up everything."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.devices: list[str] = []
        self.mounts: list[Path] = []
        self.n = 0

    def __call__(self, size_bytes: int = 64 << 20, *, partitions: bool = False) -> str:
        need_root_and("losetup")
        self.n += 1
        backing = self.tmp / f"loop{self.n}.img"
        with open(backing, "wb") as f:
            f.truncate(size_bytes)
        args = ["losetup", "--find", "--show"] + (["--partscan"] if partitions else []) + [str(backing)]
        dev = sh(*args).stdout.strip()
        self.devices.append(dev)
        return dev

    def backing_file(self, dev: str) -> Path:
        name = Path(dev).name
        return Path(Path(f"/sys/block/{name}/loop/backing_file").read_text().strip())

    def partition(self, dev: str, *, fs: bool = False) -> str:
        """Writes a one-partition table to `dev` and returns the partition's device path."""
        need_root_and("sfdisk")
        sh_input = "label: dos\n,,L\n"
        subprocess.run(["sfdisk", "--quiet", dev], input=sh_input, text=True, check=True, capture_output=True)
        sh("partx", "--update", dev, check=False)
        part = f"{dev}p1"
        for _ in range(50):
            if os.path.exists(part):
                break
            subprocess.run(["udevadm", "settle"], check=False, capture_output=True)
            import time

            time.sleep(0.05)
        if not os.path.exists(part):
            pytest.skip(f"the kernel did not create {part} (partition scanning unavailable)")
        if fs:
            self.mkfs(part)
        return part

    def mkfs(self, dev: str) -> None:
        need_root_and("mkfs.ext4")
        sh("mkfs.ext4", "-q", "-F", dev)

    def mount(self, dev: str) -> Path:
        need_root_and("mount")
        mnt = self.tmp / f"mnt{len(self.mounts)}"
        mnt.mkdir()
        sh("mount", dev, str(mnt))
        self.mounts.append(mnt)
        return mnt

    def cleanup(self) -> None:
        for m in reversed(self.mounts):
            sh("umount", str(m), check=False)
        for d in reversed(self.devices):
            sh("losetup", "--detach", d, check=False)


@pytest.fixture
def loopdev(tmp_path: Path):
    """Factory: ``loopdev(size_bytes, partitions=False)`` → ``/dev/loopN`` on a sparse file."""
    f = LoopFactory(tmp_path)
    try:
        yield f
    finally:
        f.cleanup()


@pytest.fixture
def fio_path() -> str:
    """Path of the fio binary, or skip."""
    p = shutil.which("fio")
    if p is None:
        pytest.skip("needs fio (make setup installs it as root)")
    return p
