"""Progress that tells the truth: a bar's total is the quantity it counts (bytes written, or
read, trimmed, moved — said which), a run ends finished, interrupted or failed (never a full
bar for an interrupted run, never ``4.0/?``), a refused run draws nothing, and Ctrl-C that
lands in a progress callback stops the run."""

from __future__ import annotations

import io
import os
import pty
import select
import signal
import sys
import time

import pytest
from support.interrupt import ctrl_c_on_call

import flashback as fb
from flashback.progress import Bar, Lines, _total

SIM = "sim:generic?scale=1/256"


def _row(*, w=0, r=0):
    return dict(interval_s=1.0, write_bytes=w, read_bytes=r, trim_bytes=0, write_ios=1,
                read_ios=1)  # fmt: skip


def test_a_written_bar_is_not_moved_by_reads():
    # Puget's CDM loop: "439.73 GB (past the 150.00 estimated)" for 150 GB written, as reads
    # counted too
    out = io.StringIO()
    lines = Lines(1.0, "GB written", "cdm", every_s=1e9, stream=out)
    for _ in range(5):
        lines(_row(w=10**8))
        lines(_row(r=3 * 10**8))
    lines.close("complete")
    assert out.getvalue().startswith("flashback: cdm  0.50 of 1.00 GB written (50%)")


@pytest.mark.parametrize(
    "fields, unit",
    [
        (dict(rw="randwrite", size="1g"), "GB written"),
        (dict(rw="randread", size="1g"), "GB read"),
        (dict(rw="randrw", size="1g"), "GB moved"),
        (dict(rw="trim", size="1g"), "GB trimmed"),
        (dict(rw="randrw", written="1g"), "GB written"),
        (dict(rw="randwrite", time="5s"), "s"),
    ],
)
def test_the_unit_says_what_is_counted(fields, unit):
    assert _total(fb.Workload(**fields), 4 << 30)[1] == unit


def test_lines_end_in_a_state_and_a_refused_run_prints_nothing():
    out = io.StringIO()
    Lines(1.0, "GB written", "w", every_s=1e9, stream=out).close("failed: refused")
    assert out.getvalue() == ""
    lines = Lines(1.0, "GB written", "w", every_s=1e9, stream=out)
    lines(_row(w=3 * 10**8))
    lines.close("interrupted")
    last = out.getvalue().splitlines()[-1]
    assert "0.30 of 1.00 GB written (30%)" in last and last.endswith("interrupted")


def test_tqdm_bar_ends_full_when_finished_and_where_it_stopped_when_interrupted(monkeypatch):
    import flashback.progress as progress

    monkeypatch.setattr(progress, "_in_notebook", lambda: True)
    done = Bar(None, "GB written", "w")  # open-ended: tqdm used to end as "4.0/?"
    for _ in range(4):
        done(_row(w=10**9))
    done.close("complete")
    assert done._tqdm.total == done._tqdm.n == pytest.approx(4.0)
    assert done._tqdm.desc.rstrip(": ").endswith("finished")
    cut = Bar(10.0, "GB written", "w")
    cut(_row(w=10**9))
    cut.close("interrupted")
    assert cut._tqdm.n == pytest.approx(1.0) and cut._tqdm.total == 10.0
    assert cut._tqdm.desc.rstrip(": ").endswith("interrupted")
    never = Bar(10.0, "GB written", "w")
    never.close("failed: refused")
    assert never._tqdm is None and never._rich is None


def test_rich_bar_is_not_full_when_interrupted():
    bar = Bar(10.0, "GB written", "w")
    bar(_row(w=2 * 10**9))
    bar.close("interrupted")
    task = bar._rich.tasks[0]
    assert task.completed == pytest.approx(2.0) and task.total > task.completed
    assert task.description.endswith("interrupted")


def test_ctrl_c_in_the_callback_of_a_simulated_run_is_not_lost():
    # a simulated run hands its rows over at the end, after its last poll for Ctrl-C: a
    # KeyboardInterrupt raised by the callback then was dropped and the run came back complete
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, written="300m", interval="0.1s")
    cb, calls = ctrl_c_on_call(1)
    with pytest.raises(fb.errors.RunInterrupted) as e:
        fb.run(SIM, w, progress=cb)
    assert e.value.capture.status == "interrupted" and len(calls) == 1


def test_ctrl_c_in_the_callback_stops_a_replay():
    cb, _ = ctrl_c_on_call(3)
    with pytest.raises(fb.errors.ReplayInterrupted) as e:
        fb.replay("puget-cdm-loop", target="sim:intel-520-120g?scale=1/256", progress=cb)
    rep = e.value.replay
    assert rep.meta["status"] == "interrupted"
    assert len(rep.steps) < 10


def _in_a_terminal(args, *, cwd, interrupt_on=None, timeout_s=120):
    """Runs the CLI on a pseudo-terminal (stdout and stderr); returns (exit code, output).

    ``interrupt_on`` (bytes): Ctrl-C is sent once the output holds it. A fixed delay was
    used before, and a cold fresh clone spent it all importing (CI, stop 37: nothing saved).
    """
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal 120 columns wide
        os.chdir(cwd)
        os.environ["COLUMNS"] = "120"
        os.execv(sys.executable, [sys.executable, "-m", "flashback", *args])
    out = b""
    t0 = time.monotonic()
    sent = False
    while True:
        if interrupt_on is not None and not sent and interrupt_on in out:
            os.kill(pid, signal.SIGINT)
            sent = True
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if time.monotonic() - t0 > timeout_s:
            os.kill(pid, signal.SIGKILL)
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_terminal_bar_finishes_and_a_refused_run_draws_nothing(tmp_path):
    code, out = _in_a_terminal(
        ["run", SIM, "--rw", "randwrite", "--written", "64m", "--interval", "0.05s"], cwd=tmp_path
    )
    assert code == 0, out
    assert "finished" in out and "GB written" in out
    theirs = tmp_path / "theirs.bin"
    theirs.write_bytes(b"x" * 4096)  # a file flashback did not create: refused
    code, out = _in_a_terminal(["run", str(theirs), "--size", "4k"], cwd=tmp_path)
    assert code != 0 and "flashback:" in out
    assert "%" not in out and "━" not in out, out  # no bar, no 0 % line


def test_terminal_replay_interrupted_exits_130_and_saves(tmp_path):
    code, out = _in_a_terminal(
        ["replay", "puget-cdm-loop", "--target", "sim:intel-520-120g?scale=1/16", "-o", "rep"],
        cwd=tmp_path,
        interrupt_on=b"cdm_loop_0003",  # steps 0-2 are done: there is something to save
    )
    assert code == 130, out
    assert "interrupted" in out
    assert any((tmp_path / "rep").iterdir())
