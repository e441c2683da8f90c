"""The command line as scripts and terminals use it: --version, --json, tables within 80 columns,
progress lines without a terminal, a closed pipe, `plot`, and messages worded for the CLI.

Everything runs the real `flashback` entry point in a subprocess on simulated drives.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import flashback as fb

SIM = "sim:generic?scale=1/256"


def cli(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


#: a terminal 80 columns wide, as tables see it through ``COLUMNS`` when stdout is a pipe
COLS80 = {"COLUMNS": "80"}


def wide_lines(text: str, width: int = 80) -> list[str]:
    return [line for line in text.splitlines() if len(line) > width]


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> Path:
    """A real 64 MiB random-write capture on a small simulated drive, streamed to .arrow."""
    path = tmp_path_factory.mktemp("cap") / "cap.arrow"
    cli("run", SIM, "--rw", "randwrite", "--bs", "4k", "--written", "64m", "--interval", "0.05s",
        "--no-progress", "-o", str(path))  # fmt: skip
    return path


def test_version():
    proc = cli("--version")
    assert proc.stdout.strip() == f"flashback {version('flashback')}"


def test_run_summary_fits_80_columns_and_json_has_the_numbers(tmp_path):
    text = cli("run", SIM, "--rw", "randwrite", "--written", "64m", "--no-progress",
               env=COLS80).stdout  # fmt: skip
    assert "written_gb" in text and wide_lines(text) == []
    proc = cli("run", SIM, "--rw", "randwrite", "--written", "64m", "--no-progress", "--json")
    doc = json.loads(proc.stdout)
    assert doc["status"] == "complete"
    # written=64m is 64 MiB: 0.0671 decimal GB
    assert doc["summary"][0]["written_gb"] == pytest.approx(64 * 2**20 / 1e9, rel=1e-6)
    assert doc["meta"]["workload"]["rw"] == "randwrite"


def test_presets_table_fits_and_json_lists_every_preset():
    text = cli("presets", env=COLS80).stdout
    assert wide_lines(text) == []
    names = [p["name"] for p in json.loads(cli("presets", "--json").stdout)]
    assert "generic" in names and "intel-520-120g" in names
    for name in names:
        assert re.search(rf"^{re.escape(name)}\s", text, re.M), name


def test_published_json_is_the_data_set():
    rows = json.loads(cli("published", "--test", "as_ssd_seq_write", "--json").stdout)
    expected = fb.published(test="as_ssd_seq_write")
    assert len(rows) == expected.height > 0
    assert {r["value"] for r in rows} == set(expected["value"].to_list())
    assert wide_lines(cli("published", env=COLS80).stdout) == []


def test_a_closed_pipe_ends_quietly():
    """A reader that stops early (`| head`): no BrokenPipeError traceback, the shell's 141."""
    with subprocess.Popen(
        [sys.executable, "-m", "flashback", "published", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as p:
        p.stdout.close()  # the reader is gone before the first write
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 141
    assert err == ""


def test_progress_without_a_terminal_is_lines_on_stderr():
    proc = cli(
        "run", SIM, "--rw", "randwrite", "--written", "32m", "--interval", "0.05s",
        env={"FLASHBACK_PROGRESS_EVERY_S": "0"},
    )  # fmt: skip
    lines = proc.stderr.splitlines()
    assert len(lines) > 5, proc.stderr
    pat = re.compile(
        r"^flashback: randwrite  [\d.]+ of [\d.]+ GB written \(\d+%\)  [\d.]+ MB/s  [\d,]+ IOPS"
    )
    assert all(pat.match(line) for line in lines), lines[:3]
    assert "(100%)" in lines[-1] and lines[-1].endswith("finished")
    assert "\r" not in proc.stderr and "\x1b[" not in proc.stderr  # no terminal codes
    # the default pace (every 10 s) on a sub-second run: the final line only
    quiet = cli("run", SIM, "--rw", "randwrite", "--written", "32m").stderr.splitlines()
    assert len(quiet) == 1 and "(100%)" in quiet[0]


def test_progress_lines_pace_on_their_clock():
    from flashback.progress import Lines

    now = [0.0]
    out = io.StringIO()
    lines = Lines(2.0, "GB written", "w", every_s=10, stream=out, clock=lambda: now[0])
    row = dict(interval_s=1.0, write_bytes=10**8, read_bytes=0, trim_bytes=0, write_ios=100,
               read_ios=0)  # fmt: skip
    for _ in range(6):
        now[0] += 4.0
        lines(row)
    assert lines.lines == 2  # at 12 s and 24 s
    lines.close()
    text = out.getvalue().splitlines()
    assert len(text) == 3 and text[-1].startswith("flashback: w  0.60 of 2.00 GB written (30%)")
    for _ in range(20):  # 2.60 GB of an estimated 2.00: no "100%" while it runs on
        lines(row)
    lines.close()
    assert (
        out.getvalue()
        .splitlines()[-1]
        .startswith("flashback: w  2.60 GB written (past the 2.00 estimated)")
    )


def test_bar_is_open_ended_once_its_estimate_is_passed():
    """A replay writing more than estimated must not show a full bar at ETA 0 while it runs."""
    from flashback.progress import Bar

    bar = Bar(1.0, "GB written", "replay")
    try:
        row = dict(interval_s=1.0, write_bytes=4 * 10**8, read_bytes=0, trim_bytes=0,
                   write_ios=1, read_ios=0)  # fmt: skip
        bar(row)
        bar(row)
        assert bar._rich.tasks[0].total == 1.0
        bar(row)  # 1.2 GB of an estimated 1.0
        assert bar._rich.tasks[0].total is None  # no ETA
    finally:
        bar.close()
    assert bar._rich.tasks[0].completed == pytest.approx(1.2)
    assert bar._rich.tasks[0].total == pytest.approx(1.2)


def test_plot_writes_png_svg_and_offline_html(capture, tmp_path):
    for suffix in ("png", "svg", "html"):
        out = tmp_path / f"fig.{suffix}"
        proc = cli("plot", str(capture), "-o", str(out))
        assert f"figure written to {out}" in proc.stdout
        body = out.read_bytes()
        if suffix == "png":
            assert body[:8] == b"\x89PNG\r\n\x1a\n"
        elif suffix == "svg":
            text = body.decode()
            assert text.lstrip().startswith("<svg")
            assert "Write (MB/s)" in text and "Write latency (µs)" in text
            assert "Host data written (GB)" in text
        else:
            text = body.decode()
            assert "vegaEmbed" in text and "<script src=" not in text  # Vega inlined
    bad = cli("plot", str(capture), "-o", str(tmp_path / "fig.jpg"), check=False)
    assert (
        bad.returncode == 2 and bad.stderr.count("\n") == 1 and ".png, .svg or .html" in bad.stderr
    )
    assert not (tmp_path / "fig.jpg").exists()


def test_cli_messages_name_commands_not_python_calls(capture, tmp_path):
    torn = tmp_path / "torn.arrow"
    body = capture.read_bytes()
    torn.write_bytes(body[: len(body) - 300])
    proc = cli("analyze", str(torn), check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "flashback recover" in proc.stderr and "flashback.recover()" not in proc.stderr
    # and the advice is a command that runs
    out = cli("recover", str(torn), "-o", str(tmp_path / "ok.arrow")).stdout
    assert out.startswith("salvaged") and (tmp_path / "ok.arrow").exists()


def test_start_imports_nothing_heavy():
    """`flashback --version`, `presets` and `import flashback` load neither polars nor Altair
    (they took 1.3 s of every start); the speed itself is measured outside the tests."""
    for args in (["-m", "flashback", "presets"], ["-m", "flashback", "--version"]):
        proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-500:]
        loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
        assert not {"polars", "altair", "numpy", "scipy"} & loaded, args


def test_lazy_names_stay_functions_after_their_modules_load():
    """`fb.replay` and `fb.published` are functions even once the submodules of the same
    name are imported (a lazy package would otherwise hand back the module)."""
    code = (
        "import flashback as fb, flashback.replay.base, flashback.published; "
        "print(callable(fb.replay), callable(fb.published), fb.replay.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True", "flashback.replay.api"], out.stderr[-500:]
