"""fio files classified by content, not by name, and the same JSON document kept twice read
as one (issue 27.3, 27.4), on real fio output pinned in tests/data/fio (see its SOURCES.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.edit import edited

import flashback as fb

DATA = Path(__file__).resolve().parent / "data" / "fio"
CS = "chris-sanders__ceph-fio-results__bluestore_"
E21 = [DATA / f"{CS}erasure2.1_randread-4k-KERNEL_{k}.log" for k in ("bw", "iops", "lat", "clat")]
E21_OUT = DATA / f"{CS}erasure2.1_randread-4k.out"
J334 = DATA / "louwrentius__fio-plot__deleteme_fio_4k_randread-1-1.json"


def test_normal_output_named_log_in_a_list_checks_the_logs(tmp_path):
    """`fio job.fio > run.log` (fio-2.2.10 normal output) passed with the run's logs was taken
    for a sample log by its name and refused ("not a fio log name … rename it")."""
    out = tmp_path / "randread-4k.log"
    shutil.copy(E21_OUT, out)
    cap = fb.read_fio(E21 + [out])
    assert cap.meta["fio_version"] == "fio-2.2.10"
    assert str(out) in cap.meta["files"]
    # checked against it: "issued : total=r=967045/w=0/d=0"
    assert cap.intervals["read_ios"].sum() == pytest.approx(967045, rel=0.01)
    # and still checked: an edited group line is refused
    bad = edited(out, "READ: io=3777.6MB", "READ: io=3877.6MB", tmp_path / "edited.log")
    with pytest.raises(fb.FioFormatError, match="read_bytes=4065958298 "):
        fb.read_fio(E21 + [bad])


@pytest.mark.parametrize("name", ["randread-4k.log", "run_lat.log"])
def test_normal_output_named_log_alone_is_not_called_a_log(tmp_path, name):
    """Alone, it was refused as "not a fio log name … rename it" or, with a log-like name,
    as a log with a bad line."""
    out = tmp_path / name
    shutil.copy(E21_OUT, out)
    try:
        cap = fb.read_fio(out)
    except fb.FlashbackError as e:
        assert "fio log" not in str(e) and "rename" not in str(e)
    else:
        assert cap.meta["fio_format"].startswith("normal")


def test_normal_output_named_like_a_log_in_a_directory(tmp_path):
    for p in E21:
        shutil.copy(p, tmp_path / p.name)
    shutil.copy(E21_OUT, tmp_path / "randread-4k-KERNEL_lat.1.log")
    cap = fb.read_fio(tmp_path)
    assert any(f.endswith("randread-4k-KERNEL_lat.1.log") for f in cap.meta["files"])
    assert cap.intervals["read_ios"].sum() == pytest.approx(967045, rel=0.01)


def test_the_same_json_document_twice_is_one_document(tmp_path):
    """A terminal capture holding fio-3.34's JSON twice was read as a two-document
    status-interval stream: totals right, the document's percentiles dropped."""
    once = fb.read_fio(J334)
    text = J334.read_text()
    twice = tmp_path / "terminal.txt"
    twice.write_text(text + "\n" + text[text.index("{") :])
    cap = fb.read_fio(twice)
    assert cap.meta["fio_format"] == "json"
    assert cap.intervals.equals(once.intervals)
    assert cap.intervals["read_clat_p99_us"][0] is not None


# --- normal output read like fio's JSON (issue 27.2) -------------------------------------

ONE_OUT = DATA / f"{CS}onejob_randread-4k.out"


def test_fio216_six_stonewalled_groups_one_row_each():
    """fio-2.16, six stonewalled one-job groups: "issued : total=r=5898/w=0/d=0" …, "read :
    io=23592KB … runt= 60008msec", "clat (usec): … avg=314569.08", "clat percentiles (usec):
    99.00th=[424000]", and each group's "READ: io=23592KB" (checked)."""
    cap = fb.read_fio(ONE_OUT)
    df = cap.intervals
    assert cap.meta["fio_format"] == "normal" and cap.meta["fio_version"] == "fio-2.16"
    assert df["read_ios"].to_list() == [5898, 4452, 4531, 18837, 10491, 15720]
    assert df["read_bytes"].to_list() == [
        k * 1024 for k in (23592, 17808, 18124, 75348, 41964, 62880)
    ]
    assert df["interval_s"].to_list() == pytest.approx(
        [60.008, 60.011, 60.004, 60.329, 60.244, 60.181]
    )
    assert df["read_clat_mean_us"][0] == pytest.approx(314569.08)
    assert df["read_clat_p99_us"][0] == pytest.approx(424000)
    # "clat (usec): min=14, max=1068.6K, avg=416167.26"; "lat (msec): … avg=429.63"
    assert df["read_clat_mean_us"][1] == pytest.approx(416167.26)
    assert df["read_clat_max_us"][1] == pytest.approx(1068600)
    assert df["read_lat_mean_us"][1] == pytest.approx(429630)
    assert df["step"][3] == "ceph-kern-replicated"
    assert df["write_ios"].sum() == 0


def test_fio2210_normal_output_alone():
    # "read : io=3777.6MB, bw=64466KB/s, iops=16116, runt= 60003msec", "clat (usec): …
    # avg=1929.49", "issued : total=r=967045/w=0/d=0", bs=4K
    df = fb.read_fio(E21_OUT).intervals
    assert df["read_ios"][0] == 967045
    assert df["read_bytes"][0] == 967045 * 4096
    assert df["read_iops"][0] == pytest.approx(16116, rel=1e-4)
    assert df["read_clat_mean_us"][0] == pytest.approx(1929.49)


def test_a_group_whose_jobs_do_not_add_up_is_refused(tmp_path):
    p = edited(ONE_OUT, "READ: io=75348KB", "READ: io=85348KB", tmp_path / "edited.out")
    with pytest.raises(fb.FioFormatError, match="group 3"):
        fb.read_fio(p)


def test_four_runs_pasted_into_one_file_are_named_as_four_runs(tmp_path):
    p = tmp_path / "pasted.txt"
    p.write_text("\n".join([E21_OUT.read_text(), ONE_OUT.read_text()] * 2))
    with pytest.raises(fb.ImportFormatError, match="holds 4 fio runs"):
        fb.read_fio(p)


def _normal_and_json(tmp: Path, *args: str) -> tuple[Path, dict]:
    """Runs the fio installed here with normal and JSON output of the same run; returns the
    normal output (split out to its own file) and the JSON document."""
    subprocess.run(
        ["fio", *args, "--output-format=normal,json", "--output=both.txt"],
        cwd=tmp, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    text = (tmp / "both.txt").read_text()
    i = text.index('{\n  "fio version"')
    doc, end = json.JSONDecoder().raw_decode(text, i)
    p = tmp / "normal.txt"
    p.write_text(text[:i] + text[end:])
    for f in tmp.glob("*.bin"):
        f.unlink()
    return p, doc


def _same_as_json(cap, doc) -> None:
    """Totals, runtimes and latency means per group as fio's JSON of the same run gives them
    (latencies to the 4 significant digits the normal output prints them with)."""
    groups: dict[int, list] = {}
    for j in doc["jobs"]:
        groups.setdefault(j["groupid"], []).append(j)
    df = cap.intervals
    assert df.height == len(groups)
    for row, (_, jobs) in zip(df.iter_rows(named=True), sorted(groups.items()), strict=True):
        for d in ("read", "write", "trim"):
            assert row[f"{d}_ios"] == sum(j[d]["total_ios"] for j in jobs)
            assert row[f"{d}_bytes"] == sum(j[d]["io_bytes"] for j in jobs)
        rt = max(j[d]["runtime"] for j in jobs for d in ("read", "write", "trim")) / 1000
        assert row["interval_s"] == pytest.approx(rt)
        for d in ("read", "write"):
            n = sum(j[d]["total_ios"] for j in jobs)
            if not n:
                continue
            for key in ("clat", "lat"):
                want = sum(j[d][f"{key}_ns"]["mean"] * j[d]["total_ios"] for j in jobs) / n / 1000
                assert row[f"{d}_{key}_mean_us"] == pytest.approx(want, rel=1e-4)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_ten_jobs_without_group_reporting_read_like_the_json(tmp_path):
    """numjobs=10 without group_reporting: ten job reports and one group line."""
    p, doc = _normal_and_json(
        tmp_path, "--name=j", "--filename=f.bin", "--size=4m", "--bs=4k", "--ioengine=psync",
        "--rw=randrw", "--numjobs=10", "--time_based", "--runtime=200ms",
    )  # fmt: skip
    text = p.read_text()
    assert text.count("(groupid=0, jobs=1)") == 10 and text.count("Run status group") == 1
    cap = fb.read_fio(p)
    assert cap.meta["fio_format"] == "normal"
    _same_as_json(cap, doc)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_twenty_four_groups_read_like_the_json(tmp_path):
    """24 stonewalled groups (one per job), as one group per drive behind an HBA prints."""
    args = ["--bs=4k", "--ioengine=psync", "--size=1m", "--time_based", "--runtime=50ms"]
    for k in range(24):
        args += [
            f"--name=sd{k}",
            f"--filename=f{k}.bin",
            "--rw=randwrite" if k % 2 else "--rw=read",
        ]
        args += ["--stonewall"]
    p, doc = _normal_and_json(tmp_path, *args)
    assert p.read_text().count("Run status group") == 24
    cap = fb.read_fio(p)
    _same_as_json(cap, doc)
    assert cap.intervals["step"].to_list() == [f"sd{k}" for k in range(24)]
