"""Block-trace replay: a real fio iolog and blkparse text, on a file and a simulated drive."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import flashback as fb
from flashback.errors import ParameterError

FIO = shutil.which("fio")


@pytest.fixture
def fio_iolog(tmp_path: Path) -> Path:
    if FIO is None:
        pytest.skip("fio is not installed (make test installs it)")
    data = tmp_path / "fio.dat"
    log = tmp_path / "trace.iolog"
    subprocess.run(
        [
            FIO,
            "--name=t",
            f"--filename={data}",
            "--size=8m",
            "--rw=randrw",
            "--bs=4k",
            "--ioengine=psync",
            "--io_size=2m",
            "--randseed=7",
            f"--write_iolog={log}",
            "--output=/dev/null",
        ],
        check=True,
        timeout=120,
    )
    return log


def _ops(log: Path) -> tuple[int, int, int, int]:
    reads = writes = rbytes = wbytes = 0
    for line in log.read_text().splitlines()[1:]:
        f = line.split()
        action = f[-3] if len(f) >= 4 else ""
        if action == "read":
            reads += 1
            rbytes += int(f[-1])
        elif action == "write":
            writes += 1
            wbytes += int(f[-1])
    return reads, writes, rbytes, wbytes


def test_fio_iolog_replayed_on_a_file_byte_exact(fio_iolog: Path, tmp_path: Path):
    reads, writes, rbytes, wbytes = _ops(fio_iolog)
    assert reads > 0 and writes > 0
    target = fb.Target(tmp_path / "t.bin", size="8m")
    cap = fb.replay_trace(fio_iolog, target=target, iodepth=8, direct=False)
    iv = cap.intervals
    assert iv["read_ios"].sum() == reads and iv["write_ios"].sum() == writes
    assert iv["read_bytes"].sum() == rbytes and iv["write_bytes"].sum() == wbytes
    assert set(iv["step"]) == {"trace"}
    assert cap.status == "complete"


def test_same_trace_on_a_simulated_drive(fio_iolog: Path):
    _, writes, _, wbytes = _ops(fio_iolog)
    cap = fb.replay_trace(fio_iolog, target="sim:generic?scale=1/256", iodepth=4)
    assert cap.intervals["write_bytes"].sum() == wbytes
    assert cap.intervals["host_written_bytes"].max() == wbytes
    assert "nand_written_bytes" in cap.intervals.columns


def test_recorded_timing_is_kept(tmp_path: Path):
    # v3 iolog: 20 writes spread over 2 s of recorded time
    lines = ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    lines += [f"{i * 100} /dev/x write {i * 4096} 4096" for i in range(21)]
    log = tmp_path / "timed.iolog"
    log.write_text("\n".join(lines) + "\n")
    fast = fb.replay_trace(log, target="sim:generic?scale=1/256")
    timed = fb.replay_trace(log, target="sim:generic?scale=1/256", time_scale=1.0, interval_s=0.1)
    assert fast.intervals["t_s"].max() < 0.5
    assert timed.intervals["t_s"].max() >= 2.0
    # writes are spread over the recorded 2 s: about one per 100 ms interval
    per = timed.intervals["write_ios"]
    assert per.max() <= 2 and per.sum() == 21
    assert timed.intervals.filter(pl.col("t_s") <= 1.0)["write_ios"].sum() in (10, 11)


def test_interval_s_sets_the_rows_and_the_old_keyword_is_gone(tmp_path: Path):
    lines = ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    lines += [f"{i * 100} /dev/x write {i * 4096} 4096" for i in range(11)]
    log = tmp_path / "timed.iolog"
    log.write_text("\n".join(lines) + "\n")
    new = fb.replay_trace(log, target="sim:generic?scale=1/256", time_scale=1.0, interval_s=0.25)
    assert new.intervals["t_s"][0] == pytest.approx(0.25)
    with pytest.raises(TypeError, match="interval"):  # the old spelling is gone
        fb.replay_trace(log, target="sim:generic?scale=1/256", interval="250ms")


def test_blkparse_text(tmp_path: Path):
    text = (
        "  8,0    1        1     0.000000000   697  Q  WS 2048 + 8 [kworker]\n"
        "  8,0    1        2     0.000001000   697  G  WS 2048 + 8 [kworker]\n"
        "  8,0    1        3     0.010000000   700  Q   R 0 + 16 [fio]\n"
        "  8,0    1        4     0.020000000   700  Q   D 4096 + 2048 [fstrim]\n"
        "CPU1 (8,0):\n Reads Queued:           1,        8KiB\n"
    )
    p = tmp_path / "blk.txt"
    p.write_text(text)
    cap = fb.replay_trace(p, target="sim:generic?scale=1/256", align_bytes=512)
    iv = cap.intervals
    assert (iv["write_bytes"].sum(), iv["read_bytes"].sum(), iv["trim_bytes"].sum()) == (
        4096,
        8192,
        1 << 20,
    )


def test_malformed_line_names_file_and_line(tmp_path: Path):
    p = tmp_path / "bad.iolog"
    p.write_text("fio version 3 iolog\n0 /dev/x open\nsoon /dev/x write 0 4096\n")
    with pytest.raises(fb.ImportFormatError, match=r"bad.iolog, line 3"):
        fb.replay_trace(p, target="sim:generic?scale=1/256")


def test_trace_past_the_target_is_refused(tmp_path: Path):
    p = tmp_path / "far.iolog"
    p.write_text("fio version 2 iolog\n/dev/x write 1099511627776 4096\n")
    with pytest.raises(fb.ParameterError, match="offset_scale"):
        fb.replay_trace(p, target="sim:generic?scale=1/256")


def test_offsets_near_2_pow_64_are_refused_not_wrapped(tmp_path: Path):
    """Issue 23 item 5: blkparse sector 2^55 (x 512 = 2^64) wrapped to offset 0 and the write
    landed at the start of the target; an iolog offset of 2^64 - 4096 passed the bounds check.
    Both are errors naming the line, and the file target is untouched."""
    target = tmp_path / "t.bin"
    fb.run(target, fb.Workload(rw="write", bs="64k", size="1m", data="pattern:5a"))
    before = target.read_bytes()
    blk = tmp_path / "far.blk"
    blk.write_text("  8,0  1  1  0.000000000  697  Q  WS 36028797018963968 + 8 [kworker]\n")
    log = tmp_path / "far.iolog"
    log.write_text("fio version 2 iolog\n/dev/x write 18446744073709547520 4096\n")
    for trace, line in ((blk, 1), (log, 2)):
        for where in (target, "sim:generic?scale=1/256"):
            with pytest.raises(fb.ImportFormatError, match=rf"{trace.name}, line {line}: .*2\^64"):
                fb.replay_trace(trace, target=where)
    assert target.read_bytes() == before


def test_recorded_timing_on_a_real_file(tmp_path: Path):
    lines = ["fio version 3 iolog", "0 f add", "0 f open"]
    lines += [f"{i * 100} f write {i * 4096} 4096" for i in range(11)]
    log = tmp_path / "timed.iolog"
    log.write_text("\n".join(lines) + "\n")
    target = fb.Target(tmp_path / "t.bin", size="1m")
    cap = fb.replay_trace(log, target=target, time_scale=1.0, interval_s=0.1, direct=False)
    iv = cap.intervals
    assert iv["write_ios"].sum() == 11
    assert iv["t_s"].max() >= 1.0  # the recorded second is kept, not collapsed
    assert iv["write_ios"].max() <= 2


def _spread_writes(tmp_path: Path) -> Path:
    """A v3 iolog of 16 4 KiB writes, one every 8 KiB, all recorded at time 0."""
    lines = ["fio version 3 iolog", "0 f add", "0 f open"]
    lines += [f"0 f write {i * 8192} 4096" for i in range(16)]
    log = tmp_path / "spread.iolog"
    log.write_text("\n".join(lines) + "\n")
    return log


def test_remap_gives_the_same_capture_as_the_keywords(tmp_path: Path):
    log = _spread_writes(tmp_path)
    keywords = dict(time_scale=1.0, offset_scale=0.5, offset_shift_bytes=4096, align_bytes=4096)
    common = dict(iodepth=1, seed=3, direct=False, interval_s=0.5)
    caps, contents = [], []
    ways = (("kw", keywords), ("remap", {"remap": fb.Remap(**keywords)}), ("none", {}))
    for name, how in ways:
        target = fb.Target(tmp_path / f"{name}.bin", size="1m")
        caps.append(fb.replay_trace(log, target=target, **common, **how))
        contents.append((tmp_path / f"{name}.bin").read_bytes())
    assert contents[0] == contents[1]
    assert contents[0] != contents[2], "the remapping was ignored"
    cols = ["step", "write_ios", "write_bytes", "read_ios", "trim_ios"]
    assert caps[0].intervals.select(cols).equals(caps[1].intervals.select(cols))
    assert caps[0].meta["trace"] == caps[1].meta["trace"]
    assert caps[1].meta["trace"]["time_scale"] == 1.0


def test_remap_is_frozen_and_keyword_only():
    r = fb.Remap(offset_scale=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.offset_scale = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        fb.Remap(None, 0.5)  # type: ignore[misc]


@pytest.mark.parametrize(
    "keyword",
    [
        {"time_scale": 1.0},
        {"offset_scale": 0.5},
        {"offset_shift_bytes": 4096},
        {"align_bytes": 512},
    ],
    ids=lambda k: next(iter(k)),
)
def test_a_keyword_beside_remap_is_refused(tmp_path: Path, keyword: dict):
    log = _spread_writes(tmp_path)
    with pytest.raises(fb.ParameterError, match=rf"^{next(iter(keyword))} given both"):
        fb.replay_trace(log, target="sim:generic?scale=1/256", remap=fb.Remap(), **keyword)
    # the same keyword at its default beside remap= is no conflict
    defaults = {k: getattr(fb.Remap(), k) for k in keyword}
    cap = fb.replay_trace(log, target="sim:generic?scale=1/256", remap=fb.Remap(), **defaults)
    assert cap.intervals["write_ios"].sum() == 16


def test_remap_must_be_a_remap(tmp_path: Path):
    log = _spread_writes(tmp_path)
    with pytest.raises(fb.ParameterError, match="remap must be a flashback.Remap, got dict"):
        fb.replay_trace(log, target="sim:generic?scale=1/256", remap={"offset_scale": 0.5})


@pytest.mark.parametrize(
    "bad",
    [
        {"time_scale": 0.0},
        {"time_scale": float("nan")},
        {"offset_scale": -1.0},
        {"offset_scale": float("inf")},
        {"offset_shift_bytes": -1},
        {"align_bytes": -1},
        {"offset_scale": 64.0},  # the trace no longer fits the target
    ],
    ids=lambda b: f"{next(iter(b))}={next(iter(b.values()))}",
)
def test_bad_values_are_refused_in_remap_as_in_the_keywords(tmp_path: Path, bad: dict):
    log = _spread_writes(tmp_path)
    where = "sim:generic?scale=1/4096"
    with pytest.raises(Exception) as by_keyword:
        fb.replay_trace(log, target=where, **bad)
    with pytest.raises(Exception) as by_remap:
        fb.replay_trace(log, target=where, remap=fb.Remap(**bad))
    assert type(by_remap.value) is type(by_keyword.value)
    assert str(by_remap.value) == str(by_keyword.value)


@pytest.mark.parametrize("bad", [{"offset_shift_bytes": -1}, {"offset_shift_bytes": 1 << 64},
                                 {"align_bytes": -4096}, {"align_bytes": 1.5}])  # fmt: skip
def test_shifts_and_alignments_outside_u64_are_parameter_errors(tmp_path: Path, bad: dict):
    """They crossed into the core as u64 and PyO3 raised a bare OverflowError (or TypeError),
    not a FlashbackError."""
    log = _spread_writes(tmp_path)
    for kw in (bad, {"remap": fb.Remap(**bad)}):
        with pytest.raises(ParameterError, match=next(iter(bad))):
            fb.replay_trace(log, target="sim:generic?scale=1/4096", **kw)
