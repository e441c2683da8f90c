"""Reading a file whose extents were never written measures nothing (the filesystem returns
zeros without touching the drive). flashback lays the read span out first, as fio does, or
refuses with one sentence when it may not write the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import flashback as fb

MIB = 1 << 20


def holes(path: Path) -> int:
    """Bytes SEEK_HOLE/SEEK_DATA report as never written."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size, at, gap = os.fstat(fd).st_size, 0, 0
        while at < size:
            try:
                data = os.lseek(fd, at, os.SEEK_DATA)
            except OSError:
                data = size
            gap += data - at
            if data >= size:
                break
            at = os.lseek(fd, data, os.SEEK_HOLE)
        return gap
    finally:
        os.close(fd)


def test_a_fresh_file_is_laid_out_before_it_is_read(tmp_path):
    path = tmp_path / "fresh.bin"
    t = fb.Target(path, size=8 * MIB)
    if holes(path) == 0:
        pytest.skip("this filesystem reports preallocated extents as data")
    assert holes(path) == 8 * MIB
    w = fb.Workload(rw="randread", bs="4k", size="8m", time="1s", direct=False)
    cap = t.run(w)
    assert cap.meta["laid_out_bytes"] == 8 * MIB
    assert holes(path) == 0
    assert cap.meta["totals"]["write_bytes"] == 0  # the layout is not part of the capture
    # written once: the next read finds nothing to lay out
    assert t.run(w).meta["laid_out_bytes"] == 0


def test_only_the_unwritten_part_of_the_span_is_laid_out(tmp_path):
    path = tmp_path / "half.bin"
    t = fb.Target(path, size=8 * MIB)
    if holes(path) == 0:
        pytest.skip("this filesystem reports preallocated extents as data")
    t.run(fb.Workload(rw="write", bs="1m", size="4m", direct=False))
    cap = t.run(fb.Workload(rw="read", bs="1m", size="8m", direct=False))
    assert cap.meta["laid_out_bytes"] == 4 * MIB and holes(path) == 0


def test_a_sparse_foreign_file_is_refused_for_reads(tmp_path):
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.truncate(4 * MIB)
    if holes(path) == 0:
        pytest.skip("this filesystem has no holes")
    with pytest.raises(fb.SafetyError, match="never written") as e:
        fb.run(path, fb.Workload(rw="randread", bs="4k", size="4m", time="1s"))
    assert "\n" not in str(e.value)
    assert holes(path) == 4 * MIB  # nothing was written
