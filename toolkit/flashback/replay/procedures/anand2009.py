"""AnandTech (2009): 2 MB sequential reads and 4 KiB QD3 read latency, new vs used."""

from __future__ import annotations

from typing import Any

from flashback.replay import params as P
from flashback.replay.api import Replay
from flashback.replay.base import Protocol, check_row, effect_pct, register
from flashback.replay.procedures.common import mbps, num, rand_write, seq_fill
from flashback.replay.scaling import idema_bytes
from flashback.workload import Workload

PROCEDURE = """\
secure_erase: secure erase
fresh/seq_fill: every LBA written sequentially (so reads return written data)
fresh/seq_read: 2 MiB sequential reads QD1 for measure_s
fresh/random_read: 4 KiB random reads QD3 for measure_s (mean latency)
used/random_write: 4 KiB random writes QD32 until one capacity is written (a "used" drive)
used/seq_read, used/random_read: as fresh
assumed (not stated): measure_s = 30 s at full scale; incompressible data"""


def run(r: Any, p: dict[str, Any]) -> None:
    iv, size, t = r.interval_s, r.size_bytes, r.seconds(p["measure_s"])

    def measure(state: str) -> None:
        r.run(
            f"{state}/seq_read",
            Workload(rw="read", bs="2m", iodepth=1, time=t, interval=iv),
            condition=state,
            test="seq_read",
        )
        r.run(
            f"{state}/random_read",
            Workload(rw="randread", bs="4k", iodepth=3, time=t, interval=iv, random="uniform"),
            condition=state,
            test="random_read",
        )

    r.erase("secure_erase")
    r.run("fresh/seq_fill", seq_fill(offset=0, size=size, interval_s=iv), condition="fill")
    measure("fresh")
    r.run(
        "used/random_write",
        rand_write(offset=0, size=size, written=int(size * p["used_fills"]), interval_s=iv),
        condition="torture",
    )
    measure("used")


def checks(rep: Replay) -> list[dict[str, Any]]:
    drive = rep.meta["drive"]
    gib = rep.meta["target_size_bytes"] / rep.scale / (1 << 30)
    rows = [
        check_row(
            "used_fill",
            "all",
            "span_end_gb",
            gib,
            "GB",
            drive=drive,
            tolerance=0.02,
            note="the whole LBA span is written; the review's 74.5 GB are GiB",
            setting=True,
        )
    ]
    for state in ("fresh", "used"):
        rows.append(
            check_row(
                "seq2m_read",
                state,
                "avg_mbps",
                mbps(rep.step(f"{state}/seq_read"), "read"),
                "MB/s",
                drive=drive,
                tolerance=0.15,
            )
        )
    fresh, used = (rows[1]["replayed"], rows[2]["replayed"])
    rows.append(
        check_row(
            "seq2m_read",
            "used",
            "drop_pct",
            effect_pct("drop_pct", fresh, used),
            "%",
            drive=drive,
            tolerance=0.5,
            note="the effect itself: how much slower a used drive reads than a new one "
            "(compared loosely, ±50 % of the review's drop, since each level is within ±15 %); "
            "the review names no mechanism for the X25-M's 13 % (it finds reads 'largely "
            "unaffected'), and the model reads a used drive's scattered pages as fast as a new "
            "one's (with the GC reserve scaled, the replayed drop is < 1 % at every scale)",
            effect=(
                "drop_pct",
                ("seq2m_read", "fresh", "avg_mbps"),
                ("seq2m_read", "used", "avg_mbps"),
            ),
        )
    )
    for state in ("fresh", "used"):
        df = rep.step(f"{state}/random_read")
        lat = None
        if df.height and df["read_ios"].sum() > 0:
            w = df["read_ios"].cast(float)
            lat = num((df["read_lat_mean_us"].fill_null(0.0) * w).sum()) / num(w.sum()) / 1000
        rows.append(
            check_row(
                "iometer_read_qd3",
                state,
                "avg_latency_ms",
                lat,
                "ms",
                drive=drive,
                note="the review shows SSD latencies only in a chart",
            )
        )
    return rows


register(
    Protocol(
        name="anand2009-new-vs-used",
        title="AnandTech 2009: SSD aging, sequential read and read latency new vs used",
        source="004_775086da2cfa1d41.txt",
        review_capacity_bytes=idema_bytes(80),
        default_target="sim:intel-x25m-80g",
        drives={"intel-x25m-80g": ("Intel X25-M", idema_bytes(80))},
        params={
            "measure_s": (
                30.0,
                "each read measurement's duration at full scale",
                P.number(lo=0, lo_open=True),
            ),
            "used_fills": (
                1.0,
                "capacities of 4 KiB random writes that make the drive used",
                P.number(lo=0),
            ),
            "interval_s": P.interval_s(),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        headline=("seq2m_read", "used", "drop_pct"),
        estimate_written_bytes=lambda size, scale, p: (1 + p["used_fills"]) * size,
    )
)
