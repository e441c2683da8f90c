"""``flashback published``: the reviews' published numbers, filtered."""

from __future__ import annotations

import argparse
import sys

from flashback.cli._output import frame_rows, print_json, text_table

#: Columns of the terminal table (--csv and --json give every column).
TABLE_COLS = ("drive", "test", "condition", "metric", "value", "unit")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("published", help="print the numbers the five reviews published")
    p.add_argument("--drive", help="case-insensitive substring of the drive name")
    p.add_argument("--source", help="seed file name/prefix or publication substring")
    p.add_argument("--test", help="exact test name, e.g. cdm_seq_write")
    p.add_argument("--metric", help="exact metric name, e.g. max_mbps")
    p.add_argument("--condition", help="exact condition, e.g. fresh, used, after_trim")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="write CSV to stdout instead of a table")
    out.add_argument("--json", action="store_true", help="write JSON (a list of rows)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from flashback.published import published

    df = published(
        drive=args.drive,
        source=args.source,
        test=args.test,
        metric=args.metric,
        condition=args.condition,
    )
    if args.csv:
        sys.stdout.write(df.write_csv())
        return 0
    if args.json:
        print_json(df)
        return 0
    print(text_table(frame_rows(df.select(TABLE_COLS))))
    print(f"{len(df)} rows (--csv or --json for every column: publication, x, note...)")
    return 0
