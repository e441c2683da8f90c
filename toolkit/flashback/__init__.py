"""flashback — capture, replay and analyse how SSD performance changes as a drive is written.

>>> import flashback as fb
>>> w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, size="64m", time="5s")
>>> cap = fb.run("sim:generic?scale=1/64", w)
"""

from flashback import _native
from flashback.capture import Capture, load, recover
from flashback.errors import (
    AnalysisError,
    CaptureFileError,
    DeviceError,
    FlashbackError,
    ImportFormatError,
    InternalError,
    ParameterError,
    ReplayError,
    SafetyError,
    TargetError,
)
from flashback.published import published
from flashback.replay import Replay, protocols, replay
from flashback.targets import Target, open_target, run
from flashback.trace import replay_trace
from flashback.analysis import (
    Effect,
    SegmentedFit,
    Segments,
    SteadyState,
    changepoints,
    compression_effect,
    consistency,
    degradation,
    idle_recovery,
    segmented_fit,
    steady_state,
    to_rounds,
    trim_effect,
)
from flashback.fio import read_fio
from flashback.dataset import scan_captures
from flashback.sweep import Job, SweepResult, sweep
from flashback.workload import Workload

__version__ = _native.__version__


def __getattr__(name: str):
    # `fb.figures` is imported on first use: Altair takes seconds to import.
    if name == "figures":
        import importlib

        return importlib.import_module("flashback.figures")
    raise AttributeError(f"module 'flashback' has no attribute {name!r}")


__all__ = [
    "Capture",
    "Replay",
    "Target",
    "Workload",
    "load",
    "open_target",
    "protocols",
    "published",
    "recover",
    "replay",
    "replay_trace",
    "run",
    "FlashbackError",
    "ParameterError",
    "TargetError",
    "SafetyError",
    "CaptureFileError",
    "ImportFormatError",
    "InternalError",
    "DeviceError",
    "AnalysisError",
    "ReplayError",
    "changepoints",
    "steady_state",
    "to_rounds",
    "compression_effect",
    "trim_effect",
    "degradation",
    "idle_recovery",
    "consistency",
    "segmented_fit",
    "read_fio",
    "scan_captures",
    "sweep",
    "Job",
    "SweepResult",
    "Segments",
    "SteadyState",
    "Effect",
    "SegmentedFit",
]
