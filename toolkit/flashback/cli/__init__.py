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
    "purge": "purge",
}

#: subcommand name -> its one-line help, for ``flashback --help`` without importing every
#: subcommand's module (each module's ``add_parser`` says the same; a test holds them equal)
SUMMARIES = {
    "run": "run one workload on a file, block device or sim: drive",
    "presets": "list the simulated-drive presets",
    "recover": "salvage a capture whose tail was torn by a crash",
    "replay": "replay a review's test procedure on a target",
    "published": "print the numbers the five reviews published",
    "analyze": "change points and steady state of a capture, replay or fio output",
    "plot": "draw a capture's throughput and latency to a .png, .svg or .html file",
    "report": "replay every review on simulated drives and write out/report.html",
    "purge": "purge a drive (sanitize / format / secure erase), or --plan it",
}

#: what ``flashback`` does, first line of ``--help``
DESCRIPTION = "Capture, replay and analyse how SSD performance changes as a drive is written."


def top_help() -> str:
    """``flashback --help``: usage, :data:`DESCRIPTION` and one line per subcommand
    (:data:`SUMMARIES`), without argparse (start-up: see ``make bench``)."""
    w = max(len(n) for n in SUMMARIES)
    lines = [f"  {n.ljust(w)}  {h}" for n, h in SUMMARIES.items()]
    return "\n".join(
        [
            "usage: flashback [-h] [--version] COMMAND ...",
            "",
            DESCRIPTION,
            "",
            "commands:",
            *lines,
            "",
            "options:",
            "  -h, --help  show this help message and exit",
            "  --version   print the version and exit",
            "",
            "flashback COMMAND --help describes a command's options.",
        ]
    )


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
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # before argparse and any subcommand are imported
        print(f"flashback {version()}")
        return 0
    if argv in (["--help"], ["-h"]):
        print(top_help())
        return 0
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
