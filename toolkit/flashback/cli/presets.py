"""``flashback presets``: the simulated drives and their key parameters."""

from __future__ import annotations

import argparse

from flashback.cli._output import print_json, text_table


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("presets", help="list the simulated-drive presets")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from flashback import _native

    presets = _native.sim_presets()
    if args.json:
        print_json(presets)
        return 0
    if not presets:
        print("no presets")
        return 0
    rows = [
        {
            "name": p.get("name"),
            "capacity_gb": p.get("capacity_gb"),
            "op": p.get("op"),
            "controller": p.get("controller"),
        }
        for p in presets
    ]
    print(text_table(rows))
    print("\n(flashback presets --json gives every parameter and its source)")
    return 0
