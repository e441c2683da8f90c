"""``flashback purge DEV --destroy DEV [--plan] [--method M]``: purge a drive the way SNIA PTS
asks (its own sanitize, format or secure erase), or print what would be sent."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction) -> None:
    from flashback.purge import METHODS

    p = sub.add_parser(
        "purge",
        help="purge a drive (sanitize / format / secure erase), or --plan it",
        description="Purge a drive with the best method it offers (NVMe sanitize, NVMe format "
        "with user-data erase, SATA sanitize, ATA secure erase; TRIM or a zero fill only as a "
        "fallback labelled 'not a PTS purge'). --plan prints what would be sent and sends "
        "nothing destructive.",
    )
    p.add_argument("device", help="/dev/... (or a sim: spec)")
    p.add_argument(
        "--destroy",
        action="append",
        default=[],
        metavar="DEV",
        help="confirm by naming every device the purge erases (repeat, or comma-separate): "
        "an NVMe sanitize erases every namespace of the controller",
    )
    p.add_argument("--method", default="auto", choices=METHODS, help="default: auto")
    p.add_argument("--plan", action="store_true", help="print what would be sent; send nothing")
    p.add_argument("--json", action="store_true", help="print the plan or record as JSON")
    p.set_defaults(func=main)


def render(rec: dict) -> str:
    """The plan or record as text: method, label, what it reaches, the commands, refusals."""
    lines = [
        f"device:   {rec.get('device')}",
        f"method:   {rec.get('method')}  ({rec.get('label')})",
        f"reaches:  {', '.join(rec.get('reaches') or [])}",
        "commands:",
        *[f"  {c}" for c in rec.get("commands") or []],
    ]
    for c in rec.get("candidates") or []:
        mark = "yes" if c["available"] else "no "
        lines.append(f"  [{mark}] {c['method']}: {c['why']}")
    for r in rec.get("refusals") or []:
        lines.append(f"refused:  {r}")
    if "duration_s" in rec:
        lines.append(f"duration: {rec['duration_s']:.1f} s")
        v = rec.get("verification")
        if v:
            lines.append(
                f"verified: {v.get('blocks_matching')}/{v.get('blocks_read')} sampled blocks read "
                f"back as {v.get('expected')}"
            )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from flashback.purge import purge

    destroy = [d for item in args.destroy for d in item.split(",") if d]
    rec = purge(args.device, destroy=destroy or None, method=args.method, plan=args.plan)
    print(json.dumps(rec, indent=2, default=str) if args.json else render(rec))
    if args.plan and rec.get("refusals"):
        return 3
    return 0
