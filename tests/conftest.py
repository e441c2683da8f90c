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
from support import proc

import flashback

IS_ROOT = os.geteuid() == 0

#: pytest-timeout's limit for tests marked slow (10k fuzz cases, long studies); the others
#: have pyproject's ``timeout`` (1200 s)
SLOW_TIMEOUT_S = 3600


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_S))


def _have(cmd: str) -> bool:
    return shutil.which(cmd) is not None


def need_root_and(*cmds: str) -> None:
    """Skips the calling test unless we are root and every command exists."""
    if not IS_ROOT:
        pytest.skip("needs root to create loop devices (CI runs as root)")
    missing = [c for c in cmds if not _have(c)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (make setup installs them as root)")


def ar1(rng, n: int, phi: float, sd: float):
    """``n`` points of stationary AR(1) noise with coefficient ``phi`` and standard deviation
    ``sd`` (started from the stationary distribution)."""
    import numpy as np

    e = rng.standard_normal(n) * sd * np.sqrt(1 - phi**2)
    x = np.empty(n)
    x[0] = rng.standard_normal() * sd
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def children(parent: int | None = None) -> dict[int, str]:
    """The child processes of ``parent`` (default: this process): pid → state letter from
    ``/proc/PID/stat`` (``Z``: a zombie)."""
    parent = os.getpid() if parent is None else parent
    return {pid: p.state for pid, p in proc.processes().items() if p.ppid == parent}


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    p = proc.read(pid)
    return p is not None and p.state != "Z"


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
        args = (
            ["losetup", "--find", "--show"]
            + (["--partscan"] if partitions else [])
            + [str(backing)]
        )
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
        subprocess.run(
            ["sfdisk", "--quiet", dev], input=sh_input, text=True, check=True, capture_output=True
        )
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


class Throttle:
    """A cgroup that caps a block device's read and write bandwidth (cgroup v1 blkio or v2
    io.max). ``preexec`` moves a child process into it before it execs."""

    def __init__(self, dev: str, read_bps: int, write_bps: int) -> None:
        st = os.stat(dev)
        mm = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        name = f"flashback-test-{os.getpid()}-{os.minor(st.st_rdev)}"
        v1 = Path("/sys/fs/cgroup/blkio")
        v2 = Path("/sys/fs/cgroup")
        if (v1 / "blkio.throttle.read_bps_device").exists():
            self.dir = v1 / name
            self.dir.mkdir()
            (self.dir / "blkio.throttle.read_bps_device").write_text(f"{mm} {read_bps}")
            (self.dir / "blkio.throttle.write_bps_device").write_text(f"{mm} {write_bps}")
        elif "io" in (v2 / "cgroup.controllers").read_text().split():
            (v2 / "cgroup.subtree_control").write_text("+io")
            self.dir = v2 / name
            self.dir.mkdir()
            (self.dir / "io.max").write_text(f"{mm} rbps={read_bps} wbps={write_bps}")
        else:
            raise OSError("no blkio/io cgroup controller")

    def preexec(self) -> None:
        (self.dir / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        try:
            self.dir.rmdir()
        except OSError:
            pass


@pytest.fixture
def throttle():
    """Factory: ``throttle(dev, read_bps=, write_bps=)`` → :class:`Throttle`, or skip."""
    made: list[Throttle] = []

    def make(dev: str, *, read_bps: int, write_bps: int) -> Throttle:
        need_root_and()
        try:
            t = Throttle(dev, read_bps, write_bps)
        except OSError as e:
            pytest.skip(f"cannot cap device bandwidth with cgroups here ({e})")
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()


@pytest.fixture
def kernel_refuses_queued_trims():
    """Fault injection: the engine sees every queued trim refused (EOPNOTSUPP), as on a kernel
    before Linux 6.12, until one succeeds."""
    flashback._native._refuse_queued_trims_for_tests(True)
    try:
        yield
    finally:
        flashback._native._refuse_queued_trims_for_tests(False)
