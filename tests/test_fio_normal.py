"""fio files classified by content, not by name, and the same JSON document kept twice read
as one (issue 27.3, 27.4), on real fio output pinned in tests/data/fio (see its SOURCES.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
    bad = tmp_path / "edited.log"
    bad.write_text(out.read_text().replace("READ: io=3777.6MB", "READ: io=3877.6MB"))
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
