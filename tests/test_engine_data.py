"""What the io_uring engine writes: random data from a rotated pool of buffers, retagged per
write (issue 29), still incompressible and with no 512-byte sector written twice; and the
simulator's compressibility figures, computed on the generator's bytes, unchanged by it."""

from __future__ import annotations

import hashlib
import os
import zlib

import pytest

import flashback as fb

MiB = 1 << 20


def sectors_and_ratio(dev: str, span: int, bs: int) -> tuple[int, int, float]:
    """(sectors read, sectors seen before, the smallest zlib ratio of a ``bs`` block)."""
    seen: set[bytes] = set()
    repeats, worst = 0, 1.0
    fd = os.open(dev, os.O_RDONLY)
    try:
        for off in range(0, span, bs):
            block = os.pread(fd, bs, off)
            worst = min(worst, len(zlib.compress(block, 6)) / len(block))
            for s in range(0, bs, 512):
                h = hashlib.blake2b(block[s : s + 512], digest_size=16).digest()
                repeats += h in seen
                seen.add(h)
    finally:
        os.close(fd)
    return len(seen) + repeats, repeats, worst


@pytest.mark.parametrize("bs", ["4k", "128k"])
def test_random_writes_stay_incompressible_with_no_sector_repeated(loopdev, bs):
    """Four passes over an 8 MiB device (more writes than the 4 MiB pool holds buffers, so
    every buffer is reused): what the device holds after each pass is read back, and no
    512-byte sector of any pass equals another sector of any pass, and no block compresses."""
    size = 8 * MiB
    dev = loopdev(size)
    t = fb.Target(dev, destroy=dev)
    step = int(bs[:-1]) << 10
    seen: set[bytes] = set()
    total = 0
    for seed in range(4):
        cap = t.run(fb.Workload(rw="write", bs=bs, iodepth=8, seed=seed), progress=False)
        assert cap.status == "complete"
        n, repeats, worst = sectors_and_ratio(dev, size, step)
        assert repeats == 0
        assert worst > 0.99, worst
        fd = os.open(dev, os.O_RDONLY)
        try:
            for off in range(0, size, 512):
                seen.add(hashlib.blake2b(os.pread(fd, 512, off), digest_size=16).digest())
        finally:
            os.close(fd)
        total += n
    # across passes too (each pass's generator tags with its own key)
    assert len(seen) == total


def test_randrw_still_writes_random_data(loopdev):
    """A job that also reads does not retag (a buffer read into holds the device's bytes, not
    generated ones): its writes are refilled with fresh bytes, as before."""
    size = 4 * MiB
    dev = loopdev(size)
    t = fb.Target(dev, destroy=dev)
    t.run(fb.Workload(rw="write", bs="64k", data="zeros"), progress=False)
    t.run(fb.Workload(rw="randrw", bs="4k", iodepth=8, loops=2), progress=False)
    fd = os.open(dev, os.O_RDONLY)
    try:
        blocks = [os.pread(fd, 4096, off) for off in range(0, size, 4096)]
    finally:
        os.close(fd)
    written = [b for b in blocks if any(b)]
    # about half the blocks are written at least once by two passes at 50 % reads
    assert len(written) > len(blocks) // 4
    assert all(len(zlib.compress(b, 6)) / len(b) > 0.99 for b in written)
    assert len(set(written)) == len(written)


@pytest.mark.parametrize(
    ("data", "bs", "ratio"),
    [
        # measured with the generator of commit 79d544e, before the write pool existed
        ("random", "4k", 1.0),
        ("compress:50", "128k", 0.5025177001953125),
        ("compress:25", "4k", 0.7548828125),
    ],
)
def test_sim_compressibility_is_bit_identical(data, bs, ratio):
    """The simulator's data-reduction input is measured on the generator's bytes: the write
    pool and its tags change none of them, so a seeded capture's ratio is the one it was."""
    w = fb.Workload(rw="randwrite", bs=bs, data=data, written="1m", seed=7)
    cap = fb.run("sim:intel-520-120g?scale=1/256", w)
    assert cap.meta["data_compress_ratio"] == ratio


@pytest.mark.parametrize(
    ("engine", "rw", "sha256", "reads"),
    [
        # recorded with the build of commit d6b2f84 (main before issue 29's layout change of
        # OpKind): the same seed must keep giving the same offsets, kinds and bytes
        ("io_uring", "randrw", "675f7c8eee7c521b1d23257ecab0ffd9aa81279f09a3198fd9ec7cb114b0561a", 261),
        ("io_uring", "randwrite", "714d32d1b14df38336054fc430751b5fdfcd9959571b541393aa6ee7d44bb5ee", 0),
        ("psync", "randrw", "675f7c8eee7c521b1d23257ecab0ffd9aa81279f09a3198fd9ec7cb114b0561a", 261),
        ("psync", "randwrite", "bf6018309c9ff41803fb678904a7deb43d4e0bb35502a334e3cd556ba16655cd", 0),
    ],
)  # fmt: skip
def test_seeded_file_bytes_are_pinned(tmp_path, engine, rw, sha256, reads):
    """A seeded run at depth 1 (where the order of writes, and so of buffers and their data, is
    the stream's) leaves a file whose bytes and read count are those of an earlier build:
    changes made only for speed (the op stream, the engine's loop) change none of them."""
    path = tmp_path / "pin.bin"
    w = fb.Workload(rw=rw, rwmix_read=50, bs="4k", iodepth=1, size="1m", loops=2, seed=11,
                    engine=engine)  # fmt: skip
    cap = fb.run(path, w)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    assert cap.meta["totals"]["read_ios"] == reads
    assert cap.meta["totals"]["read_ios"] + cap.meta["totals"]["write_ios"] == 512
