"""``flashback analyze CAPTURE``: segments and the steady-state verdict of a capture, or of
each test of a saved replay (``flashback replay -o DIR``) separately."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from flashback.cli._output import print_json, print_tables

if TYPE_CHECKING:
    from flashback._meta import CaptureMeta

#: Segment columns shown in the text output (all of them go to --json).
SEGMENT_COLS = ("gb_start", "gb_end", "t_start_s", "t_end_s", "level", "level_lo", "level_hi", "n")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze", help="change points and steady state of a capture, replay or fio output"
    )
    p.add_argument(
        "capture",
        help=".arrow/.parquet capture, a `flashback replay -o` directory, or fio JSON / log "
        "prefix (--fio)",
    )
    p.add_argument("--x", default="host_written_bytes", help="axis: host_written_bytes or t_s")
    p.add_argument("--y", default="write_mbps", help="series to segment, e.g. write_iops")
    p.add_argument("--transform", choices=["auto", "log", "none"], default="auto")
    p.add_argument("--penalty", default="auto", help="'auto' or a number")
    p.add_argument("--min-size", type=int, default=None, help="shortest segment in intervals")
    p.add_argument(
        "--by",
        default=None,
        help="segment each value of this column separately; for a replay directory the "
        "default is each test (a step repeated over loops is one series); 'none' mixes all",
    )
    p.add_argument("--ss-y", default=None, help="steady-state variable (default: --y)")
    p.add_argument("--rule", default="snia", help="snia|tkperf|band|ssspt|fio_iops|fio_iops_slope")
    p.add_argument("--round", default="60s", help="steady-state round: 60s, 1g, 0.25fill")
    p.add_argument("--fio", action="store_true", help="read CAPTURE as fio output")
    p.add_argument("--fio-version", default=None, help="with --fio: e.g. 2.2.10, when not printed")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=main)


def load_input(
    path: str, *, fio: bool = False, fio_version: str | None = None
) -> tuple[Any, CaptureMeta]:
    """``(intervals, meta)`` of a capture file, a saved replay directory or fio output.

    A replay's intervals gain a ``test`` column: the step's test and direction where the
    protocol names them (Puget's ``seq_write`` in every loop and pass), else the step name.

    Raises:
        CaptureFileError, ImportFormatError: unreadable input.
    """
    import polars as pl

    if fio:
        from flashback.fio import read_fio

        cap = read_fio(path, fio_version=fio_version)
        return cap.intervals, cap.meta
    if Path(path).is_dir():
        from flashback.replay import Replay

        rep = Replay.load(path)
        iv = rep.intervals
        steps = rep.steps
        keys = [c for c in ("test", "direction") if c in steps.columns]
        if keys and iv.height:
            parts = [pl.col(c).cast(pl.String) for c in keys]
            label = pl.coalesce(pl.concat_str(parts, separator="_", ignore_nulls=True), "step")
            tests = steps.select("step", label.alias("_test"))
            iv = (
                iv.join(tests, on="step", how="left")
                .with_columns(pl.coalesce("_test", "step").alias("test"))
                .drop("_test")
            )
        elif "step" in iv.columns:
            iv = iv.with_columns(pl.col("step").alias("test"))
        meta: dict[str, Any] = dict(rep.meta)
        meta.setdefault("target", {})
        # a replay's metadata read as a capture's, as Replay.capture() does (annotation only)
        return iv, cast("CaptureMeta", {**meta, "replay": True})
    from flashback.capture import load

    cap = load(path)
    return cap.intervals, cap.meta


def _check_rule(rule: str) -> None:
    from flashback.analysis.steady_state import RULES
    from flashback.errors import ParameterError

    if rule not in RULES:
        raise ParameterError(
            f"--rule {rule!r} is not a steady-state rule; use one of {', '.join(RULES)}"
        )


def _analyse(
    frame: Any, meta: CaptureMeta, args: argparse.Namespace, by: str | None
) -> dict[str, Any]:
    from flashback.analysis import changepoints, steady_state
    from flashback.capture import Capture
    from flashback.errors import AnalysisError

    cap = Capture(frame, meta)
    seg = changepoints(
        cap,
        x=args.x,
        y=args.y,
        transform=None if args.transform == "none" else args.transform,
        penalty=args.penalty,
        min_size=args.min_size,
        by=by,
    )
    out: dict[str, Any] = {"segments": seg, "steady_state": None, "not_assessed": None}
    out["explain"] = None if by is not None or not seg.breakpoints else seg.explain(cap)
    try:
        out["steady_state"] = steady_state(
            cap, y=args.ss_y or args.y, rule=args.rule, round=args.round
        )
    except AnalysisError as e:
        out["not_assessed"] = str(e)
    return out


def main(args: argparse.Namespace) -> int:
    _check_rule(args.rule)
    intervals, meta = load_input(args.capture, fio=args.fio, fio_version=args.fio_version)
    replay = bool(meta.get("replay"))
    by = None if args.by in (None, "none", "") else args.by
    if replay and args.by is None:
        groups = [
            (name, part)
            for (name,), part in intervals.group_by("test", maintain_order=True)
            if args.y in part.columns and (part[args.y].fill_null(0) != 0).any()
        ]
        skipped = intervals["test"].n_unique() - len(groups)
    else:
        groups, skipped = [(None, intervals)], 0
    results = [(name, _analyse(part, meta, args, by)) for name, part in groups]
    if args.json:
        print_json(
            {
                "input": args.capture,
                "x": args.x,
                "y": args.y,
                "per": "test" if replay and args.by is None else by,
                "results": [
                    {
                        "test": name,
                        "breakpoints": r["segments"].breakpoints,
                        "segments": r["segments"].to_frame(),
                        "steady_state": None
                        if r["steady_state"] is None
                        else {
                            "reached": r["steady_state"].reached,
                            "rule": r["steady_state"].rule,
                            "window": r["steady_state"].window,
                            "onset": r["steady_state"].onset,
                        },
                        "steady_state_not_assessed": r["not_assessed"],
                        "explanations": None
                        if r["explain"] is None
                        else r["explain"].select("x", "causes", "evidence"),
                    }
                    for name, r in results
                ],
            }
        )
        return 0
    if replay and args.by is None:
        print(
            f"{args.capture}: a replay; each test analysed on its own ({len(groups)} with "
            f"{args.y}, {skipped} without); --by none mixes them"
        )
    for name, r in results:
        if name is not None:
            print(f"\n== {name} ==")
        seg = r["segments"]
        print(seg.describe())
        if r["explain"] is not None:
            print("what coincides with each change:")
            for e in r["explain"].iter_rows(named=True):
                hb = e["host_written_bytes"]
                where = f"{hb / 1e9:.3g} GB, " if hb is not None else ""
                print(f"  at {where}{e['t_s']:.4g} s: {e['evidence']}")
        frame = seg.to_frame()
        cols = [c for c in ("group", *SEGMENT_COLS) if c in frame.columns]
        print_tables([("", frame.select(cols).to_dicts() if frame.height else [])])
        if r["steady_state"] is not None:
            print(r["steady_state"].describe())
        else:
            print(f"steady state: not assessed ({r['not_assessed']})")
    return 0
