"""``flashback --version`` and ``--help`` start without importing every subcommand (they
used to build all eight parsers first: 2.1× ``fio --version``). The time itself is measured
in ``make bench`` (tests/bench/startup.py), not here."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from flashback.cli import COMMANDS, SUMMARIES

PROBE = """
import sys
from flashback.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.startswith("flashback.cli.") or m == "argparse")
print("LOADED", ",".join(loaded))
"""


TABLE = "flashback.cli._commands"


def _loaded(argv: list[str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, timeout=120
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("LOADED"))
    # flashback.cli._commands is the subcommands' table flashback.cli itself is made of
    return [m for m in line.removeprefix("LOADED ").split(",") if m and m != TABLE]


#: What ``--version`` and ``--help`` may import besides flashback's own modules: small modules
#: Python itself leans on (``importlib`` to load the native module, ``from __future__``).
#: ``typing`` (7 ms of a 12 ms interpreter start here), ``re``, ``collections`` or
#: ``unicodedata`` (the output filter's) would put ``flashback --version`` above 1.3× ``fio
#: --version`` (issue 29; ``make bench`` measures it).
LIGHT = {"__future__", "importlib", "importlib._bootstrap", "importlib._bootstrap_external",
         "types", "warnings"}  # fmt: skip

NEW_MODULES = """
import sys
before = set(sys.modules)
from flashback.cli import main
main({argv!r})
print("NEW", ",".join(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_import_nothing_heavy(argv):
    out = subprocess.run(
        [sys.executable, "-c", NEW_MODULES.format(argv=argv)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    new = next(x for x in out.splitlines() if x.startswith("NEW ")).removeprefix("NEW ").split(",")
    assert "flashback.cli" in new  # the probe saw the import
    assert {m for m in new if m.split(".")[0] != "flashback"} <= LIGHT, new


def test_version_imports_no_parser_at_all():
    assert _loaded(["--version"]) == []


def test_help_imports_no_subcommand_module():
    assert _loaded(["--help"]) == []
    text = subprocess.run(
        [sys.executable, "-m", "flashback", "--help"], capture_output=True, text=True
    ).stdout
    for name, summary in SUMMARIES.items():
        assert f"  {name}" in text and summary in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_subcommand_imports_only_its_own_module(name):
    mods = [m for m in _loaded([name, "--help"]) if m.startswith("flashback.cli.")]
    assert f"flashback.cli.{COMMANDS[name]}" in mods
    subcommands = {f"flashback.cli.{m}" for m in COMMANDS.values()}
    # only its own (and what it imports itself, as plot imports analyze's loader lazily)
    assert len(subcommands.intersection(mods)) == 1, mods


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_summaries_say_what_each_subcommand_says(name):
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"flashback.cli.{COMMANDS[name]}").add_parser(sub)
    assert sub._choices_actions[0].help == SUMMARIES[name]
