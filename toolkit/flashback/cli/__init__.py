"""``flashback`` command line: ``run | replay | analyze | plot | report | presets | published |
recover``.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``main(args)``;
modules import the heavy libraries (polars, Altair) inside ``main``, so ``--help``,
``--version`` and ``presets`` start fast. Errors are one sentence on stderr and a non-zero
exit code; output piped into a reader that stops early (``| head``) ends quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# subcommand name -> module in this package
COMMANDS = {
    "run": "run",
    "presets": "presets",
    "recover": "recover",
    "replay": "replay",
    "published": "published",
    "analyze": "analyze",
    "plot": "plot",
    "report": "report",
}

#: Python-API advice in library messages -> the command a CLI user types instead.
CLI_WORDING = {
    "use flashback.recover() to salvage it": "salvage it with `flashback recover FILE`",
    "see flashback.recover()": "see `flashback recover --help`",
    "flashback.recover() keeps": "`flashback recover FILE` keeps",
}

#: Exit status after the reader of stdout went away (as a shell reports SIGPIPE: 128 + 13).
EXIT_BROKEN_PIPE = 141


def version() -> str:
    """The flashback version, from the native module (importlib.metadata scans every
    installed distribution: ten times slower)."""
    from flashback import _native

    return _native.__version__


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"flashback {version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """Long options only as spelled (no prefix matching: ``--job`` is never ``--jobs``); a
    subcommand's unknown argument is reported with that subcommand's usage."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message):
        from flashback._text import printable

        super().error(printable(message))

    def parse_known_args(self, args=None, namespace=None):
        ns, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:  # a subcommand's parser: its own usage
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns, extras


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="flashback",
        description="Capture, replay and analyse how SSD performance changes as a drive is written.",
    )
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, module in COMMANDS.items():
        importlib.import_module(f"flashback.cli.{module}").add_parser(sub)
    return p


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
    from flashback._text import PrintableStream

    stdout = sys.stdout
    sys.stdout = PrintableStream(stdout)  # type: ignore[assignment]
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: list[str] | None) -> int:
    from flashback.errors import FlashbackError

    try:
        parser = build_parser()
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
