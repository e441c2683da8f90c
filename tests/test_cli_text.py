"""What the CLI prints, as a terminal shows it: tables that use the terminal's width and
never cut an identifier, control characters escaped in every message and table, errors
spelled as options, and a subcommand's own usage for its bad arguments."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import need_root_and

from flashback._text import printable
from flashback.cli._output import text_table

STEPS = [
    {"step": f"cdm_loop_{i:04d}/seq_read_q32t1_{kind}", "mbps": 500.0 + i, "n": i}
    for i in range(3)
    for kind in ("first_pass", "second_pass")
]


def cli(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "flashback", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_wide_terminal_shows_whole_names():
    # an 80-column cut made every step "cdm_loop_0000/seq_re…"
    text = text_table(STEPS, width=200)
    for r in STEPS:
        assert r["step"] in text
    assert "…" not in text


def test_narrow_terminal_wraps_names_without_losing_a_character():
    text = text_table(STEPS, width=40)
    assert all(len(line) <= 40 for line in text.splitlines())
    assert "…" not in text
    # every name is all there, read down its column
    flat = "".join(line[:30].strip() for line in text.splitlines()[2:])
    for r in STEPS:
        assert r["step"] in flat
    turned = text_table(STEPS, width=20)  # too narrow for columns: a block per row
    assert "…" not in turned and all(len(line) <= 20 for line in turned.splitlines())


def test_piped_table_is_not_cut_and_columns_set_the_width(monkeypatch):
    from flashback.cli import _output

    monkeypatch.delenv("COLUMNS", raising=False)
    assert _output.table_width() is None  # pytest captures stdout: not a terminal
    monkeypatch.setenv("COLUMNS", "132")
    assert _output.table_width() == 132


def test_control_characters_are_escaped_in_tables_and_text():
    evil = "step\x1b[2J\x07\r\u202ename"
    text = text_table([{"step": evil, "mbps": 1.0}], width=200)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\\x1b[2J\\x07\\r\\u202ename" in text
    assert printable("café 中文 ok") == "café 中文 ok"


def test_a_file_name_with_escape_reaches_the_terminal_escaped(tmp_path):
    bad = tmp_path / "cap\x1b[2Jx.arrow"
    proc = cli("analyze", str(bad))
    assert proc.returncode != 0
    assert "\x1b" not in proc.stderr and "\\x1b[2J" in proc.stderr, proc.stderr
    out = tmp_path / "c\x1b]0;title\x07.parquet"
    proc = cli("run", "sim:generic?scale=1/256", "--written", "8m", "--no-progress", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b]0;title\\x07" in proc.stdout
    assert out.exists()  # the file itself has the name asked for


def test_a_bad_argument_gets_the_subcommands_usage():
    proc = cli("run", "sim:generic", "--rw-mix", "30")
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: flashback run ")
    assert "unrecognized arguments: --rw-mix 30" in proc.stderr


def test_cli_errors_name_options_not_python_keywords(tmp_path, loopdev):
    need_root_and("losetup")
    dev = loopdev(16 << 20)
    proc = cli("run", dev, "--written", "1m", "--no-progress")
    assert proc.returncode == 2
    assert f"--destroy {dev}" in proc.stderr and "destroy=" not in proc.stderr, proc.stderr
    theirs = tmp_path / "theirs.bin"
    theirs.write_bytes(b"x" * 8192)
    proc = cli("run", str(theirs), "--size", "4k", "--no-progress")
    assert "--overwrite" in proc.stderr and "overwrite=True" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "message, cli_text",
    [
        ('pass destroy="/dev/loop2" (nothing was written)', "pass --destroy /dev/loop2 (nothing"),
        ('again with destroy="/dev/x" (--destroy /dev/x)', "again with --destroy /dev/x"),
        ("pick one with job= (--job NAME)", "pick one with --job NAME"),
    ],
)
def test_cli_message_rewording(message, cli_text):
    from flashback.cli import cli_message

    assert cli_text in cli_message(message)
