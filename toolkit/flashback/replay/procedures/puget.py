"""Puget Systems (2013): CrystalDiskMark 3 looped from a secure erase to ≈ 1.8 TB written."""

from __future__ import annotations

from typing import Any

from flashback.replay import params as P
from flashback.replay.base import Protocol, register, require
from flashback.replay.procedures import cdm
from flashback.replay.procedures.puget_checks import checks, loops_frame, pair_checks  # noqa: F401
from flashback.replay.scaling import idema_bytes, scaled_bytes

MIB = 1 << 20

PROCEDURE = """\
secure_erase: secure erase (a whole-span discard on a real target)
cdm_loop_NNNN/prepare: CrystalDiskMark writes its test file (test_size, sequential 1 MiB, unscored)
cdm_loop_NNNN/<test>_<read|write>/pass_K: Seq 1 MiB QD1, 512 KiB random QD1, 4 KiB random
  QD1, 4 KiB random QD32, each read then write; pass_0 is CDM's unscored "Preparing..." run,
  pass_1..passes score; every run lasts test_time_s (6 s, CDM 3's DISK_TEST_TIME), Seq in whole
  passes over the file (/part_P), random offsets uniform with replacement; the best run counts
cdm_loop_NNNN/trim: the test file is deleted and TRIMmed (trim=True) or just left (False)
repeat until total_written_bytes (1.8 TB at full scale) have been written
CrystalDiskMark 3.0.2's engine (DiskBench.cpp) is cited in flashback.replay.procedures.cdm
assumed (the review does not say): test_size 1000 MiB (CDM's default) and 1 scored run (CDM's
  default is 5, which would write ≈ 3× the ≈ 9.2 GB per loop the review states); the test
  file moves to the next free slot each loop (placement="rotate"), as a file system allocates
  new space, or stays at offset 0 (placement="fixed")"""


def _params(size_bytes: int, scale: float, p: dict[str, Any]) -> tuple[int, int]:
    """The test file (bytes, review × scale to a 4 KiB sector, ≥ 1 MiB) and the bytes to
    write. Not rounded to whole MiB: the file is also the stride its slots rotate by, and
    15 MiB for 1/64's 15.625 gave the drive 119 slots where the review's has 114 (the loop
    wrapped to slot 0 at 912 GB instead of 888) and wrote 4 % less of each pass."""
    test = scaled_bytes(p["test_size_bytes"], scale, align=4096, minimum=MIB)
    total = int(p["total_written_bytes"] * scale)
    return test, total


def estimate(size_bytes: int, scale: float, p: dict[str, Any]) -> float:
    test, total = _params(size_bytes, scale, p)
    if p["loops"] is None:
        return float(total)
    # a drive writing ≈ 200 MB/s (the review's incompressible rate) for a progress bar
    per_loop = cdm.estimate_bytes(
        test_bytes=test,
        runs=p["passes"],
        write_mbps=200.0 * scale,
        time_s=p["test_time_s"] * scale,
    )
    return per_loop * p["loops"]


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
        cdm.run_tests(
            r,
            head=head,
            offset=offset,
            test_bytes=test,
            runs=p["passes"],
            time_s=r.seconds(p["test_time_s"]),
            data=p["data"],
            seed=loop + 1,
            loop=loop,
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
            "passes": (
                1,
                "scored runs per test (CDM's 'number of test runs'; it reports the best); the "
                "review does not say: 1 keeps a loop near its ≈ 9.2 GB",
                P.integer(lo=1),
            ),
            "test_time_s": (
                cdm.TEST_TIME_S,
                "seconds per run at full scale (CDM 3's DISK_TEST_TIME, a fixed 6 s)",
                P.number(lo=0, lo_open=True),
            ),
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
            "interval_s": P.interval_s(default="1 s"),
        },
        procedure=PROCEDURE,
        run=run,
        checks=checks,
        estimate_written_bytes=estimate,
        pair_checks=pair_checks,
        headline=("cdm_seq_write", "incompressible", "avg_mbps"),
    )
)
