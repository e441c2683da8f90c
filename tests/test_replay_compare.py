"""compare()'s rules: what counts as a match, what is a setting echoed back, what the model
does not reproduce, and which errors of the published data set reach the caller."""

from __future__ import annotations

import sys

import polars as pl
import pytest

import flashback as fb
from flashback.errors import ParameterError
from flashback.replay.base import check_row
from flashback.replay.compare import COMPARED, UNMODELLED, _status, published_numbers
from flashback.replay.compare import tally

published_module = sys.modules["flashback.published"]


def _row(replayed, *, tolerance=0.1, **kw):
    return check_row("t", "c", "m", replayed, "MB/s", drive=None, tolerance=tolerance, **kw)


@pytest.mark.parametrize("tolerance", [0.1, 1.0, 5.0])
def test_a_minus_100_percent_error_is_never_within_tolerance(tolerance):
    assert _status(_row(0.0, tolerance=tolerance), 160.0) == "outside tolerance"
    assert _status(_row(-5.0, tolerance=tolerance), 160.0) == "outside tolerance"
    assert _status(_row(0.0, tolerance=tolerance, bound="max"), 160.0) == "outside tolerance"
    # a loose tolerance still accepts a number that is merely far off
    if tolerance >= 1.0:
        assert _status(_row(20.0, tolerance=tolerance), 160.0) == "within tolerance"


def test_settings_and_unmodelled_rows_are_not_matches():
    assert _status(_row(9.2, setting=True), 9.2) == "setting"
    assert _status(_row(40.0, unmodelled="no documented mechanism"), 40.0) == UNMODELLED
    assert _status(_row(40.0, reproducible=False), 40.0) == UNMODELLED
    assert _status(_row(41.0), 40.0) == "within tolerance"
    assert _status(_row(41.0, tolerance=None), 40.0) == "no tolerance"
    assert _status(_row(None), 40.0) == "not replayed"
    assert _status(_row(41.0), None) == "no published value"


@pytest.fixture(scope="module")
def small_replays():
    x25 = fb.replay("anand2009-new-vs-used", scale="1/256")
    puget = fb.replay("puget-cdm-loop", target="sim:intel-520-120g?scale=1/256", loops=2)
    return x25.compare(), puget.compare()


def test_the_summary_counts_only_published_against_replayed(small_replays):
    x25, puget = small_replays
    span = x25.filter(pl.col("metric") == "span_end_gb").row(0, named=True)
    assert span["status"] == "setting" and span["within_tolerance"] is None
    assert span["replayed"] == pytest.approx(span["published"], rel=0.02)
    knee = puget.filter(
        (pl.col("test") == "cdm_seq_write") & (pl.col("metric") == "breakpoint_1_gb")
    ).row(0, named=True)
    assert knee["status"] == UNMODELLED and knee["within_tolerance"] is None
    assert knee["note"].startswith(UNMODELLED + ": ") and "40 GB" in knee["note"]
    for cmp in (x25, puget):
        t = tally(cmp)
        compared = cmp.filter(
            pl.col("published").is_not_null()
            & pl.col("replayed").is_not_null()
            & ~pl.col("status").is_in(["setting", UNMODELLED])
        )
        assert t["compared"] == compared.height
        assert t["within_tolerance"] == compared.filter(pl.col("within_tolerance")).height
        assert t["documented_not_modelled"] == cmp.filter(pl.col("status") == UNMODELLED).height
        assert set(cmp["status"]) - set(COMPARED) <= {
            "setting",
            UNMODELLED,
            "not replayed",
            "no published value",
        }
        # within_tolerance is set exactly for rows that compare (or found nothing to compare)
        for r in cmp.iter_rows(named=True):
            if r["within_tolerance"] is not None:
                assert r["status"] in (*COMPARED, "not replayed")


@pytest.fixture
def fresh_published_cache():
    published_module._load_all.cache_clear()
    yield
    published_module._load_all.cache_clear()


def test_a_broken_published_data_set_is_not_hidden(monkeypatch, fresh_published_cache):
    monkeypatch.setattr(published_module, "data_files", lambda: [])
    with pytest.raises(ParameterError, match="no published-number CSVs"):
        published_numbers()


def test_a_missing_published_data_set_falls_back_to_the_seeds(monkeypatch, fresh_published_cache):
    monkeypatch.setattr(published_module, "_DATA_PACKAGE", ("data", "no-such-folder"))
    assert published_numbers() is None


@pytest.mark.parametrize("idle_gc", ["off", "on"])
def test_the_unstated_idle_is_a_parameter_with_its_sensitivity(idle_gc):
    target = f"sim:intel-530-240g?scale=1/256&idle_gc={idle_gc}"
    runs = [
        fb.replay("anandtech-trim-validation", target=target, idle_before_s=s)
        for s in (0.0, 1800.0)
    ]
    assert [s["step"] for s in runs[1].step_records].count("idle_before_torture_pass") == 1
    assert "idle_before_torture_pass" not in [s["step"] for s in runs[0].step_records]
    cmp = runs[0].compare(other=runs[1])
    row = cmp.filter(
        (pl.col("metric") == "idle_sensitivity_mbps") & (pl.col("condition") == "torture")
    ).row(0, named=True)
    base = cmp.filter((pl.col("metric") == "avg_mbps") & (pl.col("condition") == "torture")).row(
        0, named=True
    )["replayed"]
    assert "0 s to 1800 s" in row["note"]
    if idle_gc == "off":  # the SandForce presets: idle restores nothing
        assert abs(row["replayed"]) < 0.01 * base
    else:
        assert row["replayed"] > 0.05 * base
