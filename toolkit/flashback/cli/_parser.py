"""The command line's parser: long options only as spelled, a subcommand's own usage for
its bad arguments, and only the named subcommand's module imported (``--help`` lists the
others from :data:`flashback.cli._commands.SUMMARIES`)."""

from __future__ import annotations

import argparse
import importlib

from flashback.cli._commands import COMMANDS, DESCRIPTION, SUMMARIES, version


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


def _command_in(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (the top level has no option taking a value, so it is
    the first word not starting with ``-``), or None."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``argv``, only the subcommand it names is built in
    full (its module imported); the others are listed with their one-line help, which is
    all ``flashback --help`` shows. Without, every subcommand is built."""
    selected = None if argv is None else _command_in(argv)
    p = Parser(
        prog="flashback",
        description=DESCRIPTION,
    )
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, module in COMMANDS.items():
        if argv is None or name == selected:
            importlib.import_module(f"flashback.cli.{module}").add_parser(sub)
        else:
            sub.add_parser(name, help=SUMMARIES[name])
    return p
