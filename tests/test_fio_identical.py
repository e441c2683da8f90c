"""fio import results stay bit-identical where only speed changed (issue 29.4): every pinned
input set of tests/data/fio read now equals the frame the code before the speed work
(commit 31b02e0 on branch fio) wrote to tests/data/fio/snapshots/ (see SOURCES.md).
``python tests/test_fio_identical.py --write`` rewrites the snapshots (only when a change of
results is intended)."""

from __future__ import annotations

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


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAP.mkdir(exist_ok=True)
    for n in CASES:
        _read(n).write_parquet(SNAP / f"{n}.parquet")
        print("wrote", n)
