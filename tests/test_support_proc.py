"""tests/support/proc.py, the one reader of ``/proc/PID/stat`` (conftest's ``children`` and
``running``, the benches' CPU accounting): fields split after the command name's last ``)``,
CPU ticks where the kernel's own accounting puts them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import children, running
from support import proc


def test_a_child_whose_name_holds_parentheses_is_read_right(tmp_path: Path) -> None:
    """A command name such as ``x) Z 1 (y`` splits wrongly at its first ``)``: it would read
    as a zombie whose parent is pid 1."""
    sleep = shutil.which("sleep")
    if sleep is None:
        pytest.skip("needs sleep(1)")
    name = "x) Z 1 (y"
    link = tmp_path / name
    link.symlink_to(sleep)
    p = subprocess.Popen([str(link), "30"])
    try:
        end = time.monotonic() + 10
        comm = Path(f"/proc/{p.pid}/comm")
        while comm.read_text().strip() != name and time.monotonic() < end:
            time.sleep(0.01)  # forked, not yet exec'd
        rec = proc.read(p.pid)
        # Just after exec the child may be in D (paging its binary in), as in a CI run here;
        # the wrong split reads Z with parent 1.
        assert rec is not None and rec.ppid == os.getpid() and rec.state in "RSD", rec
        assert children()[p.pid] in "RSD" and running(p.pid)
    finally:
        p.kill()
        p.wait()
    assert proc.read(p.pid) is None and not running(p.pid) and p.pid not in children()


def test_cpu_ticks_are_the_kernels_own_accounting() -> None:
    """This process's user and kernel ticks bracket what ``os.times()`` reports between two
    reads (within one tick)."""
    tick_s = 1 / os.sysconf("SC_CLK_TCK")
    before = proc.read(os.getpid())
    t = os.times()
    after = proc.read(os.getpid())
    assert before is not None and after is not None
    assert before.utime_ticks * tick_s - tick_s <= t.user <= after.utime_ticks * tick_s + tick_s
    assert before.stime_ticks * tick_s - tick_s <= t.system <= after.stime_ticks * tick_s + tick_s
    assert t.user > 0  # an interpreter that imported pytest has used some CPU
    assert os.getpid() in proc.processes()
