"""Analysis: change points in the bytes-written domain, steady state, effects with honest
confidence intervals, consistency metrics. One idea per module."""

from flashback.analysis.changepoints import changepoints
from flashback.analysis.consistency import consistency
from flashback.analysis.effects import (
    Bootstrap,
    Effect,
    compression_effect,
    degradation,
    idle_recovery,
    trim_effect,
)
from flashback.analysis.onset import Onset, steady_state_onset
from flashback.analysis.rounds import to_rounds
from flashback.analysis.segments import Segments
from flashback.analysis.steady_state import SteadyState, steady_state

__all__ = [
    "changepoints",
    "consistency",
    "compression_effect",
    "degradation",
    "idle_recovery",
    "trim_effect",
    "to_rounds",
    "steady_state",
    "steady_state_onset",
    "Onset",
    "Segments",
    "SteadyState",
    "Effect",
    "Bootstrap",
]
