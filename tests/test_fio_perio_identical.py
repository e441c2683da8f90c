"""fio log import results stay bit-identical where only speed changed (issue 29.4, the
native per-I/O reader): generated per-I/O logs of every layout the fast path takes or hands
back (500 k lines of one direction; mixed directions, sizes and jobs; times stepping back;
bins of 1 to 300 samples; values above 2⁵³; fio 2.x µs; hex priorities; epoch times; issue
times) and the real logs of ../shared/realdata read now equal the frames and metadata that
the code before that work (commit 79d544e) wrote to tests/data/fio/snapshots/perio/.
``python tests/test_fio_perio_identical.py --write`` rewrites them (only when a change of
results is intended). Each generated log's sha256 is held too, so a changed generator is
reported as such rather than as changed results."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.fio_logs import write_log

import flashback as fb
from flashback.fio import logs

HERE = Path(__file__).resolve().parent
SNAP = HERE / "data" / "fio" / "snapshots" / "perio"
REAL = HERE.parent.parent / "shared" / "realdata"
PM = "louwrentius__fio-plot__benchmark_data_SERVER_IBM_M1015_SAMSUNG_PM883_randwrite-"
AS = "asheplyakov__ceph-jemalloc-bench__"

MIXED = {"dirs": (0, 1), "block_sizes": (4096, 8192, 65536), "offset": True}


def _jobs(kinds: tuple[str, ...], jobs: int, **kw) -> list[tuple[str, dict]]:
    """The same layout for several kinds and jobs, each file its own seed."""
    out = []
    for j in range(1, jobs + 1):
        for k, kind in enumerate(kinds):
            spec = dict(kw, seed=kw["seed"] + 10 * j + k)
            if kind == "iops":
                spec["const_value"] = 1
            out.append((f"g_{kind}.{j}.log", spec))
    return out


ONE = [("g_clat.1.log", {"lines": 500_000, "seed": 1, "span_ms": 8_000})]
SMALL = [("g_clat.1.log", {"lines": 20_000, "seed": 2, "span_ms": 2_000, "dirs": (0, 1)})]

#: name → (logs to write: (file name, write_log arguments), read_fio arguments)
GENERATED: dict[str, tuple[list[tuple[str, dict]], dict]] = {
    "gen500k_1s": (ONE, {"fio_version": "3.33"}),
    "gen500k_10ms": (ONE, {"fio_version": "3.33", "interval_s": 0.01}),
    "gen_randrw_2jobs": (
        _jobs(("lat", "clat", "slat", "iops", "bw"), 2, lines=40_000, seed=3, span_ms=3_000, **MIXED),
        {"fio_version": "3.33"},
    ),
    "gen_step_back": (
        _jobs(("clat",), 1, lines=100_000, seed=4, span_ms=4_000, step_back_ms=50, dirs=(0, 1)),
        {"fio_version": "3.33", "interval_s": 0.5},
    ),
    "gen_bins_1ms": (SMALL, {"fio_version": "3.33", "interval_s": 0.001}),
    "gen_bins_12ms": (SMALL, {"fio_version": "3.33", "interval_s": 0.0123}),
    "gen_bins_30ms": (SMALL, {"fio_version": "3.33", "interval_s": 0.03}),
    "gen_huge_values": (
        [("g_clat.1.log", {"lines": 30_000, "seed": 5, "span_ms": 3_000, "huge_every": 997})],
        {"fio_version": "3.33"},
    ),
    "gen_fio2_us": (
        _jobs(("lat", "clat"), 2, lines=20_000, seed=6, span_ms=2_000, prio=None, value_scale=0.001),
        {"fio_version": "2.18"},
    ),
    "gen_hex_prio": (
        [("g_clat.1.log", {"lines": 20_000, "seed": 7, "span_ms": 2_000, "prio": "hex"})],
        {"fio_version": "3.33"},
    ),
    "gen_epoch": (
        _jobs(("clat",), 2, lines=20_000, seed=8, span_ms=2_000, start_ms=1_700_000_000_000),
        {"fio_version": "3.33"},
    ),
    **{f"gen_edit_{e}": ([("g_clat.1.log", {"lines": 20_000, "seed": 10, "span_ms": 2_000})], {"fio_version": "3.33"}) for e in (
        "crlf", "blank_line", "blank_end", "short_line", "trailing_space", "negative",
        "no_final_newline", "above_int64", "tab", "plus_sign", "quoted"
    )},
    "gen_issue_time": (
        [("g_lat.1.log", {"lines": 20_000, "seed": 9, "span_ms": 2_000, "issue_time": True, "offset": True})],
        {"fio_version": "3.33", "interval_s": 0.25},
    ),
}  # fmt: skip

#: name → (files in ../shared/realdata, read_fio arguments)
REAL_CASES: dict[str, tuple[list[str], dict]] = {
    "real_pm883_logs_json": (
        [f"{PM}iodepth-16-numjobs-1_{k}.1.log" for k in ("bw", "iops", "lat", "clat", "slat")]
        + [f"{PM}16-1.json"],
        {},
    ),
    "real_pm883_clat_100ms": (
        [f"{PM}iodepth-16-numjobs-1_clat.1.log"], {"fio_version": "3.1", "interval_s": 0.1}
    ),
    "real_ceph_journal_logs": (
        [f"{AS}desktop_ssd_journal_{k}.log_{k}.1.log" for k in ("bw", "iops")],
        {"fio_version": "2.2.10"},
    ),
}  # fmt: skip


#: byte edits of a generated log (``gen_edit_*``): input the fast reader must hand back to
#: the general one, which reads it or refuses it as before
EDITS = {
    "crlf": lambda b: b.replace(b"\n", b"\r\n"),
    "blank_line": lambda b: _edit_line(b, 5000, lambda f: "\n" + ", ".join(f)),
    "blank_end": lambda b: b + b"\n",
    "short_line": lambda b: _edit_line(b, 5000, lambda f: ", ".join(f[:-1])),
    "trailing_space": lambda b: _edit_line(b, 5000, lambda f: ", ".join([f[0] + " "] + f[1:])),
    "negative": lambda b: _edit_line(b, 100, lambda f: ", ".join([f[0], "-" + f[1]] + f[2:])),
    "no_final_newline": lambda b: b[:-1],
    "above_int64": lambda b: _edit_line(b, 100, lambda f: ", ".join([f[0], str(2**63)] + f[2:])),
    "tab": lambda b: _edit_line(b, 100, lambda f: ",\t".join(f)),
    "plus_sign": lambda b: _edit_line(b, 100, lambda f: ", ".join([f[0], "+" + f[1]] + f[2:])),
    "quoted": lambda b: _edit_line(b, 100, lambda f: ", ".join([f[0], f'"{f[1]}"'] + f[2:])),
}


def _edit_line(data: bytes, k: int, edit) -> bytes:
    """``data`` with its line ``k`` (0-based) replaced by ``edit(the line's fields)``."""
    lines = data.split(b"\n")
    lines[k] = edit(lines[k].decode().split(", ")).encode()
    return b"\n".join(lines)


def _generate(name: str, d: Path) -> tuple[list[Path], dict, dict[str, str]]:
    specs, kw = GENERATED[name]
    files, sums = [], {}
    for fname, spec in specs:
        p = d / fname
        sums[fname] = write_log(p, **spec)
        if name.startswith("gen_edit_"):
            p.write_bytes(EDITS[name.removeprefix("gen_edit_")](p.read_bytes()))
            sums[fname] = hashlib.sha256(p.read_bytes()).hexdigest()
        files.append(p)
    return files, kw, sums


def _result(files: list[Path], kw: dict) -> tuple[pl.DataFrame | None, dict]:
    """(frame, metadata without file paths) of one import, or (None, the error's class and
    message with the directory taken out) when it refuses the input."""
    try:
        cap = fb.read_fio(files if len(files) > 1 else files[0], **kw)
    except fb.FlashbackError as e:
        return None, {
            "error": type(e).__name__,
            "message": str(e).replace(str(files[0].parent), "DIR"),
        }
    meta = {k: v for k, v in cap.meta.items() if k != "files"}
    return cap.intervals, json.loads(json.dumps(meta, default=str))


def _check(name: str, frame: pl.DataFrame | None, meta: dict) -> None:
    want_meta = json.loads((SNAP / f"{name}.json").read_text())
    assert meta == want_meta["meta"], name
    if frame is None:
        assert not (SNAP / f"{name}.parquet").exists()
        return
    want = pl.read_parquet(SNAP / f"{name}.parquet")
    assert frame.schema == want.schema, name
    assert frame.equals(want, null_equal=True), name


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_logs_read_as_before(name, tmp_path):
    files, kw, sums = _generate(name, tmp_path)
    want_sums = json.loads((SNAP / f"{name}.json").read_text())["sha256"]
    assert sums == want_sums, (
        f"{name}: the generator now writes other bytes; the snapshot no longer applies"
    )
    _check(name, *_result(files, kw))


@pytest.mark.parametrize("name", sorted(REAL_CASES))
def test_real_logs_read_as_before(name):
    files = [REAL / f for f in REAL_CASES[name][0]]
    if not all(f.exists() for f in files):
        pytest.skip(f"real data not found at {REAL} (the repository's ../shared/realdata)")
    _check(name, *_result(files, REAL_CASES[name][1]))


#: generated logs the plain reader hands back to the general one (values of 2⁵³ or more, hex
#: priorities, and every edit but a missing last newline)
HANDED_BACK = {"gen_huge_values", "gen_hex_prio"} | {
    f"gen_edit_{e}" for e in EDITS if e != "no_final_newline"
}


@pytest.mark.parametrize("name", sorted(n for n in GENERATED if not n.startswith("gen500k")))
def test_plain_reader_reads_what_the_general_one_reads(name, tmp_path):
    """Where the native reader reads a file, every field, range and order flag equals the
    general (polars) reader's; the rest it leaves to the general reader."""
    files, _, _ = _generate(name, tmp_path)
    for f in files:
        fast = logs.read_plain(f)
        if name in HANDED_BACK:
            assert fast is None, f.name
            continue
        assert fast is not None, f.name
        general = logs.read_columns(f)
        assert len(fast.cols) == len(general.cols)
        for a, b in zip(fast.cols, general.cols, strict=True):
            assert np.array_equal(a, b)
        assert (fast.lows, fast.highs, fast.t_sorted) == (
            general.lows,
            general.highs,
            general.t_sorted,
        )
        assert fast.hexcols == general.hexcols == set()


def test_the_cases_take_both_paths():
    """The snapshots hold results, not only refusals; refusals only for edited bytes."""
    metas = {n: json.loads((SNAP / f"{n}.json").read_text())["meta"] for n in GENERATED}
    read = {n for n, m in metas.items() if "error" not in m}
    assert {n for n in GENERATED if not n.startswith("gen_edit_")} <= read
    assert {"gen_edit_crlf", "gen_edit_no_final_newline"} <= read  # polars reads these
    assert {"gen_edit_negative", "gen_edit_short_line"}.isdisjoint(read)  # and refuses these
    assert set(EDITS) == {n.removeprefix("gen_edit_") for n in GENERATED if "edit" in n}


def _write(d: Path) -> None:
    SNAP.mkdir(parents=True, exist_ok=True)
    for name in GENERATED:
        sub = d / name
        sub.mkdir()
        files, kw, sums = _generate(name, sub)
        frame, meta = _result(files, kw)
        _save(name, frame, {"meta": meta, "sha256": sums})
    for name, (names, kw) in REAL_CASES.items():
        frame, meta = _result([REAL / f for f in names], kw)
        _save(name, frame, {"meta": meta})


def _save(name: str, frame: pl.DataFrame | None, doc: dict) -> None:
    (SNAP / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if frame is not None:
        frame.write_parquet(SNAP / f"{name}.parquet")
    print("wrote", name, "(refused)" if frame is None else frame.shape)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp))
