"""``flashback`` command line: ``run | replay | analyze | plot | report | presets | published |
recover | purge``.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``main(args)``;
modules import the heavy libraries (polars, Altair) inside ``main``, so ``--help``,
``--version`` and ``presets`` start fast. Errors are one sentence on stderr and a non-zero
exit code; output piped into a reader that stops early (``| head``) ends quietly.
"""

from __future__ import annotations

import os
import sys

# the table lives in _commands (which the parser reads too); flashback.cli.COMMANDS and
# the others stay importable from here
from flashback.cli._commands import COMMANDS as COMMANDS
from flashback.cli._commands import DESCRIPTION as DESCRIPTION
from flashback.cli._commands import SUMMARIES as SUMMARIES
from flashback.cli._commands import top_help, version

#: Python-API advice in library messages -> the command a CLI user types instead.
CLI_WORDING = {
    "use flashback.recover() to salvage it": "salvage it with `flashback recover FILE`",
    "see flashback.recover()": "see `flashback recover --help`",
    "flashback.recover() keeps": "`flashback recover FILE` keeps",
}

#: Exit status after the reader of stdout went away (as a shell reports SIGPIPE: 128 + 13).
EXIT_BROKEN_PIPE = 141


#: Python keyword spellings in library messages -> the option a CLI user types (regex, repl);
#: a message that gives both ("destroy=\"X\" (--destroy X)") keeps the option only
CLI_OPTIONS = [
    (r'destroy="([^"]*)" \(--destroy [^)]*\)', r"--destroy \1"),
    (r'destroy="([^"]*)"', r"--destroy \1"),
    (r"overwrite=True \(--overwrite\)|--overwrite \(overwrite=True\)", "--overwrite"),
    (r"overwrite=True", "--overwrite"),
    (r"job= \(--job NAME\)", "--job NAME"),
]


def cli_message(text: str) -> str:
    """A library message reworded for the command line (commands and options, not Python
    calls), with control characters escaped (:func:`flashback._text.printable`)."""
    import re

    from flashback._text import printable

    for python_advice, command in CLI_WORDING.items():
        text = text.replace(python_advice, command)
    for pattern, option in CLI_OPTIONS:
        text = re.sub(pattern, option, text)
    return printable(text)


def _stdout_gone() -> int:
    # Point stdout at /dev/null so the interpreter's final flush does not raise again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # before argparse, any subcommand and the output filter are imported: the text is ours
    if argv == ["--version"]:
        print(f"flashback {version()}")
        return 0
    if argv in (["--help"], ["-h"]):
        print(top_help())
        return 0
    from flashback._text import PrintableStream

    stdout = sys.stdout
    sys.stdout = PrintableStream(stdout)  # type: ignore[assignment]
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: list[str]) -> int:
    from flashback.cli._parser import build_parser
    from flashback.errors import FlashbackError

    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        try:
            code = int(args.func(args) or 0)
            sys.stdout.flush()
            return code
        except FlashbackError as e:
            print(f"flashback: {cli_message(str(e))}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("flashback: interrupted", file=sys.stderr)
            return 130
    except BrokenPipeError:
        return _stdout_gone()


if __name__ == "__main__":
    sys.exit(main())
