"""fio import results stay bit-identical where only speed changed (issue 29.4): every pinned
input set of tests/data/fio read now equals the frame the code before the speed work
(commit 31b02e0 on branch fio) wrote to tests/data/fio/snapshots/ (see SOURCES.md).
``python tests/test_fio_identical.py --write`` rewrites the snapshots (only when a change of
results is intended)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import polars as pl
import pytest

import flashback as fb

DATA = Path(__file__).resolve().parent / "data" / "fio"
SNAP = DATA / "snapshots"
FP = "louwrentius__fio-plot__"
CS = "chris-sanders__ceph-fio-results__bluestore_"
PB = "distributed-system-analysis__pbench__fio-0_"


def _g(pattern: str) -> list[Path]:
    return sorted(DATA.glob(pattern))


CASES: dict[str, tuple[list[Path], dict]] = {
    "perio_logs_json": (_g("local-fio-3.33__perio*"), {}),
    "perio_logs_100ms": (_g("local-fio-3.33__perio_*.log"), {"interval_s": 0.1, "fio_version": "3.33"}),
    "perio_clat_only": (_g("local-fio-3.33__perio_clat.*.log"), {"fio_version": "3.33"}),
    "p420i_weighted": (_g("*P420i_INTEL_RW*"), {}),
    "t01_logs_json": (_g(f"{FP}test-data01_*"), {}),
    "highpoint_16_jobs": (_g(f"{FP}benchmark_data_SERVER_HIGHPOINT*"), {}),
    "pbench_perf36_logs": (_g(f"{PB}perf36_fio_[bil]*.log") + _g(f"{PB}perf36_fio_clat.*.log"), {"fio_version": "3.7"}),
    "erasure_logs_normal": (_g(f"{CS}erasure2.1_*"), {}),
    "onejob_normal": ([DATA / f"{CS}onejob_randread-4k.out"], {}),
    "json_fio218": ([DATA / f"{FP}example_data01_randwrite-04.json"], {}),
    "json_fio36": ([DATA / f"{FP}ceph-hdd-goed_randread-16-4.json"], {}),
    "json_fio334": ([DATA / f"{FP}deleteme_fio_4k_randread-1-1.json"], {}),
    "terse_fio31": ([DATA / "mcgrof__fio-tests__0003-bs4k-256iobs-4j-128qd-randrw.ini.out"], {}),
}  # fmt: skip


def _read(name: str) -> pl.DataFrame:
    files, kw = CASES[name]
    assert files, name
    return fb.read_fio(files if len(files) > 1 else files[0], **kw).intervals


@pytest.mark.parametrize("name", sorted(CASES))
def test_frames_equal_before_and_after(name):
    want = pl.read_parquet(SNAP / f"{name}.parquet")
    got = _read(name)
    assert got.schema == want.schema
    assert got.equals(want, null_equal=True), name


#: each case's run as fio itself summed it: its JSON, normal or terse output (the snapshots
#: were written by the code under test, so they are held to fio's own totals here)
FIO_TOTALS = {
    "perio_logs_json": DATA / "local-fio-3.33__perio.json",
    "perio_logs_100ms": DATA / "local-fio-3.33__perio.json",
    "perio_clat_only": DATA / "local-fio-3.33__perio.json",
    "p420i_weighted": DATA / f"{FP}benchmark_data_HPDL380G8_RAID_NEW_P420i_INTEL_RW_randrw-16-4.json",
    "t01_logs_json": DATA / f"{FP}test-data01_json_randread-01-01.json",
    "highpoint_16_jobs": DATA / f"{FP}benchmark_data_SERVER_HIGHPOINT_RAID5_randread-1-16.json",
    "erasure_logs_normal": DATA / f"{CS}erasure2.1_randread-4k.out",
    "onejob_normal": DATA / f"{CS}onejob_randread-4k.out",
    "json_fio218": DATA / f"{FP}example_data01_randwrite-04.json",
    "json_fio36": DATA / f"{FP}ceph-hdd-goed_randread-16-4.json",
    "json_fio334": DATA / f"{FP}deleteme_fio_4k_randread-1-1.json",
    "terse_fio31": DATA / "mcgrof__fio-tests__0003-bs4k-256iobs-4j-128qd-randrw.ini.out",
}  # fmt: skip


def _fio_totals(path: Path) -> dict[str, int]:
    """``read_ios``/``write_ios`` (or, from terse output, ``read_bytes``/``write_bytes``) as
    fio's own summary states them, parsed here without flashback."""
    text = path.read_text()
    if text.startswith("3;fio-"):  # terse v3: field 6 read KiB, field 47 write KiB
        f = text.split(";")
        return {"read_bytes": int(f[5]) * 1024, "write_bytes": int(f[46]) * 1024}
    if path.suffix == ".json":
        jobs = json.loads(text[text.index("{") :])["jobs"]
        return {f"{d}_ios": sum(j[d]["total_ios"] for j in jobs) for d in ("read", "write")}
    issued = re.findall(r"issued\s*: total=r=(\d+)/w=(\d+)", text)
    return {f"{d}_ios": sum(int(t[k]) for t in issued) for k, d in enumerate(("read", "write"))}


def test_every_case_is_held_to_fios_own_totals():
    assert set(FIO_TOTALS) | {"pbench_perf36_logs"} == set(CASES)  # logs only: no summary


@pytest.mark.parametrize("name", sorted(FIO_TOTALS))
def test_snapshots_add_up_to_fios_own_totals(name):
    """A snapshot read from fio's summary alone (one row) holds its totals exactly; one read
    from interval logs within 1 % (the logs' windows are not the whole run's I/Os)."""
    snap = pl.read_parquet(SNAP / f"{name}.parquet")
    rel = 0 if snap.height == 1 or name.startswith("perio") else 0.01
    totals = _fio_totals(FIO_TOTALS[name])
    assert any(totals.values()), totals  # fio's summary was found and parsed
    for col, want in totals.items():
        assert snap[col].sum() == pytest.approx(want, rel=rel), (name, col)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAP.mkdir(exist_ok=True)
    for n in CASES:
        _read(n).write_parquet(SNAP / f"{n}.parquet")
        print("wrote", n)
