"""The SandForce SF-2281's dirty state, fitted to published clean and used-state write rates
that no replay reproduces (:data:`DIRTY_SOURCES`): :func:`dirty_ratio` simulates one drive's
after-TRIM / clean ratio, :func:`fit_dirty_rate` fits the one ``dirty_rate`` every SandForce
preset shares. What produced the presets' value::

    from flashback.sim.dirty_rate import fit_dirty_rate
    print(fit_dirty_rate().report())
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flashback.errors import ParameterError
from flashback.sim.calibrate import Calibration, Observation
from flashback.targets import Target
from flashback.workload import Workload


@dataclass(frozen=True)
class DirtySource:
    """A published clean and dirty-state incompressible write rate of one SandForce drive.

    Args:
        preset: the simulator preset of that drive.
        clean_mbps: incompressible sequential write, fresh drive, MB/s.
        dirty_mbps: the same once its NAND was written with incompressible data and the
            drive was TRIMmed, MB/s.
        source: where the two numbers come from.
    """

    preset: str
    clean_mbps: float
    dirty_mbps: float
    source: str


#: SandForce dirty-state sources that no replay reproduces (the fit may only use these; the
#: replays of seeds 001-003 then predict their after-TRIM numbers). The figures are those
#: given in issue #15's text: the seeds do not quote these articles.
DIRTY_SOURCES: tuple[DirtySource, ...] = (
    DirtySource(
        "intel-530-240g",
        303.0,
        241.5,
        "ComputerBase, Intel SSD 530 240GB test: incompressible sequential write 303 MB/s "
        "clean, 241.5 MB/s in the used ('dirty') state (numbers from issue #15's text)",
    ),
    DirtySource(
        "ocz-vertex3-120g",
        162.1,
        101.5,
        "AnandTech, OCZ Vertex 3 120GB review, TRIM page: AS-SSD incompressible sequential "
        "write 162.1 MB/s clean, 38.3 after torture, 101.5 after TRIM (numbers from issue "
        "#15's text)",
    ),
)


def dirty_ratio(preset: str, *, dirty_rate: float, scale: str = "1/128") -> float:
    """Simulated after-TRIM / clean incompressible write rate of ``preset``: secure erase,
    1 MiB sequential pass over 1/16 of the drive (clean), fill, a quarter of the drive in
    4 KiB random writes, TRIM of the whole drive, 60 s idle, the same pass again. All data is
    incompressible, so the drive ends in its dirty state.

    Raises:
        ParameterError: ``dirty_rate`` is outside 0.05 - 1.
        TargetError: the preset does not exist.
    """
    from flashback.replay.procedures.common import mbps
    from flashback.targets import sim_spec

    t = Target(
        sim_spec(preset, {"scale": scale, "dirty_rate": f"{dirty_rate:.6g}", "trim_efficacy": 1})
    )
    mib = 1 << 20
    size = t.size_bytes // 16 // mib * mib
    asssd = Workload(rw="write", bs="1m", size=size, data="random")
    clean = t.run(asssd).intervals
    t.run(Workload(rw="write", bs="128k", iodepth=4, data="random"))
    t.run(
        Workload(
            rw="randwrite",
            bs="4k",
            iodepth=32,
            written=t.size_bytes // 4 // 4096 * 4096,
            data="random",
        )
    )
    t.discard(offset=0)
    t.idle(60.0)  # the torture's queued NAND work drains (it would weigh on a scaled-down pass)
    after = t.run(asssd).intervals
    after_mbps, clean_mbps = mbps(after), mbps(clean)
    assert after_mbps is not None and clean_mbps is not None  # both passes wrote
    return after_mbps / clean_mbps


def fit_dirty_rate(
    sources: tuple[DirtySource, ...] = DIRTY_SOURCES, *, scale: str = "1/128"
) -> Calibration:
    """Fits the SF-2281's ``dirty_rate`` (one value for every SandForce preset) so that each
    source's simulated after-TRIM / clean ratio (:func:`dirty_ratio`) matches its published
    one, least squares on the relative residuals. What produced the presets' value::

        from flashback.sim.dirty_rate import fit_dirty_rate
        print(fit_dirty_rate().report())

    Raises:
        ParameterError: ``sources`` is empty.
    """
    if not sources:
        raise ParameterError("fit_dirty_rate needs at least one DirtySource")
    from scipy.optimize import least_squares  # imported on first use: scipy is slow to import

    want = np.array([s.dirty_mbps / s.clean_mbps for s in sources])
    n = 0

    def sim(x: float) -> np.ndarray:
        nonlocal n
        n += 1
        return np.array([dirty_ratio(s.preset, dirty_rate=x, scale=scale) for s in sources])

    fit = least_squares(
        lambda z: (sim(float(z[0])) - want) / want, [0.75], bounds=(0.05, 1.0), diff_step=0.02
    )
    x = float(fit.x[0])
    got = sim(x)
    return Calibration(
        preset="SandForce SF-2281 (" + ", ".join(s.preset for s in sources) + ")",
        values={"dirty_rate": x},
        observations=[
            Observation(f"{s.preset} after-TRIM / clean", {}, "ratio", float(w), source=s.source)
            for s, w in zip(sources, want, strict=True)
        ],
        simulated=[float(g) for g in got],
        residuals=[float((g - w) / w) for g, w in zip(got, want, strict=True)],
        published=[float(w) for w in want],
        evaluations=n,
        scale=scale,
        extra={"cost": float(fit.cost), "status": int(fit.status)},
    )
