"""The real engine on loop devices (root): byte accounting proven by reading the device back,
discard that really frees the backing file's blocks, and device metadata."""

from __future__ import annotations

import os
import re

import pytest
import zstandard

import flashback as fb

MiB = 1 << 20


def read_dev(dev: str, n: int, offset: int = 0) -> bytes:
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.pread(fd, n, offset)
    finally:
        os.close(fd)


@pytest.mark.parametrize("engine, jobs", [("io_uring", 1), ("io_uring", 2), ("psync", 1)])
def test_sequential_write_reads_back_from_the_device(loopdev, engine, jobs):
    dev = loopdev(16 * MiB)
    w = fb.Workload(rw="write", bs="128k", iodepth=8, jobs=jobs, offset="1m", size="8m",
                    data="pattern:0123456789abcdef", engine=engine)  # fmt: skip
    cap = fb.run(dev, w, destroy=dev)
    assert cap.status == "complete" and cap.meta["engine"] == engine
    assert int(cap.intervals["write_bytes"].sum()) == 8 * MiB
    assert cap.intervals["host_written_bytes"][-1] == 8 * MiB
    data = read_dev(dev, 10 * MiB)
    assert data[:MiB] == bytes(MiB), "nothing before the span"
    assert data[MiB : 9 * MiB] == bytes.fromhex("0123456789abcdef") * (MiB)
    assert data[9 * MiB :] == bytes(MiB), "nothing after the span"


def test_random_writes_cover_the_device_with_incompressible_data(loopdev):
    dev = loopdev(8 * MiB)
    cap = fb.run(dev, fb.Workload(rw="randwrite", bs="4k", iodepth=32, jobs=2), destroy=dev)
    assert int(cap.intervals["write_ios"].sum()) == 2048
    data = read_dev(dev, 8 * MiB)
    zero = bytes(4096)
    assert all(data[i : i + 4096] != zero for i in range(0, len(data), 4096))
    assert len(zstandard.ZstdCompressor(level=3).compress(data)) / len(data) > 0.99


def test_discard_frees_the_backing_file_and_reads_back_zeros(loopdev):
    dev = loopdev(16 * MiB)
    t = fb.Target(dev, destroy=dev)
    t.run(fb.Workload(rw="write", bs="1m", iodepth=4, data="pattern:ff"))
    backing = loopdev.backing_file(dev)
    os.sync()
    full = backing.stat().st_blocks * 512
    assert full >= 16 * MiB
    cap = t.run(fb.Workload(rw="randtrim", bs="1m", size="8m"))
    assert int(cap.intervals["trim_bytes"].sum()) == 8 * MiB
    os.sync()
    assert backing.stat().st_blocks * 512 <= full - 8 * MiB + 64 * 1024
    assert read_dev(dev, 8 * MiB) == bytes(8 * MiB)
    assert read_dev(dev, 8 * MiB, 8 * MiB) == b"\xff" * (8 * MiB)
    assert t.host_written_bytes == 16 * MiB
    t.sanitize()
    os.sync()
    assert t.host_written_bytes == 0
    assert backing.stat().st_blocks * 512 < 64 * 1024
    assert read_dev(dev, 16 * MiB) == bytes(16 * MiB)


def test_trims_are_queued_at_depth_on_a_block_device(loopdev):
    dev = loopdev(16 * MiB)
    t = fb.Target(dev, destroy=dev)
    t.run(fb.Workload(rw="write", bs="1m", iodepth=4, data="pattern:ff"))
    cap = t.run(fb.Workload(rw="randtrim", bs="64k", iodepth=8, offset="4m", size="8m"))
    assert cap.meta["engine"] == "io_uring"
    # Linux 6.12+ takes discards through io_uring (the block layer's discard command)
    major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", os.uname().release).groups())
    queued = (major, minor) >= (6, 12)
    assert cap.meta["trim_issue"] == ("queued" if queued else "synchronous")
    assert int(cap.intervals["trim_ios"].sum()) == 128
    assert int(cap.intervals["trim_bytes"].sum()) == 8 * MiB
    assert read_dev(dev, 4 * MiB) == b"\xff" * (4 * MiB)
    assert read_dev(dev, 8 * MiB, 4 * MiB) == bytes(8 * MiB)
    assert read_dev(dev, 4 * MiB, 12 * MiB) == b"\xff" * (4 * MiB)
    for engine in ("psync", "io_uring"):
        one = t.run(fb.Workload(rw="trim", bs="1m", engine=engine, iodepth=1, size="1m"))
        assert one.meta["trim_issue"] == "synchronous", "nothing to overlap at depth 1"
    assert t.run(fb.Workload(rw="read", bs="1m")).meta["trim_issue"] is None


def test_refused_queued_trims_fall_back_to_blkdiscard(loopdev, kernel_refuses_queued_trims):
    dev = loopdev(16 * MiB)
    t = fb.Target(dev, destroy=dev)
    t.run(fb.Workload(rw="write", bs="1m", iodepth=4, data="pattern:ff"))
    cap = t.run(fb.Workload(rw="randtrim", bs="64k", iodepth=8, offset="4m", size="8m"))
    assert cap.status == "complete"
    assert cap.meta["trim_issue"] == "synchronous"
    assert int(cap.intervals["trim_ios"].sum()) == 128
    assert read_dev(dev, 4 * MiB) == b"\xff" * (4 * MiB)
    assert read_dev(dev, 8 * MiB, 4 * MiB) == bytes(8 * MiB)
    assert read_dev(dev, 4 * MiB, 12 * MiB) == b"\xff" * (4 * MiB)


def test_block_metadata(loopdev):
    dev = loopdev(8 * MiB)
    t = fb.Target(dev)
    m = t.meta
    assert m["kind"] == "block" and m["size_bytes"] == 8 * MiB
    assert m["path"] == os.path.realpath(dev)
    assert m["logical_block_size"] >= 512
    assert m["discard_supported"] is True
    assert m["loop_backing_file"] == str(loopdev.backing_file(dev))
    assert m["writable"] is False
    assert fb.Target(dev, destroy=dev).meta["writable"] is True


def test_direct_io_alignment_is_checked_against_the_device(loopdev):
    dev = loopdev(8 * MiB)
    with pytest.raises(fb.ParameterError, match="logical blocks|multiple of 512"):
        fb.run(dev, fb.Workload(rw="read", bs="1000", direct=True))
    cap = fb.run(dev, fb.Workload(rw="read", bs="1000", direct=False, size="1000000"))
    assert int(cap.intervals["read_bytes"].sum()) == 1000 * 1000
