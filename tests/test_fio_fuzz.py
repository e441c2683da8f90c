"""fio import fed crafted input beyond tests/test_fuzz.py's: JSON nested 200,000 deep,
job-less and garbage JSON fields read beside real logs (where the JSON only checks them),
garbled normal output and runs summed with ``combine="sum"``. Only a ``FlashbackError`` (one
sentence) may come out; never RecursionError, AttributeError, ValueError (issue 23.15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fuzz import allowed, json_value

import flashback as fb

DATA = Path(__file__).resolve().parent / "data" / "fio"
LOGS = sorted(DATA.glob("louwrentius__fio-plot__test-data01_randread-4k-01-01_*.1.log"))
NORMAL = DATA / "chris-sanders__ceph-fio-results__bluestore_onejob_randread-4k.out"
FAST = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


DEEP = 200_000
DEEP_DOCS = {
    "jobs array": '{"fio version": "fio-3.33", "jobs": ' + "[" * DEEP + "]" * DEEP + "}",
    "object": '{"fio version": "fio-3.33", "x": ' + '{"a":' * DEEP + "1" + "}" * DEEP + "}",
    "job options": '{"fio version": "fio-3.33", "jobs": [{"job options": '
    + "[" * DEEP
    + "]" * DEEP
    + "}]}",
}


@pytest.mark.parametrize("name", sorted(DEEP_DOCS))
@pytest.mark.parametrize("with_logs", [False, True])
def test_json_nested_200000_deep_is_an_import_error(tmp_path, name, with_logs):
    """Python's JSON parser raised RecursionError, which came out of read_fio."""
    p = tmp_path / "out.json"
    p.write_text(DEEP_DOCS[name])
    with pytest.raises(fb.ImportFormatError, match="nested deeper"):
        fb.read_fio(LOGS + [p] if with_logs else p)


GARBAGE = {
    "jobs not a list": {"fio version": "fio-3.1", "jobs": 5},
    "jobs of lists": {"fio version": "fio-3.1", "jobs": [[1], [2]]},
    "direction a string": {"fio version": "fio-3.1", "jobs": [{"read": "x"}]},
    "count a word": {"fio version": "fio-3.1", "jobs": [{"read": {"total_ios": "abc"}}]},
    "runtime a word": {"fio version": "fio-3.1", "jobs": [{"read": {"total_ios": 1, "runtime": "x"}}]},
    "options a list": {"fio version": "fio-3.1", "jobs": [{"read": {"total_ios": 1}, "job options": [1]}]},
    "count infinite": {"fio version": "fio-3.1", "jobs": [{"read": {"total_ios": 1e400, "runtime": 9}}]},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_json_fields_beside_logs_are_import_errors(tmp_path, name):
    """Beside the logs the JSON only checks them; its fields came out as AttributeError,
    TypeError, ValueError or OverflowError there."""
    p = tmp_path / "out.json"
    p.write_text(json.dumps(GARBAGE[name]).replace("Infinity", "1e400"))
    with pytest.raises(fb.ImportFormatError, match=str(p)):
        fb.read_fio(LOGS + [p])


fio_dir = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {}, optional={k: json_value for k in ("io_bytes", "bw", "runtime", "total_ios", "lat_ns",
                                              "clat_ns", "io_kbytes")}
    ),
)  # fmt: skip
fio_job = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {}, optional={"jobname": json_value, "groupid": json_value, "read": fio_dir,
                      "write": fio_dir, "trim": fio_dir, "job options": json_value,
                      "error": json_value}
    ),
)  # fmt: skip
fio_doc = st.fixed_dictionaries(
    {"jobs": st.one_of(json_value, st.lists(fio_job, max_size=3))},
    optional={"fio version": st.one_of(json_value, st.sampled_from(["fio-2.18", "fio-3.33"])),
              "global options": json_value, "timestamp_ms": json_value},
)  # fmt: skip


@FAST
@given(fio_doc)
def test_crafted_json_beside_real_logs(tmp_path_factory, doc):
    p = tmp_path_factory.mktemp("j") / "out.json"
    p.write_text(json.dumps(doc))
    allowed(fb.read_fio, LOGS + [p])


@FAST
@given(fio_doc, fio_doc)
def test_crafted_json_summed(tmp_path_factory, a, b):
    d = tmp_path_factory.mktemp("s")
    (d / "a.json").write_text(json.dumps(a))
    (d / "b.json").write_text(json.dumps(b))
    allowed(fb.read_fio, [d / "a.json", d / "b.json"], combine="sum")


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@FAST
@given(st.lists(st.tuples(st.integers(0, 400), st.sampled_from(
    ["", "1.2.3", "-1", "99999999999999999999999", "1e400", "x", "K", "0", ".", "nan"])),
    max_size=8), st.integers(0, 40))  # fmt: skip
def test_garbled_normal_output(tmp_path_factory, edits, cut_lines):
    """The real fio-2.16 six-group normal output with numbers replaced and lines cut."""
    text = NORMAL.read_text()
    spans = [m.span() for m in _NUMBER.finditer(text)]
    for k, new in sorted(edits, reverse=True):
        a, b = spans[k % len(spans)]
        text = text[:a] + new + text[b:]
    lines = text.splitlines()
    if cut_lines:
        del lines[cut_lines * 3 % len(lines)]
    p = tmp_path_factory.mktemp("n") / "out.txt"
    p.write_text("\n".join(lines))
    allowed(fb.read_fio, p)
