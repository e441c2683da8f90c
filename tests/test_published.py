"""The reviews' published numbers: schema, vocabularies, provenance against the seed texts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import flashback as fb
from flashback.errors import ParameterError
from flashback.published import CONDITIONS, SCHEMA, UNITS, X_UNITS, data_files

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO.parent / "shared" / "seeds"
KEY = ["source", "drive", "test", "condition", "metric"]
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.fixture(scope="module")
def df() -> pl.DataFrame:
    return fb.published()


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    if not SEEDS.is_dir():
        pytest.skip(f"seed documents not found at {SEEDS} (the repository's ../shared/seeds)")
    return {p.name: p.read_text(encoding="utf-8") for p in SEEDS.glob("*.txt")}


def test_schema_and_dtypes(df):
    assert df.schema == pl.Schema(SCHEMA)
    assert len(df) >= 100
    for col in ["source", "publication", "test", "condition", "metric", "value", "unit"]:
        assert df[col].null_count() == 0, col


def test_five_sources_one_file_each():
    names = [f.name for f in data_files()]
    assert names == sorted(
        [
            "puget.csv",
            "behardware.csv",
            "xbit.csv",
            "anandtech-consistency.csv",
            "anand2009.csv",
        ]
    )
    assert fb.published()["source"].n_unique() == 5


def test_repo_data_folder_mirrors_package():
    folder = REPO / "data" / "published"
    assert (folder / "README.md").is_file()
    for f in data_files():
        assert (folder / f.name).read_bytes() == f.read_bytes(), f.name


def test_vocabularies(df):
    assert set(df["unit"]) <= UNITS
    assert set(df["condition"]) <= CONDITIONS
    assert set(df["x_unit"].drop_nulls()) <= X_UNITS
    # x and x_unit come together
    assert (df["x"].is_null() == df["x_unit"].is_null()).all()
    # machine-friendly names
    for col in ["test", "metric", "condition"]:
        bad = [v for v in df[col].unique() if not re.fullmatch(r"[a-z0-9_]+", v)]
        assert not bad, (col, bad)


def test_keys_unique(df):
    dup = df.filter(pl.struct(KEY).is_duplicated())
    assert dup.is_empty(), dup


def test_units_match_metric_names(df):
    suffix_unit = {
        "_mbps": "MB/s",
        "_gb": "GB",
        "_s": "s",
        "_pct": "%",
        "_kib": "KiB",
        "_ms": "ms",
        "_iops": "IOPS",
        "_ratio": "ratio",
    }
    for metric, unit in df.select("metric", "unit").unique().iter_rows():
        for suffix, expected in suffix_unit.items():
            if metric.endswith(suffix):
                assert unit == expected, (metric, unit)


def test_sources_exist(df, seeds):
    assert set(df["source"]) <= set(seeds)


def test_values_appear_in_source_text(df, seeds):
    """A value not marked `derived` must be printed in its source (as a number token)."""
    missing = []
    for row in df.iter_rows(named=True):
        if row["note"] and "derived" in row["note"]:
            continue
        numbers = {float(t) for t in NUMBER.findall(seeds[row["source"]])}
        if row["value"] not in numbers:
            missing.append((row["source"], row["drive"], row["metric"], row["value"]))
    assert not missing, missing


def test_drives_appear_in_source_text(df, seeds):
    for source, drive in df.select("source", "drive").unique().drop_nulls().iter_rows():
        text = seeds[source].lower()
        # model number or name without the brand prefix, e.g. "520", "vertex 3", "x25-m"
        tail = drive.lower().replace("intel ssd ", "").replace("intel ", "")
        tail = tail.replace("western digital ", "").replace("samsung ssd ", "")
        assert tail in text, (source, drive)


def test_headline_numbers(df):
    def one(**kw):
        rows = fb.published(**{k: v for k, v in kw.items() if k != "drive_none"})
        assert len(rows) == 1, (kw, rows)
        return rows["value"][0]

    assert (
        one(source="puget", test="cdm_seq_write", condition="incompressible", metric="max_mbps")
        == 193.3
    )
    assert (
        one(
            source="puget",
            test="cdm_seq_write",
            condition="incompressible",
            metric="breakpoint_2_gb",
        )
        == 380
    )
    assert (
        one(drive="530", test="as_ssd_seq_write", condition="torture", metric="avg_mbps") == 183.3
    )
    assert one(drive="crucial", test="iometer_rnd_write", metric="dip_written_gb") == 6.4
    assert one(drive="335", source="x-bit", metric="loss_vs_fresh_pct") == 10
    assert one(drive="x25-m", test="seq2m_read", condition="fresh") == 264.1


def test_filters(df):
    assert set(fb.published(drive="VERTEX")["drive"]) == {"OCZ Vertex", "OCZ Vertex 3"}
    assert set(fb.published(source="000")["source"]) == {"000_2002a1564e89ff8a.txt"}
    assert fb.published(source="anandtech")["source"].n_unique() == 2
    assert set(fb.published(condition="after_trim")["condition"]) == {"after_trim"}
    assert fb.published(drive="no such drive").is_empty()
    with pytest.raises(ParameterError):
        fb.published(condition="brand_new")


def test_cli_prints_and_filters():
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "published", "--drive", "530", "--csv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    back = pl.read_csv(out.encode(), schema=SCHEMA)
    assert not back.is_empty()
    assert back["drive"].str.contains("530").all()
    table = subprocess.run(
        [sys.executable, "-m", "flashback", "published", "--source", "behardware"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "dip_time_s" in table and "rows" in table


def test_cli_unknown_condition_is_one_sentence_and_exit_2():
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "published", "--condition", "brand_new"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("flashback: unknown condition 'brand_new'")
    assert proc.stdout == ""


def test_returned_frame_cannot_change_the_data_set():
    a = fb.published(source="puget")
    a[0, "value"] = -1.0
    assert fb.published(source="puget")["value"][0] != -1.0


def test_notes_do_not_copy_sentences(df, seeds):
    """Facts only: no run of 7 words in a note is copied verbatim from its source."""
    copied = []
    for source, note in df.select("source", "note").drop_nulls().iter_rows():
        text = " ".join(re.findall(r"[a-z0-9.%']+", seeds[source].lower()))
        words = re.findall(r"[a-z0-9.%']+", note.lower())
        for i in range(len(words) - 6):
            run = " ".join(words[i : i + 7])
            if run in text:
                copied.append((source, run))
    assert not copied, copied
