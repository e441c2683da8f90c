"""Puget Systems (2013): CrystalDiskMark 3 looped from a secure erase to ≈ 1.8 TB written."""

from __future__ import annotations

from typing import Any

from flashback.replay import params as P
from flashback.replay.scaling import idema_bytes
from flashback.replay.base import Protocol, register, require
from flashback.replay.procedures.puget_checks import checks, loops_frame, pair_checks  # noqa: F401
from flashback.workload import Workload

MIB = 1 << 20
# CrystalDiskMark 3 order: each test's read passes, then its write passes.
TESTS = (
    ("seq", "read", "write", "1m", 1),
    ("rand512k", "randread", "randwrite", "512k", 1),
    ("rand4k", "randread", "randwrite", "4k", 1),
    ("rand4k_qd32", "randread", "randwrite", "4k", 32),
)

PROCEDURE = """\
secure_erase: secure erase (a whole-span discard on a real target)
cdm_loop_NNNN/prepare: CrystalDiskMark writes its test file (test_size, sequential 1 MiB)
cdm_loop_NNNN/<test>_<read|write>/pass_P: Seq 1 MiB QD1, 512 KiB random QD1, 4 KiB random
  QD1, 4 KiB random QD32; each read then write, `passes` times, one pass over the test file
cdm_loop_NNNN/trim: the test file is deleted and TRIMmed (trim=True) or just left (False)
repeat until total_written_bytes (1.8 TB at full scale) have been written
assumed: test_size 1000 MiB and 2 passes, so one loop writes 9 × 1000 MiB ≈ 9.4 GB (the review
  says ≈ 9.2 GB); the test file moves to the next free slot each loop (placement="rotate"),
  as a file system allocates new space, or stays at offset 0 (placement="fixed")"""


def _params(size_bytes: int, scale: float, p: dict[str, Any]) -> tuple[int, int]:
    test = max(int(p["test_size_bytes"] * scale) // MIB * MIB, MIB)
    total = int(p["total_written_bytes"] * scale)
    return test, total


def estimate(size_bytes: int, scale: float, p: dict[str, Any]) -> float:
    test, total = _params(size_bytes, scale, p)
    per_loop = test * (1 + 4 * p["passes"])
    if p["loops"] is not None:
        return per_loop * p["loops"]
    return float(-(-total // per_loop) * per_loop)


def run(r: Any, p: dict[str, Any]) -> None:
    require(p["data"] in ("random", "zeros"), f"data={p['data']!r}: use 'random' or 'zeros'")
    require(p["placement"] in ("rotate", "fixed"), "placement must be 'rotate' or 'fixed'")
    test, total = _params(r.size_bytes, r.scale, p)
    require(test <= r.size_bytes, f"the test file ({test} bytes) does not fit on the target")
    slots = r.size_bytes // test
    r.erase("secure_erase")
    loop = 0
    while True:
        if p["loops"] is not None and loop >= p["loops"]:
            break
        if p["loops"] is None and r.written_bytes >= total:
            break
        offset = (loop % slots) * test if p["placement"] == "rotate" else 0
        head = f"cdm_loop_{loop:04d}"
        common = {"offset": offset, "size": test, "data": p["data"], "interval": p["interval_s"]}
        r.run(
            f"{head}/prepare",
            Workload(rw="write", bs="1m", iodepth=1, **common),
            loop=loop,
            test="prepare",
            direction="write",
            offset_bytes=offset,
        )
        for name, read_rw, write_rw, bs, qd in TESTS:
            for direction, rw in (("read", read_rw), ("write", write_rw)):
                for k in range(1, p["passes"] + 1):
                    w = Workload(rw=rw, bs=bs, iodepth=qd, seed=loop * 100 + k, **common)
                    r.run(
                        f"{head}/{name}_{direction}/pass_{k}",
                        w,
                        loop=loop,
                        test=name,
                        direction=direction,
                        cdm_pass=k,
                        offset_bytes=offset,
                    )
        if p["trim"]:
            r.discard(f"{head}/trim", offset=offset, size=test, loop=loop)
        loop += 1


register(
    Protocol(
        name="puget-cdm-loop",
        title="Puget Systems: Intel 520 performance vs data written (CrystalDiskMark 3 looped)",
        source="000_2002a1564e89ff8a.txt",
        review_capacity_bytes=idema_bytes(120),
        default_target="sim:intel-520-120g",
        drives={"intel-520-120g": ("Intel SSD 520", idema_bytes(120))},
        params={
            "data": (
                "random",
                "random (incompressible) or zeros (compressible)",
                P.choice("random", "zeros"),
            ),
            "trim": (True, "TRIM the test file after each loop", P.boolean()),
            "test_size_bytes": (
                1000 * MIB,
                "CrystalDiskMark test size at full scale",
                P.size_bytes(),
            ),
            "passes": (2, "passes per test (CrystalDiskMark keeps the best)", P.integer(lo=1)),
            "total_written_bytes": (
                1.8e12,
                "stop after this many host bytes (full scale)",
                P.number(lo=0, lo_open=True),
            ),
            "loops": (None, "stop after this many loops instead", P.integer(lo=1, optional=True)),
            "placement": (
                "rotate",
                "rotate: the test file moves each loop; fixed: offset 0",
                P.choice("rotate", "fixed"),
            ),
            "interval_s": (
                None,
                "reporting interval (default 1 s)",
                P.number(lo=0, lo_open=True, optional=True),
            ),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        estimate_written_bytes=estimate,
        pair_checks=pair_checks,
    )
)
