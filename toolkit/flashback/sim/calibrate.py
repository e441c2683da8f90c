"""Fitting simulator parameters to published observations, repeatably.

A calibration takes a preset, a list of :class:`Observation` (a workload, optionally
preceded by preparation steps, a metric computed from its capture, and the published value)
and a list of free :class:`Param` (a ``sim:`` key with bounds). It minimises the relative
residuals ``(simulated − published) / published`` with ``scipy.optimize.least_squares``
(trust-region reflective, bounds respected, finite-difference Jacobian) over short simulated
runs on a scaled-down drive (ratios kept, so speeds are those of the full drive), and reports
the fitted values and the residuals. Same inputs → same result (the simulator is
deterministic for a given seed).

Example (what produced the fitted values recorded in the presets' ``sources``)::

    from flashback.sim import calibrate, TARGETS
    cal = calibrate("intel-520-120g", **TARGETS["intel-520-120g"])
    print(cal.report())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from flashback.errors import ParameterError
from flashback.replay.api import replay
from flashback.targets import Target
from flashback.workload import Workload


@dataclass(frozen=True)
class Observation:
    """One published number and how to reproduce it.

    Args:
        name: label, e.g. ``"puget seq write incompressible max"``.
        workload: ``fb.Workload`` keyword arguments of the measured step.
        metric: ``"<column>:<agg>"``, agg one of ``mean``, ``max``, ``min``, ``last`` (the last
            third's mean), e.g. ``"write_mbps:max"``.
        value: the published value, in the column's unit.
        prep: workloads (keyword dicts) run before, on the same drive; the string
            ``"trim"`` discards the whole drive and ``"idle:<s>"`` idles.
        weight: weight of its residual.
    """

    name: str
    workload: dict[str, Any]
    metric: str
    value: float
    prep: tuple[Any, ...] = ()
    weight: float = 1.0
    source: str = ""


@dataclass(frozen=True)
class ReplayObservation:
    """A published number as a replay protocol checks it: one row of ``Replay.compare()``.

    Fitting to compare() rows means the fitted preset is judged by exactly the procedure
    (durations, spans, file sizes, order of steps) the fidelity checks use.

    Args:
        protocol: a replay protocol name, e.g. ``"anandtech-trim-validation"``.
        test, condition, metric: the compare() row (its ``test``/``condition``/``metric``).
        value: the published value; ``None`` takes it from the row's ``published`` column.
        weight: weight of its residual.
        params: protocol parameters as ``(name, value)`` pairs, e.g. ``(("data", "zeros"),)``.
    """

    protocol: str
    test: str
    condition: str
    metric: str
    value: float | None = None
    weight: float = 1.0
    source: str = ""
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.protocol}: {self.test} {self.condition} {self.metric}"


@dataclass(frozen=True)
class Param:
    """A free parameter: a ``sim:`` key, bounds and start value.

    Raises:
        ParameterError: the bounds are not ``lo < hi`` with ``lo <= x0 <= hi``.
    """

    key: str
    lo: float
    hi: float
    x0: float

    def __post_init__(self) -> None:
        if not (self.lo < self.hi and self.lo <= self.x0 <= self.hi):
            raise ParameterError(
                f"Param {self.key}: need lo < hi and lo <= x0 <= hi, got {self.lo}, {self.hi}, {self.x0}"
            )


@dataclass(kw_only=True)
class Calibration:
    """Fitted values, residuals (relative) and per-observation simulated values."""

    preset: str
    values: dict[str, float]
    observations: list[Observation | ReplayObservation]
    simulated: list[float]
    residuals: list[float]
    evaluations: int
    scale: str
    published: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def report(self) -> str:
        """A multi-line report: the fitted values, then published vs simulated per observation."""
        lines = [
            f"calibration of {self.preset} (scale {self.scale}, {self.evaluations} evaluations)"
        ]
        lines += [f"  {k} = {v:.4g}" for k, v in self.values.items()]
        pub: list[float | None] = [*self.published] or [o.value for o in self.observations]
        for o, v, s, r in zip(self.observations, pub, self.simulated, self.residuals, strict=True):
            # a ReplayObservation may leave its value to the replay's row (value=None)
            shown = "from the replay's row" if v is None else f"{v:.4g}"
            lines.append(f"  {o.name}: published {shown}, simulated {s:.4g}, residual {r:+.1%}")
        return "\n".join(lines)

    def spec_suffix(self) -> str:
        """The fitted values as ``sim:`` spec keys (``key=value&...``), to append to a preset."""
        return "&".join(f"{k}={v:.6g}" for k, v in self.values.items())


def _metric(df, metric: str) -> float:
    col, _, agg = metric.partition(":")
    s = df[col].drop_nulls()
    if agg == "max":
        return float(s.max())
    if agg == "min":
        return float(s.min())
    if agg == "last":
        return float(s.tail(max(1, len(s) // 3)).mean())
    return float(s.mean())


def _replay_rows(spec: str, scale: str, o: ReplayObservation) -> pl.DataFrame:
    from flashback.replay.scaling import parse_scale

    return replay(o.protocol, target=spec, scale=parse_scale(scale), **dict(o.params)).compare()


def _row(frame: pl.DataFrame, o: ReplayObservation, column: str) -> float:
    hit = frame.filter(
        (pl.col("test") == o.test)
        & (pl.col("condition") == o.condition)
        & (pl.col("metric") == o.metric)
    )
    if hit.is_empty() or hit[column][0] is None:
        raise ParameterError(
            f"{o.protocol} has no compare() row with a {column} value for test={o.test!r}, "
            f"condition={o.condition!r}, metric={o.metric!r}; pick one from Replay.compare()"
        )
    return float(hit[column][0])


def evaluate(
    preset: str,
    observations: list[Observation | ReplayObservation],
    values: dict[str, float],
    *,
    scale: str = "1/64",
) -> list[float]:
    """Simulated value of every observation with parameters ``values`` (sim key → value).

    Plain observations run their workloads on a fresh drive each; replay observations run
    their protocol once per distinct protocol and read its compare() rows.

    Raises:
        ParameterError: a replay observation names no compare() row of its protocol.
    """
    return _simulate(preset, observations, values, scale=scale)[0]


def _simulate(
    preset: str,
    observations: list[Observation | ReplayObservation],
    values: dict[str, float],
    *,
    scale: str,
) -> tuple[list[float], list[float]]:
    """(simulated, published) per observation."""
    from flashback.targets import sim_spec

    spec = sim_spec(preset, {"scale": scale, **{k: f"{v:.6g}" for k, v in values.items()}})
    out, published = [], []
    replays: dict[tuple[str, Any], pl.DataFrame] = {}
    for o in observations:
        if isinstance(o, ReplayObservation):
            key = (o.protocol, o.params)
            if key not in replays:
                replays[key] = _replay_rows(spec, scale, o)
            out.append(_row(replays[key], o, "replayed"))
            published.append(o.value if o.value is not None else _row(replays[key], o, "published"))
            continue
        published.append(o.value)
        t = Target(spec)
        for p in o.prep:
            if p == "trim":
                t.discard(offset=0)
            elif isinstance(p, str) and p.startswith("idle:"):
                t.idle(float(p[5:]))
            else:
                t.run(Workload(**p))
        cap = t.run(Workload(**o.workload))
        out.append(_metric(cap.intervals, o.metric))
    return out, published


def calibrate(
    preset: str,
    *,
    observations: list[Observation | ReplayObservation],
    params: list[Param],
    scale: str = "1/64",
    max_evals: int = 60,
) -> Calibration:
    """Fits ``params`` of ``preset`` to ``observations``; returns values and residuals.

    Raises:
        ParameterError: a parameter's bounds are inconsistent, a key is unknown, or a
            replay observation names no compare() row of its protocol.
        TargetError: the preset does not exist.
    """
    lo = np.array([p.lo for p in params])
    hi = np.array([p.hi for p in params])
    span = hi - lo
    w = np.array([o.weight for o in observations])
    z0 = np.array([(p.x0 - p.lo) / (p.hi - p.lo) for p in params])
    published: np.ndarray | None = None  # the same at every evaluation; kept from the first
    n = 0

    def resid(z: np.ndarray) -> np.ndarray:
        nonlocal n, published
        n += 1
        vals = {p.key: float(lo[i] + z[i] * span[i]) for i, p in enumerate(params)}
        sim, pub = _simulate(preset, observations, vals, scale=scale)
        if published is None:
            published = np.array(pub)
        return w * (np.array(sim) - published) / published

    from scipy.optimize import least_squares  # imported on first use: scipy is slow to import

    fit = least_squares(
        resid, z0, bounds=(0.0, 1.0), diff_step=0.02, max_nfev=max_evals, x_scale=1.0
    )
    values = {p.key: float(lo[i] + fit.x[i] * span[i]) for i, p in enumerate(params)}
    sim = evaluate(preset, observations, values, scale=scale)
    assert published is not None  # resid ran: least_squares evaluates at least once
    pub = [float(v) for v in published]
    return Calibration(
        preset=preset,
        values=values,
        observations=list(observations),
        simulated=sim,
        residuals=[(s - v) / v for s, v in zip(sim, pub, strict=True)],
        published=list(pub),
        evaluations=n,
        scale=scale,
        extra={"cost": float(fit.cost), "status": int(fit.status)},
    )


_GIB = "1g"
_SEQ_RANDOM = dict(rw="write", bs="1m", size=_GIB, data="random", time="4s")
_SEQ_ZEROS = dict(rw="write", bs="1m", size=_GIB, data="zeros", time="4s")

#: The observation sets and free parameters the presets were fitted with.
TARGETS: dict[str, dict[str, Any]] = {
    "intel-520-120g": dict(
        observations=[
            Observation(
                "CDM seq write, incompressible, max",
                _SEQ_RANDOM,
                "write_mbps:mean",
                193.3,
                source="Puget Systems (seed 000)",
            ),
            Observation(
                "CDM seq write, compressible (0x00), max",
                _SEQ_ZEROS,
                "write_mbps:mean",
                500.0,
                source="Puget Systems (seed 000): 'saw almost exactly' the advertised 500 MB/s",
            ),
        ],
        params=[Param("t_prog_us", 800.0, 2500.0, 1300.0), Param("ctrl_mbps", 400.0, 560.0, 520.0)],
    ),
    "intel-530-240g": dict(
        # Fitted through the replay itself, so the fit is judged by the very procedure the
        # fidelity check runs (AS-SSD's 1 GiB file, 16 MiB QD1, after a secure erase). The
        # free parameter is the SF-2281's NAND-side datapath (backend_mbps), shared by every
        # SandForce preset: with programs that start as data arrives, 32 dies at the
        # datasheet t_prog would write ~520 MB/s, and only a controller limit on physical
        # bytes gives SandForce's ~315 MB/s incompressible at any queue depth. trim_efficacy
        # is not fitted: the replayed after-TRIM pass rewrites the first pass's own blocks.
        observations=[
            ReplayObservation(
                "anandtech-trim-validation",
                "as_ssd_seq_write",
                "clean",
                "avg_mbps",
                source="AnandTech (seed 003)",
            ),
        ],
        params=[Param("backend_mbps", 200.0, 600.0, 320.0)],
        scale="1/8",
    ),
}
