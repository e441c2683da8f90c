"""``flashback`` command line: ``run | replay | analyze | report | presets | published | recover``.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``main(args)``.
Errors are one sentence on stderr and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from flashback.errors import FlashbackError

# subcommand name -> module in this package
COMMANDS = {
    "run": "run",
    "presets": "presets",
    "recover": "recover",
    "replay": "replay",
    "published": "published",
    "analyze": "analyze",
    "report": "report",
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="flashback",
        description="Capture, replay and analyse how SSD performance changes as a drive is written.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        importlib.import_module(f"flashback.cli.{module}").add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FlashbackError as e:
        print(f"flashback: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flashback: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
