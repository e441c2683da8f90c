"""Ctrl-C in ``fb.replay`` and ``flashback replay``: the replay stops, keeps the steps done so
far, and the interrupt reaches the caller (a loop of replays, or a notebook run top to
bottom, stops) — it used to be swallowed, the call returning a partial replay as if nothing
had happened."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import flashback as fb

#: a replay long enough to interrupt: anandtech-consistency on its simulated drive at full
#: scale takes ~9 s here
PROTOCOL, SCALE = "anandtech-consistency", "1"

LOOP_CHILD = f"""
import pytest

import flashback as fb
started = []
def tick(row):
    if not started:
        started.append(1)
        print("started", flush=True)
try:
    for i in range(3):
        started.clear()
        fb.replay({PROTOCOL!r}, scale={SCALE!r}, progress=tick)
        print("the loop carried on", flush=True)
except KeyboardInterrupt as e:
    r = e.replay
    print("raised", type(e).__name__, r.status, len(r.steps), r.intervals.height, flush=True)
    raise
"""

CLI_CHILD = f"""
import importlib, sys
from flashback.cli import main
runner = importlib.import_module("flashback.replay.runner")  # fb.replay is the function
run = runner.Runner.run
def announced(self, *a, **k):
    print("started", flush=True)
    runner.Runner.run = run
    return run(self, *a, **k)
runner.Runner.run = announced
sys.exit(main(["replay", {PROTOCOL!r}, "--scale", {SCALE!r}, "--no-progress",
               "-o", sys.argv[1]]))
"""


def _interrupt(code: str, *args: str) -> tuple[int, str, str]:
    """Runs ``code`` in a child, sends SIGINT half a second after it prints ``started``."""
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = p.stdout.readline()
        assert line.strip() == "started", (line, p.stderr.read())
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, line + out, err


def test_ctrl_c_in_fb_replay_raises_with_the_steps_done():
    code, out, err = _interrupt(LOOP_CHILD)
    assert "the loop carried on" not in out, out
    words = out.split()
    assert words[words.index("raised") + 1 :][:2] == ["ReplayInterrupted", "interrupted"], out
    assert int(words[-1]) > 0  # the intervals run before Ctrl-C are kept
    assert "flashback.errors.ReplayInterrupted" in err  # uncaught, as Ctrl-C should be
    assert code != 0
    assert issubclass(fb.errors.ReplayInterrupted, KeyboardInterrupt)


def test_ctrl_c_in_flashback_replay_saves_the_partial_replay_and_exits_130(tmp_path: Path):
    out_path = tmp_path / "rep.arrow"
    code, out, err = _interrupt(CLI_CHILD, str(out_path))
    assert code == 130, (out, err)
    assert "replay interrupted" in err
    rep = fb.Replay.load(out_path)
    assert rep.status == "interrupted"
    assert rep.intervals.height > 0


def test_fb_load_on_a_saved_replay_names_replay_load(tmp_path: Path):
    rep = fb.replay("anand2009-new-vs-used", scale="1/64")
    rep.save(tmp_path / "rep")

    with pytest.raises(fb.CaptureFileError, match=r"saved replay .*fb\.Replay\.load"):
        fb.load(tmp_path / "rep")
    with pytest.raises(fb.CaptureFileError, match="is a directory"):
        fb.load(tmp_path)
    assert fb.Replay.load(tmp_path / "rep").status == "complete"
