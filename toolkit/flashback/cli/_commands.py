"""The subcommands' table (name → module, one-line help), the top ``--help`` and the version:
what both :mod:`flashback.cli` and its parser (:mod:`flashback.cli._parser`) read, here so
that neither imports the other."""

from __future__ import annotations

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


def version() -> str:
    """The flashback version, from the native module (importlib.metadata would scan every
    installed distribution)."""
    from flashback import _native

    return _native.__version__
