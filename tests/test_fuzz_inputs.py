"""Fuzzing of the other inputs a user hands flashback (issue 23): fio job files, block traces
(fio iologs and blkparse text) and saved replays. Whatever the bytes, the outcome is a result
or a ``FlashbackError`` — never another exception, never an abort. ``make test`` runs a few
hundred cases; ``-m slow`` runs 10k per input kind."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flashback as fb
from flashback.errors import FlashbackError
from flashback.fio.jobfile import JobFileNote
from flashback.replay.api import Replay

FAST = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))

# --- fio job files --------------------------------------------------------------------------
_KEYS = [
    "rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs", "size", "offset", "runtime",
    "time_based", "ramp_time", "ioengine", "direct", "filename", "rwmixread", "rwmixwrite",
    "buffer_compress_percentage", "refill_buffers", "randrepeat", "norandommap", "loops",
    "io_size", "log_avg_msec", "write_bw_log", "random_distribution", "verify", "zero_buffers",
]  # fmt: skip
_VALUES = st.one_of(
    st.sampled_from(
        [
            "randwrite",
            "read",
            "4k",
            "1m",
            "32",
            "0",
            "1",
            "-1",
            "abc",
            "1.5",
            "",
            "10g",
            "2^64",
            "18446744073709551616",
            "libaio",
            "io_uring",
            "60s",
            "%",
            "4k-16k",
            "zipf:1.2",
            "/dev/null",
            "\x00",
            "é",
        ]
    ),  # fmt: skip
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)
_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(_KEYS), _VALUES),
    st.sampled_from(_KEYS),  # a flag without a value
    st.builds(lambda n: f"[{n}]", st.sampled_from(["global", "job1", "job2", "", "a b"])),
    st.text(max_size=30),
)


def _check_job(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "job.fio"
        p.write_text("\n".join(lines) + "\n", errors="surrogateescape")
        # a note on how an option was mapped (ioengine=libaio runs on io_uring) is a result,
        # not a failure: pytest's filterwarnings=error would raise it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JobFileNote)
            try:
                fb.Workload.from_fio(str(p))
            except FlashbackError:
                pass


@FAST
@given(st.lists(_LINE, max_size=14))
def test_job_files_give_a_workload_or_a_flashback_error(lines):
    _check_job(["[job]", *lines])


@pytest.mark.slow
@SLOW
@given(st.lists(_LINE, max_size=20))
def test_job_files_10k(lines):
    _check_job(["[job]", *lines])


# --- block traces ---------------------------------------------------------------------------
_NUM = st.one_of(
    st.integers(min_value=0, max_value=1 << 20).map(str),
    st.sampled_from(
        ["0", "4096", str(2**55), str(2**63), str(2**64 - 4096), str(2**64), "-1", "1.5", "x", ""]
    ),  # fmt: skip
)
_IOLOG_LINE = st.one_of(
    st.builds(
        lambda f, a, o, n: f"{f} {a} {o} {n}",
        st.sampled_from(["/dev/x", "f"]),
        st.sampled_from(["read", "write", "trim", "sync", "open", "close", "wait", "bogus"]),
        _NUM,
        _NUM,
    ),
    st.builds(
        lambda t, f, a, o, n: f"{t} {f} {a} {o} {n}",
        _NUM,
        st.sampled_from(["/dev/x", "f"]),
        st.sampled_from(["read", "write", "trim", "add", "open"]),
        _NUM,
        _NUM,
    ),
    st.text(max_size=30),
)
_BLK_LINE = st.builds(
    lambda dev, cpu, seq, ts, pid, act, rwbs, sec, n: (
        f"{dev} {cpu} {seq} {ts} {pid} {act} {rwbs} {sec} + {n} [fio]"
    ),
    st.sampled_from(["8,0", "259,0", "x"]),
    st.sampled_from(["0", "1"]),
    _NUM,
    st.sampled_from(["0.000000000", "1.5", "-1", "nan", "1e308", "x"]),
    _NUM,
    st.sampled_from(["Q", "C", "D", "G"]),
    st.sampled_from(["W", "R", "WS", "D", "N", "FWS", "?"]),
    _NUM,
    _NUM,
)
_HEADERS = ["fio version 2 iolog", "fio version 3 iolog", ""]


def _check_trace(header: str, lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "trace.log"
        p.write_text("\n".join([header, *lines]) + "\n", errors="surrogateescape")
        try:
            fb.replay_trace(p, target="sim:generic?scale=1/256", iodepth=4)
        except FlashbackError:
            pass


@FAST
@given(st.sampled_from(_HEADERS), st.lists(st.one_of(_IOLOG_LINE, _BLK_LINE), max_size=12))
def test_traces_replay_or_give_a_flashback_error(header, lines):
    _check_trace(header, lines)


@pytest.mark.slow
@SLOW
@given(st.sampled_from(_HEADERS), st.lists(st.one_of(_IOLOG_LINE, _BLK_LINE), max_size=20))
def test_traces_10k(header, lines):
    _check_trace(header, lines)


# --- saved replays --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved_replay(tmp_path_factory) -> Path:
    cap = fb.run(
        "sim:generic?scale=1/256",
        fb.Workload(rw="randwrite", bs="4k", written="4m", interval="0.05s", seed=1),
    )
    rep = Replay(
        cap.intervals,
        [{"step": "fresh", "capture_meta": cap.meta}, {"step": "again", "capture_meta": cap.meta}],
        {"protocol": "puget-cdm-loop", "target": "sim:generic?scale=1/256"},
    )  # fmt: skip
    d = tmp_path_factory.mktemp("rep") / "saved"
    rep.save(d)
    return d


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)),
    max_leaves=20,
)  # fmt: skip


def _mutations():
    flip = st.tuples(st.just("flip"), st.integers(min_value=0), st.integers(0, 7))
    cut = st.tuples(st.just("cut"), st.integers(min_value=0), st.just(0))
    key = st.tuples(st.just("key"), st.sampled_from(["meta", "steps", "save_id",
                                                     "capture_meta_shared",
                                                     "steps_table"]), _JSON)  # fmt: skip
    files = ["replay.json", "intervals.parquet", "steps.columns"]
    return st.sampled_from(files), st.one_of(flip, cut, key)


def _check_replay(saved: Path, name: str, mutation: tuple) -> None:
    with tempfile.TemporaryDirectory() as d:
        work = Path(d) / "rep"
        work.mkdir()
        for f in saved.iterdir():
            (work / f.name).write_bytes(f.read_bytes())
        target = work / name
        data = bytearray(target.read_bytes())
        kind, a, b = mutation
        if kind == "flip" and data:
            data[a % len(data)] ^= 1 << b
        elif kind == "cut":
            data = data[: a % (len(data) + 1)]
        elif kind == "key" and name == "replay.json":
            doc = json.loads(data)
            doc[a] = b
            data = bytearray(json.dumps(doc).encode())
        target.write_bytes(bytes(data))
        try:
            Replay.load(work)
        except FlashbackError:
            pass


@FAST
@given(*_mutations())
def test_saved_replays_load_or_give_a_flashback_error(saved_replay, name, mutation):
    _check_replay(saved_replay, name, mutation)


@pytest.mark.slow
@SLOW
@given(*_mutations())
def test_saved_replays_10k(saved_replay, name, mutation):
    _check_replay(saved_replay, name, mutation)


def test_the_fuzzed_replay_loads_unmutated(saved_replay):
    """The fuzz starts from a save that loads, so every refusal above is the mutation's."""
    rep = Replay.load(saved_replay)
    assert rep.intervals.height > 0 and os.path.exists(saved_replay / "replay.json")


def test_the_trace_target_takes_a_valid_trace(tmp_path):
    """The trace fuzz's target opens and replays a well-formed iolog, so a refusal above is
    the trace's, not the target's."""
    p = tmp_path / "ok.log"
    p.write_text(
        "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n/dev/x close\n"
    )
    cap = fb.replay_trace(p, target="sim:generic?scale=1/256", iodepth=4)
    assert int(cap.intervals["write_bytes"].sum()) == 4096
