"""Every parser, fed generated input: workload fields, sim target specs, fio logs and JSON,
capture files and block traces. Whatever comes in, the only exception allowed out is a
``FlashbackError`` (no crash, no bare ValueError/KeyError/MemoryError).

A few hundred cases per parser run in ``make test``; ``-m slow`` runs 10,000 each.
Sim capacities are drawn below 1 GiB: a valid multi-terabyte drive is a real allocation, not
a parser bug.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fuzz import allowed, json_value

import flashback as fb
from flashback import units

FAST = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))

UNITS = ["", "k", "m", "g", "t", "K", "KiB", "MB", "s", "ms", "us", "m", "h", "%", "x", "e3"]
number = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "1", "-1", "4096", "1e308", "nan", "inf", "0x10", "1/16", "", " "]),
)
value = st.one_of(
    st.builds(lambda n, u: f"{n}{u}", number, st.sampled_from(UNITS)),
    st.text(max_size=16),
    st.sampled_from(
        ["read", "write", "randread", "randwrite", "randrw", "trim", "randtrim", "random",
         "zeros", "compress:50", "compress:101", "pattern:zz", "pattern:0a0b", "uniform",
         "permutation", "true", "false", "io_uring", "psync", "auto"]
    ),
)  # fmt: skip


# ---- workload strings -------------------------------------------------------------------
WORKLOAD_KEYS = [f.name for f in fb.Workload.__dataclass_fields__.values()]
workloads = st.dictionaries(st.sampled_from(WORKLOAD_KEYS), value, max_size=6)


def _workload(fields):
    w = allowed(fb.Workload, **fields)
    if w is not None:
        assert isinstance(w.resolved, dict)
    allowed(units.parse_size, fields.get("size", "1k"), field="size")
    allowed(units.parse_duration, fields.get("time", "1s"), field="time")


@FAST
@given(workloads)
def test_workload_fields(fields):
    _workload(fields)


# ---- sim specs --------------------------------------------------------------------------
SIM_KEYS = ["capacity", "op", "pages_per_block", "page_size", "gc", "idle_gc", "compression",
            "slc_cache", "scale", "seed", "nope", ""]  # fmt: skip
presets = st.sampled_from(["generic", "intel-520-120g", "intel-530-240g", "nope", "", "GENERIC"])
sim_value = st.one_of(
    value,
    st.integers(min_value=1, max_value=1 << 30).map(str),  # capacities below 1 GiB
    st.sampled_from(["1/64", "1/256", "1/1024", "0.001", "greedy", "fifo", "on", "off"]),
)


def _sim_spec(preset, pairs, sep):
    q = sep.join(f"{k}={v}" for k, v in pairs)
    spec = f"sim:{preset}" + (f"?{q}" if pairs else "")
    if any(k == "capacity" and not v.strip().isdigit() for k, v in pairs):
        return  # a size string may name terabytes: a real drive, not a parser case
    if not any(k == "scale" for k, _ in pairs) and "capacity" not in dict(pairs):
        spec += ("&" if pairs else "?") + "scale=1/1024"
    t = allowed(fb.Target, spec)
    if t is not None:
        assert t.kind == "sim" and t.size_bytes > 0


sim_pairs = st.lists(st.tuples(st.sampled_from(SIM_KEYS), sim_value), max_size=4)


@FAST
@given(presets, sim_pairs, st.sampled_from(["&", ";", "&&"]))
def test_sim_specs(preset, pairs, sep):
    _sim_spec(preset, pairs, sep)


# ---- fio logs and JSON ------------------------------------------------------------------
log_line = st.one_of(
    st.builds(
        lambda *xs: ", ".join(xs),
        number, number, st.sampled_from(["0", "1", "2", "3", "x"]), number,
    ),
    st.text(max_size=40),
)  # fmt: skip
log_names = st.sampled_from(
    ["job_bw.1.log", "job_iops.1.log", "job_lat.1.log", "job_clat.1.log", "job_slat.2.log",
     "job_clat_hist.1.log", "x.log", "job_bw.log"]
)  # fmt: skip


def _fio_log(tmp: Path, name: str, lines: list[str]):
    for old in tmp.iterdir():
        old.unlink()
    p = tmp / name
    p.write_text("\n".join(lines))
    cap = allowed(fb.read_fio, p)
    if cap is not None:
        assert isinstance(cap, fb.Capture)


fio_dir = st.fixed_dictionaries(
    {}, optional={k: json_value for k in ["io_bytes", "bw", "iops", "runtime", "total_ios",
                                          "lat_ns", "clat_ns", "bw_bytes"]}
)  # fmt: skip
fio_job = st.fixed_dictionaries(
    {}, optional={"jobname": json_value, "read": fio_dir, "write": fio_dir, "trim": fio_dir,
                  "job options": json_value, "elapsed": json_value, "job_runtime": json_value}
)  # fmt: skip
fio_json = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"jobs": st.lists(fio_job, max_size=3)},
        optional={"fio version": json_value, "global options": json_value},
    ),
)


def _fio_json(tmp: Path, doc, raw: bool):
    p = tmp / "out.json"
    text = json.dumps(doc) if not raw else str(doc)
    p.write_text(text)
    cap = allowed(fb.read_fio, p)
    if cap is not None:
        assert isinstance(cap, fb.Capture)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FAST
@given(log_names, st.lists(log_line, max_size=12))
def test_fio_logs(scratch, name, lines):
    d = scratch / "logs"
    d.mkdir(exist_ok=True)
    _fio_log(d, name, lines)


@FAST
@given(fio_json, st.booleans())
def test_fio_json(scratch, doc, raw):
    _fio_json(scratch, doc, raw)


# ---- capture files ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def capture_bytes(tmp_path_factory) -> bytes:
    p = tmp_path_factory.mktemp("cap") / "c.arrow"
    w = fb.Workload(rw="randwrite", bs="4k", size="4m", time="40ms", interval="1ms")
    fb.run("sim:generic?scale=1/256", w, capture_path=p)
    return p.read_bytes()


mutation = st.lists(
    st.tuples(st.floats(min_value=0, max_value=1, exclude_max=True), st.integers(0, 255)),
    max_size=4,
)


def _capture(scratch: Path, base: bytes, cut: float, flips, junk: bytes):
    data = bytearray(base[: int(len(base) * cut)] if cut < 1 else base)
    for where, byte in flips:
        if data:
            data[int(where * len(data))] = byte
    p = scratch / "m.arrow"
    p.write_bytes(bytes(data) + junk)
    for fn in (fb.load, fb.recover):
        cap = allowed(fn, p)
        if cap is not None:
            assert isinstance(cap.meta, dict)


@FAST
@given(st.floats(0, 1), mutation, st.binary(max_size=16))
def test_capture_files(scratch, capture_bytes, cut, flips, junk):
    _capture(scratch, capture_bytes, cut, flips, junk)


@pytest.fixture(scope="module")
def batched(tmp_path_factory) -> tuple[bytes, pl.DataFrame, list[int]]:
    """A saved capture of three batches (1024, 1024, 52 intervals), its frame, and the
    offsets of its IPC messages (every batch boundary) and of its end-of-stream marker."""
    w = fb.Workload(rw="randwrite", bs="4k", size="4m", time="2100ms", interval="1ms", seed=2)
    cap = fb.run("sim:generic?scale=1/256", w)
    data = cap.save(tmp_path_factory.mktemp("batched") / "b.arrow").read_bytes()
    starts, at = [], 0
    while (at := data.find(b"\xff\xff\xff\xff", at)) >= 0:
        starts.append(at)
        at += 4
    return data, cap.intervals, starts


def _bit_flips(scratch: Path, base: bytes, frame: pl.DataFrame, bits: list[int]) -> None:
    """Flipped bits: loading gives the original intervals exactly, or a FlashbackError (never
    other intervals, never another exception); recovering gives a prefix of them."""
    data = bytearray(base)
    for bit in bits:
        data[(bit // 8) % len(data)] ^= 1 << (bit % 8)
    p = scratch / "flipped.arrow"
    p.write_bytes(bytes(data))
    cap = allowed(fb.load, p)
    if cap is not None:
        assert cap.intervals.equals(frame)
    rec = allowed(fb.recover, p)
    if rec is not None and rec.intervals.width == frame.width:
        assert rec.intervals.equals(frame.head(rec.intervals.height))


@FAST
@given(st.lists(st.integers(0, 2**40), min_size=1, max_size=3))
def test_capture_bit_flips(scratch, batched, bits):
    data, frame, _ = batched
    _bit_flips(scratch, data, frame, bits)


def test_capture_cut_at_every_batch_boundary(scratch, batched):
    data, frame, starts = batched
    p = scratch / "cut.arrow"
    for at in [*starts[1:], starts[-1] + 8, len(data) - 1]:
        p.write_bytes(data[:at])
        with pytest.raises(fb.CaptureFileError):
            fb.load(p)
        rec = fb.recover(p)
        assert rec.intervals.equals(frame.head(rec.intervals.height))


# ---- block traces -----------------------------------------------------------------------
iolog_line = st.one_of(
    st.builds(
        lambda *xs: " ".join(xs),
        st.sampled_from(["/dev/x", "f", "a b"]),
        st.sampled_from(["read", "write", "trim", "sync", "add", "open", "close", "wait", "x"]),
        number, number,
    ),
    st.builds(lambda *xs: " ".join(xs), number, st.sampled_from(["f"]),
              st.sampled_from(["read", "write", "trim"]), number, number),
    st.builds(
        lambda *xs: " ".join(xs),
        st.sampled_from(["8,0"]), number, number, number, number,
        st.sampled_from(["Q", "C", "D"]), st.sampled_from(["R", "W", "D", "WS", "N", "?"]),
        number, st.sampled_from(["+"]), number,
    ),
    st.text(max_size=30),
)  # fmt: skip
trace_header = st.sampled_from(["fio version 2 iolog", "fio version 3 iolog", "", "junk"])


def _trace(scratch: Path, header: str, lines: list[str]):
    p = scratch / "t.log"
    p.write_text("\n".join([header, *lines]) + "\n")
    cap = allowed(fb.replay_trace, p, target="sim:generic?scale=1/1024", loops=1)
    if cap is not None:
        assert isinstance(cap, fb.Capture)


@FAST
@given(trace_header, st.lists(iolog_line, max_size=10))
def test_trace_files(scratch, header, lines):
    _trace(scratch, header, lines)


# ---- 10k each ---------------------------------------------------------------------------
@pytest.mark.slow
@SLOW
@given(workloads)
def test_workload_fields_10k(fields):
    _workload(fields)


@pytest.mark.slow
@SLOW
@given(presets, sim_pairs, st.sampled_from(["&", ";"]))
def test_sim_specs_10k(preset, pairs, sep):
    _sim_spec(preset, pairs, sep)


@pytest.mark.slow
@SLOW
@given(log_names, st.lists(log_line, max_size=12))
def test_fio_logs_10k(scratch, name, lines):
    d = scratch / "logs10k"
    d.mkdir(exist_ok=True)
    _fio_log(d, name, lines)


@pytest.mark.slow
@SLOW
@given(fio_json, st.booleans())
def test_fio_json_10k(scratch, doc, raw):
    _fio_json(scratch, doc, raw)


@pytest.mark.slow
@SLOW
@given(st.floats(0, 1), mutation, st.binary(max_size=16))
def test_capture_files_10k(scratch, capture_bytes, cut, flips, junk):
    _capture(scratch, capture_bytes, cut, flips, junk)


@pytest.mark.slow
@SLOW
@given(st.lists(st.integers(0, 2**40), min_size=1, max_size=3))
def test_capture_bit_flips_10k(scratch, batched, bits):
    data, frame, _ = batched
    _bit_flips(scratch, data, frame, bits)


@pytest.mark.slow
@SLOW
@given(trace_header, st.lists(iolog_line, max_size=10))
def test_trace_files_10k(scratch, header, lines):
    _trace(scratch, header, lines)


def test_a_log_time_beyond_any_run_is_refused_not_allocated(tmp_path):
    # found by the fuzzer: one sample at t=1e15 ms made read_fio allocate terabytes
    p = tmp_path / "x_bw.1.log"
    p.write_text("0, 1, 0, 4096\n1000000000000000, 1, 0, 4096\n")
    with pytest.raises(fb.ImportFormatError, match="intervals"):
        fb.read_fio(p)
