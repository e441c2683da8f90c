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


# --- what a target carries (issue 23 item 3), file targets opened once (items 4, 6) --------


def _attach(loopdev, backing: str | os.PathLike[str]) -> str:
    """A loop device on ``backing`` (a device or a file), detached with the fixture's."""
    dev = sh("losetup", "--find", "--show", os.fspath(backing)).stdout.strip()
    loopdev.devices.append(dev)
    return dev


def _mkfs(dev: str) -> None:
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)


def test_a_device_backing_a_mounted_loop_device_is_refused_with_the_chain(loopdev):
    """/dev/loopA backs /dev/loopB whose ext4 is mounted: --destroy on loopA wrote it and the
    mounted filesystem failed e2fsck. Now refused, naming the chain; nothing written."""
    need_root_and("mkfs.ext4", "mount", "e2fsck")
    lower = loopdev(32 * MiB)
    upper = _attach(loopdev, lower)
    _mkfs(upper)
    mnt = loopdev.mount(upper)
    (mnt / "keep.txt").write_text("data that must survive")
    os.sync()
    before = sha256(lower)
    with pytest.raises(fb.SafetyError) as ei:
        fb.run(lower, WRITE, destroy=lower)
    msg = one_sentence(ei.value)
    assert f"it backs {upper}, which is mounted at {mnt}" in msg, msg
    with pytest.raises(fb.SafetyError, match="backs"):
        fb.Target(lower, destroy=lower)
    os.sync()
    assert sha256(lower) == before
    assert (mnt / "keep.txt").read_text() == "data that must survive"
    sh("umount", str(mnt))
    loopdev.mounts.remove(mnt)
    assert sh("e2fsck", "-n", "-f", upper, check=False).returncode == 0
    # unmounted, the stack is the caller's to destroy
    cap = fb.run(lower, fb.Workload(rw="write", bs="64k", size="1m"), destroy=lower)
    assert cap.status == "complete"


def test_a_flashback_file_that_became_a_mounted_loop_image_is_refused(loopdev, tmp_path):
    """A file flashback created (so writable without --overwrite) later became the image of a
    loop device with a mounted ext4: it was rewritten. Now refused, naming the loop device."""
    need_root_and("mkfs.ext4", "mount", "losetup")
    img = tmp_path / "scratch.img"
    fb.run(img, fb.Workload(rw="write", bs="1m", size="32m", data="zeros"))
    dev = _attach(loopdev, img)
    _mkfs(dev)
    mnt = loopdev.mount(dev)
    (mnt / "keep.txt").write_text("inside the image")
    os.sync()
    before = sha256(img)
    with pytest.raises(fb.SafetyError) as ei:
        fb.run(img, WRITE)
    msg = one_sentence(ei.value)
    assert f"it backs {dev}, which is mounted at {mnt}" in msg, msg
    # reading it stays allowed
    assert fb.run(img, fb.Workload(rw="read", bs="64k", size="1m")).status == "complete"
    os.sync()
    assert sha256(img) == before
    assert (mnt / "keep.txt").read_text() == "inside the image"


def test_two_processes_on_one_file_target_the_second_is_refused(tmp_path):
    """Two processes running on one file target both reported complete with interleaved
    data. The first holds the target's lock for its run; the second is refused in one
    sentence, exit non-zero, and neither capture is mixed."""
    path = tmp_path / "shared.bin"
    fb.run(path, fb.Workload(rw="write", bs="64k", size="4m", data="zeros"))
    cmd = [
        sys.executable,
        "-m",
        "flashback",
        "run",
        str(path),
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--time",
        "8s",
        "--no-progress",
    ]
    holder = fb.Target(path)  # this process holds it, as a run in progress does
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode != 0
    err = p.stderr.strip()
    assert err.count("\n") == 0 and "another run" in err and str(path) in err, err
    del holder
    # two real processes at once: exactly one runs
    procs = [subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errs = [q.communicate(timeout=120)[1] for q in procs]
    results = [(q.returncode, e) for q, e in zip(procs, errs, strict=True)]
    codes = sorted(rc for rc, _ in results)
    assert codes[0] == 0 and codes[1] != 0, results
    assert any("another run" in e for _, e in results), results


def test_sim_specs_too_big_for_memory_are_parameter_errors_and_the_process_survives():
    """``buffer=1p`` and ``compress_floor=0.01`` at full scale aborted the process on a
    failed allocation (a notebook kernel died). Now one sentence with the estimate and the
    limit, a ParameterError, and the process goes on."""
    script = (
        "import flashback as fb\n"
        "for spec in ('sim:generic?buffer=1p',\n"
        "             'sim:generic?compression=on&compress_floor=0.01'):\n"
        "    try:\n"
        "        fb.Target(spec)\n"
        "    except fb.ParameterError as e:\n"
        "        print(type(e).__name__, '|', e)\n"
        "w = fb.Workload(rw='randwrite', bs='4k', written='4m')\n"
        "print('alive', fb.run('sim:generic?scale=1/512', w).status)\n"
    )
    env = dict(os.environ, FLASHBACK_SIM_MEMORY_LIMIT="8g")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 3 and lines[-1] == "alive complete", p.stdout
    for line in lines[:2]:
        assert line.startswith("ParameterError | "), line
        assert "needs an estimated" in line and "limit of 8.0 GiB" in line, line
        assert "FLASHBACK_SIM_MEMORY_LIMIT" in line
    # without the override the limit is a share of MemAvailable, named as such
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "available" in p.stdout.splitlines()[0], p.stdout
