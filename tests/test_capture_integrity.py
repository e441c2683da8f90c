"""Capture files are checked and salvageable: a byte altered after writing is reported with
the intervals it hit, a finished capture cut short recovers all but its tail, the ``written=``
budget follows one rule on files and simulated drives, and report JSON cannot close its
``<script>``."""

from __future__ import annotations

import struct
from pathlib import Path

import altair as alt
import polars as pl
import pytest

import flashback as fb

INTERVALS = 3000
# a stream's batches grow 1, 2, 4, ... 512 rows (1023 in all), then 1024 each: whole batches
# end after intervals 1023, 2047 and 3000
ENDS = (1023, 2047, INTERVALS)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, fb.Capture]:
    path = tmp_path_factory.mktemp("cap") / "long.arrow"
    w = fb.Workload(rw="randwrite", bs="4k", size="8m", time=f"{INTERVALS}ms", interval="1ms")
    cap = fb.run("sim:generic?scale=1/256", w, capture_path=path)
    assert len(cap.intervals) == INTERVALS and cap.status == "complete"
    return path, cap


def test_a_finished_capture_loads_whole(finished):
    path, cap = finished
    back = fb.load(path)
    assert back.status == "complete"
    assert back.intervals.equals(cap.intervals)
    assert "_batch_crc32" not in back.intervals.columns


def test_a_flipped_byte_is_reported_with_its_intervals(finished, tmp_path):
    path, cap = finished
    data = bytearray(path.read_bytes())
    k = 1500  # in the batch of intervals 1023-2046
    t = struct.pack("<d", cap.intervals["t_s"][k])
    at = data.find(t)
    assert at > 0 and data.count(t) == 1
    data[at + 3] ^= 0x10
    bad = tmp_path / "bad.arrow"
    bad.write_bytes(bytes(data))
    with pytest.raises(fb.CaptureFileError, match=r"intervals 1023-2046.*checksum") as e:
        fb.load(bad)
    assert "recover" in str(e.value)
    got = fb.recover(bad)
    assert len(got.intervals) == 1023 and got.status == "interrupted"
    assert "checksum" in got.meta["recovered"]["damage"]
    assert got.intervals.equals(cap.intervals.head(1023))


def test_altered_metadata_is_refused(finished, tmp_path):
    path, _ = finished
    data = bytearray(path.read_bytes())
    at = data.find(b'"status":"complete"')
    assert at > 0
    data[at + 10 : at + 18] = b"COMPLETE"
    bad = tmp_path / "meta.arrow"
    bad.write_bytes(bytes(data))
    # a streamed capture's final metadata is in its trailer, which has its own checksum
    with pytest.raises(fb.CaptureFileError, match="trailer fails its checksum"):
        fb.load(bad)


@pytest.mark.parametrize("keep", [0.4, 0.75, 0.999])
def test_a_finished_capture_cut_short_is_recovered(finished, tmp_path, keep):
    path, cap = finished
    data = path.read_bytes()
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(fb.CaptureFileError):
        fb.load(cut)
    got = fb.recover(cut)
    n = len(got.intervals)
    # whole batches before the cut survive; the torn one is dropped (a cut in the trailer
    # after the last batch keeps them all)
    assert n in ENDS
    assert got.intervals.equals(cap.intervals.head(n))
    assert got.meta["recovered"]["torn_tail"] and got.status == "interrupted"


def test_saved_frames_carry_checksums(finished, tmp_path):
    _, cap = finished
    out = cap.save(tmp_path / "copy.arrow")
    data = bytearray(out.read_bytes())
    t = struct.pack("<d", cap.intervals["t_s"][10])
    data[data.find(t) + 2] ^= 1
    out.write_bytes(bytes(data))
    with pytest.raises(fb.CaptureFileError, match="intervals 0-1023"):
        fb.load(out)


@pytest.mark.parametrize("rw", ["write", "randwrite"])
def test_written_budget_is_one_rule_on_files_and_sim(tmp_path, rw):
    # fio --rw=write --bs=4k --io_size=10240 writes 12288 bytes: the op that crosses the
    # budget is issued whole, and none after it
    w = fb.Workload(rw=rw, bs="4k", size="1m", written="10240", direct=False)
    sim = fb.run("sim:generic?scale=1/256", w)
    f = fb.run(tmp_path / "f.bin", w)
    assert sim.meta["totals"]["write_bytes"] == 12288
    assert f.meta["totals"]["write_bytes"] == 12288
    w = fb.Workload(rw="randtrim", bs="4k", size="1m", written="10240")
    assert fb.run("sim:generic?scale=1/256", w).meta["totals"]["trim_bytes"] == 12288


def test_report_json_cannot_close_its_script(tmp_path):
    from flashback.report import Section, write_report

    evil = "</script><script>document.title='pwned'</script><!--"
    df = pl.DataFrame({"step": [evil, "ok"], "x": [1.0, 2.0]})
    chart = alt.Chart(df).mark_point().encode(x="x", y="step")
    path = write_report(
        [Section(title="t", charts=[("c", chart)])],
        tmp_path,
        title="r",
        figure_formats=(),
    )
    doc = path.read_text()
    assert evil not in doc
    body = doc[doc.rindex("<nav>") :]  # after the inlined Vega bundle
    # one script element in the body, whose JSON still carries the label as data
    assert body.count("<script>") == 1 and body.count("</script>") == 1
    assert "\\u003c/script\\u003e\\u003cscript\\u003edocument.title='pwned'" in body


def test_stream_only_keeps_the_intervals_in_the_file_alone(tmp_path):
    path = tmp_path / "s.arrow"
    w = fb.Workload(rw="randwrite", bs="4k", size="8m", time="2500ms", interval="1ms")
    cap = fb.run("sim:generic?scale=1/256", w, capture_path=path, stream_only=True)
    assert cap.intervals.is_empty() and cap.status == "complete"
    back = fb.load(path)
    assert len(back.intervals) == 2500
    assert back.intervals["write_bytes"].sum() == cap.meta["totals"]["write_bytes"] > 0
    from flashback.capture import summarize_totals

    s = summarize_totals(cap.meta)
    full = back.summary()
    assert s["written_gb"][0] == pytest.approx(full["written_gb"][0])
    assert s["write_iops"][0] == pytest.approx(full["write_iops"][0], rel=1e-6)
