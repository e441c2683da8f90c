"""The capture's one column table (``native/src/capture/columns.rs``, exported as
``flashback.columns``): real captures carry exactly its columns with its types, the progress
dict follows it, and aggregations take each column's kind from it (the ``gc_copied_bytes``
round bug: a running total summed per round)."""

from __future__ import annotations

import polars as pl
import pytest

import flashback as fb
from flashback import _native, columns

SMALL = "sim:intel-520-120g?scale=1/256"
DTYPES = {"f64": pl.Float64, "u64": pl.UInt64, "str": pl.String}


def _written(*, sim: bool) -> dict[str, dict]:
    groups = {"base", "drive"} | ({"sim"} if sim else set())
    return {c["name"]: c for c in columns.COLUMNS if c["group"] in groups}


def test_table_rows_are_complete_and_kinds_known():
    assert columns.COLUMNS, "the native table is empty"
    for c in columns.COLUMNS:
        assert set(c) == {"name", "dtype", "unit", "nullable", "kind", "group"}
        assert c["kind"] in columns.KINDS
        assert c["dtype"] in DTYPES
    kinds = {c["name"]: c["kind"] for c in columns.COLUMNS}
    assert kinds["gc_copied_bytes"] == "cumulative"
    assert kinds["host_written_bytes"] == "cumulative"
    assert kinds["write_bytes"] == "counter"
    assert kinds["write_mbps"] == "gauge"
    assert kinds["step"] == "label"
    for name in (
        "drive_temp_c",
        "drive_throttle",
        "drive_power_state",
        "drive_host_written_bytes",
        "drive_nand_written_bytes",
        "drive_sample_age_s",
    ):
        c = next(c for c in columns.COLUMNS if c["name"] == name)
        assert c["nullable"] and c["group"] == "drive", name


@pytest.mark.parametrize("sim", [True, False])
def test_every_column_of_a_real_capture_has_a_table_row_and_vice_versa(tmp_path, sim):
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, time="3s", size="16m", seed=1)
    if sim:
        cap = fb.run(SMALL, w)
    else:
        target = tmp_path / "target.bin"
        cap = fb.run(target, w.replace(time="1s", direct=False))
    want = _written(sim=sim)
    assert list(cap.intervals.columns) == list(want)  # same names, in the table's order
    for name, dtype in cap.intervals.schema.items():
        assert dtype == DTYPES[want[name]["dtype"]], name
        if not want[name]["nullable"]:
            assert cap.intervals[name].null_count() == 0, name
    # the drive telemetry is null until a source fills it
    assert cap.intervals["drive_temp_c"].null_count() == cap.intervals.height
    # and a file written and loaded back keeps the same columns
    path = tmp_path / "c.arrow"
    cap.save(path)
    assert fb.load(path).intervals.columns == cap.intervals.columns


def test_progress_dict_carries_every_column_of_the_table():
    seen: list[dict] = []
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, time="2s", seed=1)
    fb.run(SMALL, w, progress=seen.append)
    assert seen
    assert list(seen[0]) == list(_written(sim=True))
    assert seen[0]["drive_temp_c"] is None
    assert seen[-1]["gc_copied_bytes"] >= seen[0]["gc_copied_bytes"]


def test_gc_copied_bytes_per_round_is_what_the_round_copied():
    """A simulated run written past its capacity: each round's ``gc_copied_bytes`` is the GC
    copying in that round, so the rounds add up to the run's total. Summing the running total
    per round (the old rule) gave rounds many times the data the round wrote."""
    t = fb.Target(SMALL)
    cap = t.run(
        fb.Workload(rw="randwrite", bs="4k", iodepth=32, written="1g", seed=3, interval="0.1s")
    )
    df = cap.intervals
    start = cap.meta["cumulative_start"]
    total_gc = int(df["gc_copied_bytes"][-1]) - start["gc_copied_bytes"]
    total_nand = int(df["nand_written_bytes"][-1]) - start["nand_written_bytes"]
    assert total_gc > 0, "the run must reach garbage collection for this test to mean anything"
    rounds = fb.to_rounds(cap, round=128 * 2**20)  # bytes ("128m" would be minutes)
    assert rounds.height >= 6
    assert int(rounds["gc_copied_bytes"].sum()) == total_gc
    assert int(rounds["nand_written_bytes"].sum()) == total_nand
    written = rounds["bytes_end"] - rounds["bytes_start"]
    # a round cannot copy more than the NAND it wrote, nor write NAND at a WA above 20
    assert (rounds["gc_copied_bytes"] <= rounds["nand_written_bytes"]).all()
    assert (rounds["nand_written_bytes"] <= 20 * written).all()


def test_rounds_of_a_list_difference_each_capture_on_its_own():
    t = fb.Target(SMALL)
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, written="256m", seed=4)
    caps = [t.run(w), t.run(w)]  # the second run's counters start where the first ended
    rounds = fb.to_rounds(caps)
    for cap, r in zip(caps, rounds.iter_rows(named=True), strict=True):
        gc = (
            int(cap.intervals["gc_copied_bytes"][-1])
            - cap.meta["cumulative_start"]["gc_copied_bytes"]
        )
        assert r["gc_copied_bytes"] == gc


def test_rounds_without_a_start_miss_only_the_first_interval():
    """A frame without metadata: the first interval's increase is unknown, so round 1 starts
    from the end of its first interval instead of counting the whole running total."""
    df = pl.DataFrame(
        {
            "t_s": [1.0, 2.0, 3.0, 4.0],
            "interval_s": [1.0] * 4,
            "write_bytes": [10, 10, 10, 10],
            "host_written_bytes": [10, 20, 30, 40],
            "gc_copied_bytes": [1000, 1005, 1010, 1030],
        }
    )
    r = fb.to_rounds(df, round="2s")
    assert r["gc_copied_bytes"].to_list() == [5, 25]


def test_an_unknown_column_is_averaged_as_a_gauge():
    assert columns.kind("my_own_level") == "gauge"
    df = pl.DataFrame({"t_s": [1.0, 2.0], "interval_s": [1.0, 1.0], "my_own_level": [2.0, 4.0]})
    assert fb.to_rounds(df, round="2s")["my_own_level"].to_list() == [3.0]


def test_native_export_is_the_table():
    assert tuple(_native.capture_columns()) == columns.COLUMNS
