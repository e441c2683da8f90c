"""Captures never load as more than they are: a stream cut at any batch boundary, a stream
whose header and intervals come from two runs, damaged metadata and a Parquet file replaced
while it is read are errors naming the file (``fb.recover`` salvages the whole batches); a
streamed run equals the same run kept in memory; recovering a large torn stream costs the
output plus one batch of memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import flashback as fb
from flashback import _native

SIM = "sim:generic?scale=1/256"
INTERVALS = 2100  # saved in batches of 1024, 1024 and 52


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, fb.Capture]:
    w = fb.Workload(rw="randwrite", bs="4k", size="8m", time=f"{INTERVALS}ms", interval="1ms")
    cap = fb.run(SIM, w.replace(seed=1))
    path = cap.save(tmp_path_factory.mktemp("ends") / "c.arrow")
    return path, cap


def message_starts(data: bytes) -> list[int]:
    """Offsets of the IPC messages (continuation markers) and of the end-of-stream marker."""
    out, at = [], 0
    while (at := data.find(b"\xff\xff\xff\xff", at)) >= 0:
        out.append(at)
        at += 4
    return out


def test_a_capture_cut_at_any_batch_boundary_is_refused_and_recovered(saved, tmp_path):
    path, cap = saved
    data = path.read_bytes()
    starts = message_starts(data)
    assert len(starts) >= 5  # schema, three batches, end of stream
    cut = tmp_path / "cut.arrow"
    for at in [*starts[1:], starts[-1] + 8, len(data) - 1]:
        cut.write_bytes(data[:at])
        with pytest.raises(fb.CaptureFileError, match="recover") as e:
            fb.load(cut)
        assert str(cut) in str(e.value)
        got = fb.recover(cut)
        n = len(got.intervals)
        assert n in (0, 1024, 2048, INTERVALS), (at, n)
        assert got.intervals.equals(cap.intervals.head(n))
        assert got.status == "interrupted" or n == INTERVALS


def test_header_and_intervals_of_two_runs_are_refused(saved, tmp_path):
    path, cap = saved
    other = cap.intervals.with_columns(pl.col("write_bytes") + 1)
    b = fb.Capture(other, {**cap.meta, "run_id": "another-run"}).save(tmp_path / "b.arrow")
    a_bytes, b_bytes = path.read_bytes(), b.read_bytes()
    a_starts, b_starts = message_starts(a_bytes), message_starts(b_bytes)
    mixed = tmp_path / "mixed.arrow"
    mixed.write_bytes(a_bytes[: a_starts[1]] + b_bytes[b_starts[1] :])
    with pytest.raises(fb.CaptureFileError, match="two runs"):
        fb.load(mixed)


def test_a_stream_written_by_a_run_has_a_run_id_in_header_and_trailer(tmp_path):
    p = tmp_path / "s.arrow"
    w = fb.Workload(rw="randwrite", bs="4k", size="8m", time="50ms", interval="1ms")
    cap = fb.run(SIM, w, capture_path=p)
    run_id = cap.meta["run_id"]
    assert len(run_id) == 32
    data = p.read_bytes()
    # the header's metadata, the trailer's run id and the trailer's final metadata
    assert data.count(run_id.encode()) == 3
    assert data.index(run_id.encode()) < data.rindex(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    assert fb.load(p).meta["run_id"] == run_id
    assert fb.run(SIM, w).meta["run_id"] != run_id


def test_a_streamed_run_equals_the_same_run_in_memory(tmp_path):
    w = fb.Workload(
        rw="randrw", bs="4k", size="8m", time="5s", interval="1ms", seed=7, random="uniform"
    )
    mem = fb.run(SIM, w)
    p = tmp_path / "s.arrow"
    streamed = fb.run(SIM, w, capture_path=p)
    back = fb.load(p)
    assert mem.intervals.height == 5000
    assert back.intervals.equals(mem.intervals)
    assert streamed.intervals.equals(mem.intervals)
    assert back.meta["totals"] == mem.meta["totals"] and back.status == "complete"


BAD_META = {
    "not JSON": "{not json",
    "not an object": "[1, 2]",
    "a wrong type": json.dumps({"status": "complete", "target": "sim"}),
    "a lone surrogate": '{"status": "\\ud800"}',
    "deep nesting": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("why", list(BAD_META))
def test_damaged_metadata_is_a_capture_file_error_naming_the_file(tmp_path, why):
    p = tmp_path / "bad.parquet"
    pl.DataFrame({"t_s": [1.0]}).write_parquet(p, metadata={"flashback.meta": BAD_META[why]})
    with pytest.raises(fb.CaptureFileError, match="bad.parquet"):
        fb.load(p)
    with pytest.raises(fb.CaptureFileError, match="x.arrow.*metadata"):
        _native.parse_capture_meta("x.arrow", BAD_META[why])


def test_a_parquet_capture_replaced_while_loading_gives_one_files_data(
    saved, tmp_path, monkeypatch
):
    _, cap = saved
    a = fb.Capture(cap.intervals.head(10), {**cap.meta, "step": "A"}).save(tmp_path / "x.parquet")
    b = fb.Capture(cap.intervals.head(20), {**cap.meta, "step": "B"}).save(tmp_path / "b.parquet")
    real = pl.read_parquet_metadata

    def replace_after_metadata(f, *args, **kwargs):
        md = real(f, *args, **kwargs)
        os.replace(b, a)  # another process replaces the file between the two reads
        return md

    monkeypatch.setattr(pl, "read_parquet_metadata", replace_after_metadata)
    got = fb.load(a)
    assert got.meta["step"] == "A" and got.intervals.height == 10


def test_recovering_a_large_torn_stream_costs_the_output_plus_a_batch(tmp_path):
    """A run streaming 1 ms intervals killed (SIGKILL) once its file passes 16 MB, the file then
    torn: recovering it in a fresh process (polars already loaded) raises the peak RSS by at
    most 2x the recovered frame's own size plus 32 MB. Measured here: ~1.4x the frame. (Streams
    written one batch per interval took ~45 KB of RAM per interval to recover: +80 MB for a
    0.5 MB frame of 1,744 intervals.)"""
    p = tmp_path / "big.arrow"
    run = (
        "import flashback as fb; "
        "w = fb.Workload(rw='randwrite', bs='4k', size='8m', time='2000s', interval='1ms'); "
        f"fb.run({SIM!r}, w, capture_path={str(p)!r}, stream_only=True)"
    )
    proc = subprocess.Popen([sys.executable, "-c", run])
    try:
        deadline = time.monotonic() + 120
        while not (p.exists() and p.stat().st_size > 16 * 2**20):
            assert proc.poll() is None, "the streaming run ended before its file grew"
            assert time.monotonic() < deadline, "the stream did not reach 16 MB in 120 s"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size - 100)  # tear the last batch
    code = textwrap.dedent(
        f"""
        import resource, flashback as fb, polars as pl
        pl.DataFrame({{"a": [1.0]}}).sum()  # polars loaded before measuring
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cap = fb.recover({str(p)!r})
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(cap.intervals), cap.intervals.estimated_size(), (after - before) * 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n, frame_bytes, grew = (int(x) for x in out.stdout.split())
    assert n > 1000
    assert grew <= 2 * frame_bytes + 32 * 2**20, (n, grew, frame_bytes)


@pytest.mark.parametrize("suffix", [".arrow", ".parquet"])
def test_metadata_floats_round_trip_exactly(tmp_path, suffix):
    """The metadata's numbers come back bit for bit (a float parsed to the nearest double
    but one changed a capture's id: ``1353.5416719466145`` came back ``…143``)."""
    meta = {
        "status": "complete",
        "latency": {"write": {"mean_us": 1353.5416719466145, "p50_us": 0.1}},
        "values": [1e-300, 2.2250738585072014e-308, 1.7976931348623157e308, 5e-324, 123456789012],
    }
    p = fb.Capture(pl.DataFrame({"t_s": [1.0]}), meta).save(tmp_path / f"m{suffix}")
    back = fb.load(p).meta
    assert back["latency"] == meta["latency"] and back["values"] == meta["values"]
    from flashback.dataset.identity import capture_id

    assert capture_id({k: back[k] for k in meta}) == capture_id(meta)


def test_a_capture_whose_checksums_were_renamed_away_is_refused(saved, tmp_path):
    """Found by the bit-flip fuzzer: two flipped bits, one in the header checksum's key and one
    in the checksum column's name, left a file read unchecked with another column's data."""
    path, _ = saved
    data = path.read_bytes()
    assert data.count(b"flashback.meta_crc32") == 1 and data.count(b"_batch_crc32") == 1
    bad = tmp_path / "renamed.arrow"
    bad.write_bytes(
        data.replace(b"flashback.meta_crc32", b"flashback.meta_crc3X").replace(
            b"_batch_crc32", b"_batch_crc3X"
        )
    )
    with pytest.raises(fb.CaptureFileError, match="checksums are missing"):
        fb.load(bad)


@pytest.mark.parametrize("fn", ["load", "recover"])
def test_a_capture_made_to_look_older_is_refused(saved, tmp_path, fn):
    """Found by the 10k bit-flip fuzz (test_fuzz.py -m slow): three flipped bits, one in the
    header checksum's key, one in the format ("glashback-capture/2") and one in a column name
    ("sead_lat_p99_us"), made a checksummed file read as one from before checksums, and
    recover() returned the renamed column as if whole."""
    path, _ = saved
    data = path.read_bytes()
    assert data.count(b"read_lat_p99_us") == 1 and data.count(b"flashback-capture/2") == 1
    bad = tmp_path / "older.arrow"
    bad.write_bytes(
        data.replace(b"flashback.meta_crc32", b"flashback.meta_crc3X")
        .replace(b"flashback-capture/2", b"glashback-capture/2")
        .replace(b"read_lat_p99_us", b"sead_lat_p99_us")
    )
    with pytest.raises(fb.CaptureFileError, match="glashback-capture/2"):
        getattr(fb, fn)(bad)
    # the format kept, the header checksum's key gone: the batch checksums say it had one
    bad.write_bytes(
        data.replace(b"flashback.meta_crc32", b"flashback.meta_crc3X").replace(
            b"flashback-capture/2", b"flashback-capture/1"
        )
    )
    with pytest.raises(fb.CaptureFileError, match="checksums are missing"):
        getattr(fb, fn)(bad)
