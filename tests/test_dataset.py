"""Datasets of many captures: ``scan_captures`` over mixed Arrow/Parquet files,
``Capture.to_dataset`` read back by DuckDB and polars with no flashback code, per-group
analyses, and one-sentence errors for bad paths and mixed schemas.

Material: the repository's example captures (a real 4 KiB random-write run on a file, a
simulated Puget replay), a real fio bandwidth log from ../shared/realdata imported with
read_fio, and small seeded simulator runs made here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

import flashback as fb
from flashback.capture import META_KEY
from flashback.dataset import IDENTITY_SCHEMA, hive_schema

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "data" / "captures"
FILE_ARROW = EXAMPLES / "file-randwrite-4k-qd32.arrow"
PUGET_PARQUET = EXAMPLES / "sim-intel-520-puget-1of64.parquet"
FIO_LOG = (
    ROOT.parent
    / "shared"
    / "realdata"
    / "louwrentius__fio-plot__benchmark_data_SERVER_IBM_M1015_SAMSUNG_PM883_"
    "randwrite-iodepth-16-numjobs-1_bw.1.log"
)


def _sim(op: float, *, written: str = "600m", serial: str | None = None) -> fb.Capture:
    """4 KiB uniform random writes on a small seeded sim drive (deterministic)."""
    w = fb.Workload(
        rw="randwrite",
        bs="4k",
        iodepth=32,
        written=written,
        seed=7,
        random="uniform",
        interval=0.02,
    )
    cap = fb.run(f"sim:generic?scale=1/512&op={op}", w)
    if serial is not None:
        cap.meta["target"]["serial"] = serial  # a sim drive has none; a fleet's drives do
    return cap


def _one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert "\n" not in msg and msg, msg
    return msg


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> dict[str, Path]:
    """A directory with an Arrow stream from a sim run, the real file-run Arrow capture, the
    Puget replay in Parquet, and a real fio log imported and saved as Parquet."""
    d = tmp_path_factory.mktemp("mixed")
    (d / "nested").mkdir()
    files = {
        "sim": _sim(0.07).save(d / "sim.arrow"),
        "file": Path(shutil.copy(FILE_ARROW, d / "file.arrow")),
        "puget": Path(shutil.copy(PUGET_PARQUET, d / "nested" / "puget.parquet")),
    }
    if FIO_LOG.exists():
        files["fio"] = fb.read_fio(FIO_LOG).save(d / "fio.parquet")
    (d / "notes.txt").write_text("not a capture")
    return {"dir": d, **files}


def test_scan_mixed_arrow_and_parquet(mixed) -> None:
    lf = fb.scan_captures(mixed["dir"])
    assert isinstance(lf, pl.LazyFrame)
    plan = lf.explain()
    assert "PARQUET" in plan.upper()  # the Parquet captures are scanned, not read here
    df = lf.collect()
    names = [k for k in mixed if k != "dir"]
    caps = {k: fb.load(mixed[k]) for k in names}
    assert df.height == sum(c.intervals.height for c in caps.values())
    assert df.columns[: len(IDENTITY_SCHEMA)] == list(IDENTITY_SCHEMA)
    for k, cap in caps.items():
        part = df.filter(pl.col("capture_path") == str(mixed[k]))
        # every interval column comes back with the values load() gives
        assert part.select(cap.intervals.columns).equals(cap.intervals), k
        meta = cap.meta
        row = part.row(0, named=True)
        assert row["status"] == meta["status"]
        assert part["capture_id"].n_unique() == 1
        if k == "file":
            t = meta["target"]
            assert row["serial"] == t.get("serial") and row["model"] == t.get("model")
            assert row["host"] == meta["host"]["hostname"]
            assert row["flashback_version"] == meta["flashback_version"]
            assert (row["workload_rw"], row["workload_bs_bytes"], row["workload_iodepth"]) == (
                "randwrite",
                4096,
                32,
            )
            assert row["test"] == "randwrite-4k-qd32"
            assert part["nand_written_bytes"].is_null().all()  # a real file has no NAND truth
        if k == "puget":
            assert row["model"] == "sim:intel-520-120g" and row["test"] == "puget-cdm-loop"
            assert row["capacity_bytes"] == meta["target"]["size_bytes"]
            assert part["step"].n_unique() > 10
        if k == "sim":
            assert row["model"] == "sim:generic" and row["target_kind"] == "sim"
            assert part["nand_written_bytes"].is_not_null().all()


def test_scan_filters_by_identity_lazily(mixed) -> None:
    lf = fb.scan_captures(mixed["dir"])
    n = lf.filter(pl.col("test") == "puget-cdm-loop").select(pl.len()).collect().item()
    assert n == fb.load(mixed["puget"]).intervals.height


def test_scan_glob_and_list(mixed) -> None:
    d = mixed["dir"]
    only_arrow = fb.scan_captures(str(d / "*.arrow")).collect()
    assert set(only_arrow["capture_path"].unique()) == {str(mixed["sim"]), str(mixed["file"])}
    deep = fb.scan_captures(str(d / "**" / "*.parquet")).collect()
    assert str(mixed["puget"]) in set(deep["capture_path"])
    two = fb.scan_captures([mixed["file"], mixed["puget"]]).collect()
    assert two["capture_id"].n_unique() == 2


def test_bad_paths_give_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(tmp_path / "missing")
    assert "does not exist" in _one_line(e)
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(tmp_path)
    assert "holds no .arrow or .parquet capture" in _one_line(e)
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(str(tmp_path / "*.parquet"))
    assert "matches" in _one_line(e)
    with pytest.raises(fb.CaptureFileError):
        fb.scan_captures([])
    plain = tmp_path / "plain.parquet"
    pl.DataFrame({"t_s": [1.0]}).write_parquet(plain)
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(plain)
    assert "no flashback metadata" in _one_line(e)
    junk = tmp_path / "junk.arrow"
    junk.write_bytes(b"this is not arrow")
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(junk)
    _one_line(e)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 but nothing else")
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(broken)
    assert "not a readable Parquet file" in _one_line(e)


def test_mixed_schemas_give_one_sentence(tmp_path: Path) -> None:
    good = _sim(0.07)
    good.save(tmp_path / "a.parquet")
    odd = fb.Capture(
        good.intervals.with_columns(pl.col("write_mbps").cast(pl.String)), dict(good.meta)
    )
    odd.meta["start_time"] = "another run"
    odd.save(tmp_path / "b.parquet")
    with pytest.raises(fb.CaptureFileError) as e:
        fb.scan_captures(tmp_path)
    msg = _one_line(e)
    assert "'write_mbps'" in msg and "a.parquet" in msg and "b.parquet" in msg
    # numbers of another width are the same kind: they are widened, not refused
    (tmp_path / "b.parquet").unlink()
    wide = fb.Capture(good.intervals.with_columns(pl.col("write_ios").cast(pl.Int64)), odd.meta)
    wide.save(tmp_path / "c.parquet")
    df = fb.scan_captures(tmp_path).collect()
    assert df["write_ios"].dtype.is_integer() and df.height == 2 * good.intervals.height


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, list[fb.Capture]]:
    """Three captures of two 'drives' (serials set by hand; one with a slash and a space)
    written with to_dataset, plus the real file run."""
    root = tmp_path_factory.mktemp("fleet")
    caps = [
        _sim(0.07, serial="SN-A"),
        _sim(0.28, serial="SN/B 2"),
        _sim(0.07, serial="SN-A", written="400m"),
        fb.load(FILE_ARROW),
    ]
    for c in caps:
        c.to_dataset(root)
    return root, caps


def test_to_dataset_layout(fleet) -> None:
    root, caps = fleet
    files = sorted(root.rglob("*.parquet"))
    assert len(files) == len(caps)
    rel = {str(f.relative_to(root).parent) for f in files}
    assert "model=sim%3Ageneric/serial=SN%2FB 2/test=randwrite-4k-qd32" in rel
    assert any(r.startswith("model=__HIVE_DEFAULT_PARTITION__/") for r in rel)  # no model known
    # the same capture written again replaces its file
    caps[0].to_dataset(root)
    assert len(sorted(root.rglob("*.parquet"))) == len(caps)
    assert not list(root.rglob("*.tmp*"))


def test_dataset_read_by_duckdb_without_flashback(fleet) -> None:
    duckdb = pytest.importorskip("duckdb")
    root, caps = fleet
    got = duckdb.sql(
        f"SELECT model, serial, test, count(*) AS n, sum(write_bytes) AS written, "
        f"count(DISTINCT capture_id) AS captures "
        f"FROM read_parquet('{root}/**/*.parquet', hive_partitioning = true, union_by_name = true) "
        f"GROUP BY ALL ORDER BY serial NULLS LAST"
    ).fetchall()
    expected: dict[tuple, list[int]] = {}
    for c in caps:
        t = c.meta["target"]
        model = f"sim:{t['preset']}" if t.get("kind") == "sim" else t.get("model")
        key = (model, t.get("serial"), "randwrite-4k-qd32")
        acc = expected.setdefault(key, [0, 0, 0])
        acc[0] += c.intervals.height
        acc[1] += int(c.intervals["write_bytes"].sum())
        acc[2] += 1
    assert {r[:3]: list(r[3:]) for r in got} == expected
    # the capture-level columns are plain Parquet columns too
    rows = duckdb.sql(
        f"SELECT DISTINCT workload_rw FROM read_parquet('{root}/**/*.parquet')"
    ).fetchall()
    assert rows == [("randwrite",)]


def test_dataset_read_by_polars_alone(fleet) -> None:
    root, caps = fleet
    # polars takes the columns of the first file it reads: the sim ground-truth columns of
    # other files are left out with extra_columns="ignore" (scan_captures unions them)
    df = pl.scan_parquet(
        root,
        hive_partitioning=True,
        hive_schema=hive_schema(),
        missing_columns="insert",
        extra_columns="ignore",
    ).collect()
    assert df.height == sum(c.intervals.height for c in caps)
    assert set(df["serial"].unique().to_list()) == {
        "SN-A",
        "SN/B 2",
        caps[3].meta["target"]["serial"],
    }


def test_dataset_scans_back_as_the_captures(fleet, tmp_path: Path) -> None:
    root, caps = fleet
    for i, c in enumerate(caps):
        c.save(tmp_path / f"{i}.parquet")
    key = ["capture_id", "t_s"]
    a = fb.scan_captures(root).drop("capture_path").collect().sort(key)
    b = fb.scan_captures(tmp_path).drop("capture_path").collect().sort(key)
    assert a.equals(b)
    # a dataset file still loads as a capture with its metadata
    one = fb.load(next(root.rglob("*.parquet")))
    assert one.meta["status"] == "complete"


def test_to_dataset_refuses_a_bad_partition_key(tmp_path: Path) -> None:
    with pytest.raises(fb.ParameterError) as e:
        fb.load(FILE_ARROW).to_dataset(tmp_path, partition_by=("model", "colour"))
    assert "'colour'" in _one_line(e)
    assert not any(tmp_path.iterdir())


def test_to_dataset_under_a_file_is_a_capture_file_error(tmp_path: Path) -> None:
    root = tmp_path / "not-a-directory"
    root.write_text("a file where the dataset's root should be\n")
    with pytest.raises(fb.CaptureFileError) as e:
        fb.load(FILE_ARROW).to_dataset(root)
    assert f"cannot write a dataset under {root}" in _one_line(e)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-directory"]


def test_hive_schema_refuses_a_bad_partition_key() -> None:
    with pytest.raises(fb.ParameterError) as e:
        hive_schema(["model", "colour"])
    assert "'colour'" in _one_line(e)
    with pytest.raises(fb.ParameterError, match="'capture_path'"):
        hive_schema(["capture_path"])  # a path per file cannot name a directory
    assert list(hive_schema(["serial"])) == ["serial"]


def test_changepoints_by_serial_equals_one_capture_at_a_time(fleet, tmp_path: Path) -> None:
    root, caps = fleet
    lf = fb.scan_captures(root).filter(pl.col("serial") == "SN/B 2")
    lf = pl.concat([lf, fb.scan_captures(root).filter(pl.col("target_kind") == "file")])
    g = fb.changepoints(lf, by="serial", y="write_iops")
    assert sorted(g, key=str) == sorted([("SN/B 2",), (caps[3].meta["target"]["serial"],)], key=str)
    direct = fb.changepoints(caps[1], y="write_iops")
    assert g["SN/B 2"].breakpoints == direct.breakpoints
    assert g["SN/B 2"].to_frame().equals(direct.to_frame())  # fills use that drive's capacity
    frame = g.to_frame()
    assert frame.columns[0] == "serial" and frame.height == sum(r.n_segments for r in g.values())
    summary = g.summary()
    assert summary.height == 2 and "n_segments" in summary.columns


def test_changepoints_by_capture_on_a_dataset(fleet) -> None:
    root, caps = fleet
    g = fb.changepoints(fb.scan_captures(root), by=["serial", "capture_id"], y="write_iops")
    assert len(g) == len(caps)
    for c in caps:
        cid = fb.dataset.capture_id(c.meta)
        key = next(k for k in g if k[1] == cid)
        assert g[key].breakpoints == fb.changepoints(c, y="write_iops").breakpoints


def test_one_group_of_many_captures_names_the_group(fleet) -> None:
    root, _ = fleet
    with pytest.raises(fb.AnalysisError) as e:
        fb.changepoints(fb.scan_captures(root), by="serial")
    msg = _one_line(e)
    assert msg.startswith("in group serial=SN-A:") and "cumulative" in msg


def test_steady_state_by_equals_one_capture_at_a_time(fleet) -> None:
    root, caps = fleet
    lf = fb.scan_captures(root).filter(pl.col("target_kind") == "sim")
    g = fb.steady_state(lf, by=["serial", "capture_id"], y="write_iops", round="0.1fill")
    assert len(g) == 3
    for c in caps[:3]:
        cid = fb.dataset.capture_id(c.meta)
        (key,) = [k for k in g if k[1] == cid]
        direct = fb.steady_state(c, y="write_iops", round="0.1fill")
        assert (g[key].reached, g[key].window, g[key].onset) == (
            direct.reached,
            direct.window,
            direct.onset,
        )
    s = g.summary()
    assert set(s.columns) >= {"serial", "capture_id", "reached", "onset_fills"}


def test_group_errors(fleet) -> None:
    root, _ = fleet
    lf = fb.scan_captures(root)
    with pytest.raises(fb.AnalysisError) as e:
        fb.steady_state(lf, by="colour")
    assert "by='colour'" in _one_line(e)
    with pytest.raises(fb.AnalysisError) as e:
        fb.steady_state([1, 2, 3], by="serial")
    _one_line(e)


def test_identity_is_derived_from_the_footer_not_the_file_body(fleet, tmp_path: Path) -> None:
    """A dataset file whose identity columns were edited by another tool still scans with
    the identity its metadata states (one source of truth)."""
    root, caps = fleet
    f = next(root.rglob("*.parquet"))
    md = pl.read_parquet_metadata(f)
    df = pl.read_parquet(f).with_columns(pl.lit("edited").alias("host"))
    out = tmp_path / "x.parquet"
    df.write_parquet(out, metadata={META_KEY: md[META_KEY]})
    host = fb.scan_captures(out).select("host").unique().collect().item()
    assert host == json.loads(md[META_KEY])["host"]["hostname"]


def test_a_saved_replay_directory_scans_with_its_metadata(tmp_path: Path) -> None:
    rep = fb.replay("anand2009-new-vs-used", target="sim:generic?scale=1/512", scale="1/1024")
    rep.save(tmp_path / "rep")
    df = fb.scan_captures(tmp_path).collect()
    assert df.height == rep.intervals.height
    assert df["test"].unique().to_list() == ["anand2009-new-vs-used"]
    assert df["capacity_bytes"].unique().to_list() == [rep.meta["target_size_bytes"]]
    assert df.select(rep.intervals.columns).equals(rep.intervals)


@pytest.mark.parametrize(
    ("meta", "test", "model"),
    [
        ({"workload": {"rw": "randwrite", "bs": 4096, "iodepth": 32}}, "randwrite-4k-qd32", None),
        ({"workload": {"rw": "write", "bs": 1000}}, "write-1000-qd1", None),
        ({"workload": {"rw": "trim"}, "target": {"kind": "block", "model": "X"}}, "trim-qd1", "X"),
        ({"protocol": "snia-pts", "target": {"kind": "sim", "preset": "p"}}, "snia-pts", "sim:p"),
        ({}, None, None),
    ],
)
def test_identity_of_hand_written_metadata(meta: dict, test: str | None, model: str | None) -> None:
    row = fb.dataset.identity(meta)
    assert list(row) == list(IDENTITY_SCHEMA)
    assert (row["test"], row["model"]) == (test, model)
