"""Simulated-drive helpers: calibration of preset parameters against the reviews' numbers."""

from flashback.sim.calibrate import (
    TARGETS,
    Calibration,
    Observation,
    Param,
    ReplayObservation,
    calibrate,
    evaluate,
)

__all__ = [
    "Calibration",
    "Observation",
    "Param",
    "ReplayObservation",
    "TARGETS",
    "calibrate",
    "evaluate",
]
