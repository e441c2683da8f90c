"""The real engine on regular files: byte accounting proven by reading back, interval
arithmetic, data compressibility, discard, limits and engines. No root needed."""

from __future__ import annotations

import os

import polars as pl
import pytest
import zstandard

import flashback as fb

MiB = 1 << 20


def totals(cap: fb.Capture, col: str) -> int:
    return int(cap.intervals[col].sum())


@pytest.mark.parametrize("engine", ["io_uring", "psync"])
def test_sequential_pattern_write_reads_back_exactly(tmp_path, engine):
    path = tmp_path / "t.bin"
    w = fb.Workload(
        rw="write", bs="64k", iodepth=8, size="4m", data="pattern:deadbeef01", engine=engine
    )
    cap = fb.run(path, w)
    assert cap.status == "complete"
    assert cap.meta["engine"] == engine
    assert path.stat().st_size == 4 * MiB
    block = (bytes.fromhex("deadbeef01") * 13200)[: 64 << 10]
    data = path.read_bytes()
    assert data == block * 64, "every byte of the file is the written pattern"
    assert totals(cap, "write_bytes") == 4 * MiB
    assert totals(cap, "write_ios") == 64
    assert cap.intervals["host_written_bytes"][-1] == 4 * MiB
    assert cap.meta["totals"]["write_bytes"] == 4 * MiB
    assert cap.meta["target"]["created_by_flashback"] is True
    assert cap.meta["target"]["kind"] == "file"


def test_random_permutation_covers_each_block_once_per_pass(tmp_path):
    # The file starts as zeros (preallocated) and the data is random: a block left all-zero
    # would be one the permutation missed.
    path = tmp_path / "r.bin"
    t = fb.Target(path, size="2m")
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=16, loops=2, data="random")
    cap = t.run(w)
    assert totals(cap, "write_bytes") == 2 * 2 * MiB
    assert t.host_written_bytes == 4 * MiB
    data = path.read_bytes()
    zero = bytes(4096)
    assert all(data[i : i + 4096] != zero for i in range(0, len(data), 4096))
    ratio = len(zstandard.ZstdCompressor(level=3).compress(data)) / len(data)
    assert ratio > 0.99, ratio
    assert cap.meta["data_compress_ratio"] > 0.99


@pytest.mark.parametrize(
    "data, lo, hi", [("zeros", 0.0, 0.01), ("compress:50", 0.45, 0.56), ("random", 0.99, 1.01)]
)
def test_compressibility_of_written_data_matches_meta(tmp_path, data, lo, hi):
    path = tmp_path / "c.bin"
    cap = fb.run(path, fb.Workload(rw="write", bs="128k", iodepth=4, size="4m", data=data))
    assert lo <= cap.meta["data_compress_ratio"] <= hi
    raw = path.read_bytes()
    c = zstandard.ZstdCompressor(level=3)
    chunks = [raw[i : i + (128 << 10)] for i in range(0, len(raw), 128 << 10)]
    measured = sum(min(len(c.compress(x)), len(x)) for x in chunks) / len(raw)
    assert lo <= measured <= hi, measured


def test_intervals_are_evenly_spaced_and_add_up_to_the_duration(tmp_path):
    path = tmp_path / "i.bin"
    w = fb.Workload(rw="randread", bs="4k", iodepth=4, size="8m", time="1s", interval="0.125s")
    fb.Target(path, size="8m")  # create it
    cap = fb.run(path, w)
    df = cap.intervals
    # the I/Os in flight at 1 s are reaped and counted, as fio does at runtime=: the last
    # interval, and the run, end at the last completion
    drain_s = df["read_lat_max_us"].max() / 1e6
    assert 1.0 <= cap.meta["duration_s"] <= 1.0 + drain_s
    assert len(df) == 8
    assert df["interval_s"].to_list()[:7] == pytest.approx([0.125] * 7, abs=1e-9)
    assert df["t_s"].to_list()[:7] == pytest.approx([0.125 * (i + 1) for i in range(7)], abs=1e-9)
    assert df["interval_s"].sum() == pytest.approx(cap.meta["duration_s"])
    # a 125 ms interval can pass without a completion when the shared machine stalls the
    # process (it failed once under load): most have I/O, and one without has no latency
    busy = df.filter(pl.col("read_ios") > 0)
    assert busy.height >= 6, df["read_ios"].to_list()
    assert df.filter(pl.col("read_ios") == 0)["read_lat_p50_us"].null_count() == 8 - busy.height
    assert df["read_iops"].to_list() == pytest.approx((df["read_ios"] / df["interval_s"]).to_list())
    assert totals(cap, "write_bytes") == 0
    for q in ("p50", "p99", "p999", "max"):
        assert (busy[f"read_lat_{q}_us"] > 0).all()
    assert (busy["read_lat_p50_us"] <= busy["read_lat_p99_us"]).all()
    assert (busy["read_lat_p99_us"] <= busy["read_lat_max_us"] * 1.001).all()
    assert df["write_lat_p50_us"].null_count() == len(df)


def test_written_limit_is_exact_across_jobs(tmp_path):
    path = tmp_path / "w.bin"
    w = fb.Workload(
        rw="randwrite", bs="4k", iodepth=8, jobs=3, size="4m", written="3m", random="uniform"
    )
    cap = fb.run(path, w)
    assert cap.status == "complete"
    assert totals(cap, "write_bytes") == 3 * MiB
    assert cap.intervals["host_written_bytes"][-1] == 3 * MiB


def test_jobs_split_the_span_and_cover_it_once(tmp_path):
    path = tmp_path / "j.bin"
    w = fb.Workload(rw="write", bs="16k", iodepth=4, jobs=4, size="4m", data="pattern:5a")
    cap = fb.run(path, w)
    assert totals(cap, "write_ios") == 256
    assert path.read_bytes() == b"\x5a" * (4 * MiB)


def test_second_run_continues_the_host_written_count_and_sanitize_resets_it(tmp_path):
    path = tmp_path / "h.bin"
    t = fb.Target(path, size="2m")
    t.run(fb.Workload(rw="write", bs="64k", size="2m"))
    cap = t.run(fb.Workload(rw="write", bs="64k", size="1m"))
    assert cap.meta["host_written_start_bytes"] == 2 * MiB
    assert cap.intervals["host_written_bytes"][-1] == 3 * MiB
    t.sanitize()
    assert t.host_written_bytes == 0


def test_discard_and_trim_free_file_blocks(tmp_path):
    path = tmp_path / "d.bin"
    t = fb.Target(path, size="8m")
    t.run(fb.Workload(rw="write", bs="1m", iodepth=4, size="8m"))
    os.sync()
    full = path.stat().st_blocks
    assert full * 512 >= 8 * MiB
    cap = t.run(fb.Workload(rw="randtrim", bs="1m", size="4m"))
    assert totals(cap, "trim_bytes") == 4 * MiB
    assert totals(cap, "trim_ios") == 4
    half = path.stat().st_blocks
    assert half * 512 <= full * 512 - 4 * MiB + 64 * 1024
    t.discard()
    assert path.stat().st_blocks * 512 < 64 * 1024
    assert path.stat().st_size == 8 * MiB
    assert path.read_bytes() == bytes(8 * MiB)


@pytest.mark.parametrize("refused", [False, True], ids=["queued", "refused-then-synchronous"])
def test_queued_trims_punch_holes_in_a_file(tmp_path, request, refused):
    if refused:
        request.getfixturevalue("kernel_refuses_queued_trims")
    path = tmp_path / "q.bin"
    t = fb.Target(path, size="8m")
    t.run(fb.Workload(rw="write", bs="1m", iodepth=4, size="8m", data="pattern:5a"))
    os.sync()
    full = path.stat().st_blocks
    cap = t.run(fb.Workload(rw="randtrim", bs="64k", iodepth=16, size="4m"))
    assert cap.status == "complete"
    assert cap.meta["trim_issue"] == ("synchronous" if refused else "queued")
    # every trim counted once, although refused ones in flight were issued again synchronously
    assert totals(cap, "trim_ios") == 64
    assert totals(cap, "trim_bytes") == 4 * MiB
    assert path.stat().st_blocks * 512 <= full * 512 - 4 * MiB + 64 * 1024
    data = path.read_bytes()
    assert data[: 4 * MiB] == bytes(4 * MiB)
    assert data[4 * MiB :] == b"\x5a" * (4 * MiB)


def test_reads_of_a_foreign_file_are_allowed(tmp_path):
    path = tmp_path / "foreign.bin"
    path.write_bytes(os.urandom(MiB))
    cap = fb.run(path, fb.Workload(rw="randread", bs="4k", iodepth=8, direct=False))
    assert totals(cap, "read_bytes") == MiB
    assert cap.meta["target"]["writable"] is False
    assert cap.meta["target"]["created_by_flashback"] is False


def test_span_past_the_end_is_a_parameter_error(tmp_path):
    path = tmp_path / "s.bin"
    t = fb.Target(path, size="1m")
    with pytest.raises(fb.ParameterError, match="past the end"):
        t.run(fb.Workload(rw="read", offset="512k", size="1m"))
    del t  # an open Target holds the file's lock: a second opener is refused while it lives
    # fb.run opens with the span's size: a file flashback created grows to hold it
    cap = fb.run(path, fb.Workload(rw="write", bs="64k", offset="512k", size="1m"))
    assert cap.status == "complete" and path.stat().st_size == 1536 << 10


def test_missing_file_without_size_is_a_target_error(tmp_path):
    with pytest.raises(fb.TargetError, match="does not exist"):
        fb.run(tmp_path / "nope.bin", fb.Workload(rw="write"))


def test_randrw_mix_and_meta(tmp_path):
    path = tmp_path / "m.bin"
    w = fb.Workload(rw="randrw", rwmix_read=70, bs="4k", iodepth=8, size="4m", loops=2, seed=3)
    cap = fb.run(path, w)
    r, wr = totals(cap, "read_ios"), totals(cap, "write_ios")
    assert r + wr == 2 * 1024
    assert 0.64 < r / (r + wr) < 0.76
    t = cap.meta["target"]
    for key in ("path", "size_bytes", "logical_block_size", "physical_block_size", "rotational"):
        assert key in t
    assert t["path"] == str(path.resolve())
    assert cap.meta["iodepth_effective"] == 8


def test_timed_trim_workload_stops_on_time(tmp_path):
    path = tmp_path / "tt.bin"
    cap = fb.run(
        path, fb.Workload(rw="randtrim", bs="64k", size="4m", time="0.5s", interval="0.1s")
    )
    assert cap.status == "complete"
    # the trims in flight at 0.5 s are reaped (fio's rule): the run ends with the last of them
    assert 0.5 <= cap.meta["duration_s"] <= 0.5 + cap.intervals["interval_s"].max()
    assert len(cap.intervals) == 5
    assert totals(cap, "trim_ios") > 64, "many passes over the span in half a second"


def test_offset_plus_size_past_2_pow_64_is_a_parameter_error(tmp_path):
    """Issue 23 item 15: an offset near 2^64 raised OverflowError (outside the hierarchy)
    from the create size offset + size, on a file and on a simulated drive."""
    w = fb.Workload(rw="write", offset=(1 << 64) - 4096, size="1m")
    for target in (tmp_path / "f.bin", "sim:generic?scale=1/512"):
        with pytest.raises(fb.ParameterError, match="past byte 2\\^64"):
            fb.run(target, w)
    assert not (tmp_path / "f.bin").exists()
