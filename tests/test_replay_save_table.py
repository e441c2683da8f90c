"""issue 29 item 5: a saved replay keeps its step records as one column table
(``steps.columns``) referenced from ``replay.json``; it loads back exactly, damaged or mixed
files are refused before any Parquet reader sees them, and replays saved in the earlier
layout (every step in ``replay.json``) still load with the values they had."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flashback as fb
from flashback.errors import CaptureFileError
from flashback.replay import stepstore

DATA = Path(__file__).parent / "data"


def _exact(value) -> str:
    """JSON text that tells 1 from 1.0 from True, and -0.0 from 0.0."""
    return json.dumps(value, sort_keys=True)


def _jsonable(records):
    return json.loads(json.dumps(records, default=str))


def _dir_bytes(d: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in d.iterdir()}


@pytest.fixture(scope="module")
def puget(tmp_path_factory):
    rep = fb.replay("puget-cdm-loop", scale="1/256", loops=20, progress=False)
    out = rep.save(tmp_path_factory.mktemp("rep") / "puget")
    return rep, out


def test_a_simulated_replay_loads_back_field_for_field(puget):
    rep, out = puget
    back = fb.Replay.load(out)
    assert len(back.step_records) == len(rep.step_records) > 500
    assert _exact(back.step_records) == _exact(_jsonable(rep.step_records))
    for a, b in zip(back.step_records, _jsonable(rep.step_records), strict=True):
        assert a == b
    assert back.intervals.equals(rep.intervals)
    assert back.meta == _jsonable(rep.meta)
    assert back.steps.equals(rep.steps)


def test_step_records_are_a_small_table_not_a_copy_per_step(puget):
    """At 515 steps the directory is < 3x its intervals file (the layout before it: ~40x);
    replay.json's fixed part (meta, the capture metadata every step shares, the column
    descriptions: ~22 KB) is most of it here. ``make bench`` (replaydir rows) measures the
    demo-scale Puget replay against the 2x target."""
    _, out = puget
    sizes = _dir_bytes(out)
    assert set(sizes) == {"intervals.parquet", "steps.columns", "replay.json"}
    assert sum(sizes.values()) < 3 * sizes["intervals.parquet"], sizes
    doc = json.loads((out / "replay.json").read_text())
    assert "steps" not in doc and doc["steps_table"]["count"] > 500


def test_a_replay_saved_before_the_step_table_loads_with_the_values_it_had(tmp_path):
    """tests/data/replay_v1 was saved by flashback at 79d544e (every step in replay.json);
    replay_v1.expected.json holds what that flashback's Replay.load gave for it."""
    want = json.loads((DATA / "replay_v1.expected.json").read_text())
    shutil.copytree(DATA / "replay_v1", tmp_path / "old")
    assert sorted(os.listdir(tmp_path / "old")) == ["intervals.parquet", "replay.json"]
    back = fb.Replay.load(tmp_path / "old")
    steps = json.dumps(back.step_records, sort_keys=True).encode()
    assert hashlib.sha256(steps).hexdigest() == want["steps_sha256"]
    meta = json.dumps(back.meta, sort_keys=True).encode()
    assert hashlib.sha256(meta).hexdigest() == want["meta_sha256"]
    assert len(back.step_records) == want["step_count"]
    assert back.intervals.height == want["intervals_rows"]
    assert back.intervals.columns == want["intervals_columns"]
    assert int(back.intervals["host_written_bytes"].sum()) == want["host_written_bytes_sum"]
    # saved again, it is the new layout and loads to the same replay
    back.save(tmp_path / "new")
    again = fb.Replay.load(tmp_path / "new")
    assert _exact(again.step_records) == _exact(back.step_records)
    assert again.intervals.equals(back.intervals)


@pytest.fixture
def small(tmp_path):
    rep = fb.replay(
        "anand2009-new-vs-used", target="sim:generic?scale=1/512", scale="1/4096", progress=False
    )
    return rep.save(tmp_path / "rep")


def test_a_damaged_step_table_is_refused_before_it_is_read(small):
    data = bytearray((small / "steps.columns").read_bytes())
    data[len(data) // 2] ^= 0x10
    (small / "steps.columns").write_bytes(bytes(data))
    with pytest.raises(CaptureFileError, match="steps.columns does not match the checksum"):
        fb.Replay.load(small)


def test_a_missing_step_table_is_refused(small):
    (small / "steps.columns").unlink()
    with pytest.raises(CaptureFileError, match="missing steps.columns"):
        fb.Replay.load(small)


def test_a_step_table_from_another_save_is_refused(small, tmp_path):
    rep = fb.Replay.load(small)
    rep.step_records[0]["labels"] = {"other": 1}
    other = rep.save(tmp_path / "other")
    shutil.copy(other / "steps.columns", small / "steps.columns")
    with pytest.raises(CaptureFileError, match="mixes two saves"):
        fb.Replay.load(small)


@pytest.mark.parametrize(
    "columns, why",
    [
        ("x", "not a list"),
        ([{"path": ["a"]}], "no path or kind"),
        ([{"path": [], "kind": "int"}], "path is not a list of keys"),
        ([{"path": ["a"], "kind": "int", "ref": {"col": 0, "lag": 0}}], "refers to no stored"),
        ([{"path": ["a"], "kind": "str", "delta": True}], "packed but is not a stored number"),
    ],
)
def test_crafted_column_descriptions_are_a_capture_file_error(small, columns, why):
    doc = json.loads((small / "replay.json").read_text())
    doc["steps_table"]["columns"] = columns
    (small / "replay.json").write_text(json.dumps(doc))
    with pytest.raises(CaptureFileError, match=why):
        fb.Replay.load(small)


_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.sampled_from([0.0, -0.0, 1e-9, 0.1, 0.123456789, 2.0**53, 1.5]),
        st.text(max_size=4),
        st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=2, max_size=2), max_size=3),
    ),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.sampled_from("abc"), kids, max_size=3)
    ),
    max_leaves=8,
)
_STEP = st.dictionaries(st.sampled_from(["step", "t", "n", "m", "x"]), _VALUE, max_size=5)


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=8))
def test_any_json_steps_decode_to_exactly_what_was_encoded(steps):
    table, columns = stepstore.encode(steps)
    specs = stepstore.check_specs(json.loads(json.dumps(columns)), count=len(steps))
    assert _exact(stepstore.decode(table, specs, count=len(steps))) == _exact(steps)


def test_counters_times_and_repeats_are_stored_packed_and_exact():
    """Counters that count up are stored as differences, nanosecond times as integers, a start
    time as the previous start plus the previous duration, and a value the previous step
    already holds as a reference to it; all come back bit for bit."""
    steps, t, written = [], 0.0, 0
    for i in range(200):
        d = (1_000_000 * (i % 7 + 1) + i) / 1e9
        step = {"duration_s": d, "t_start_s": t, "end": {"written": written + 4096 * (i % 3)}}
        steps.append({**step, "start": {"written": written}})
        t += d
        written += 4096 * (i % 3)
    table, columns = stepstore.encode(steps)
    specs = {tuple(c["path"]): c for c in columns}
    assert specs[("duration_s",)]["decimals"] == 9
    assert specs[("t_start_s",)]["ref"] == {"col": 0, "lag": 1, "add": True}
    assert specs[("end", "written")]["delta"] is True
    assert specs[("start", "written")]["ref"] == {"col": 2, "lag": 1}
    back = stepstore.decode(table, stepstore.check_specs(columns, count=200), count=200)
    assert _exact(back) == _exact(steps)


def test_steps_frame_is_built_once_and_follows_new_records(small):
    """Replay.steps is kept between reads (the checks read it several times per replay) and
    built again when ``step_records`` or ``intervals`` is replaced."""
    rep = fb.Replay.load(small)
    first = rep.steps
    assert rep.steps.equals(first)
    first.drop_in_place("step")  # a caller changing its copy changes nothing kept
    assert "step" in rep.steps.columns
    rep.step_records = [dict(s, status="changed") for s in rep.step_records]
    assert set(rep.steps["status"]) == {"changed"}
    rep.intervals = rep.intervals.head(0)
    assert "write_mbps" not in rep.steps.columns
