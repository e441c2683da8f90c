"""A panic in the native core reaches Python as flashback's InternalError, not as pyo3's
PanicException (a BaseException that ``except Exception`` would let through)."""

from __future__ import annotations

import pytest

import flashback as fb
from flashback import _native


def test_a_core_panic_is_an_internal_error_with_its_message():
    with pytest.raises(fb.InternalError, match="deliberate panic from _panic_for_tests") as e:
        _native._panic_for_tests()
    assert isinstance(e.value, fb.FlashbackError)
    assert isinstance(e.value, RuntimeError)
    assert "bug in flashback" in str(e.value)


def test_the_interpreter_keeps_working_after_a_core_panic(tmp_path):
    with pytest.raises(fb.InternalError):
        _native._panic_for_tests()
    cap = fb.run("sim:generic?scale=1/256", fb.Workload(rw="write", bs="128k", written="8m"))
    assert cap.meta["status"] == "complete"
    assert cap.intervals["write_bytes"].sum() == 8 << 20
