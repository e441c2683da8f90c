"""flashback — capture, replay and analyse how SSD performance changes as a drive is written.

>>> import flashback as fb
>>> w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, size="64m", time="5s")
>>> cap = fb.run("sim:generic?scale=1/64", w)
"""

import sys as _sys
import types as _types

from flashback.errors import (
    AnalysisError,
    CaptureFileError,
    DeviceError,
    FioFormatError,
    FlashbackError,
    ImportFormatError,
    InternalError,
    ParameterError,
    ReplayError,
    SafetyError,
    SweepError,
    TargetError,
    TelemetryFormatError,
)

# Public names -> the module that defines them, imported on first use: polars, numpy and
# Altair take a second or more to import, and `flashback --version`/`presets` need none.
_LAZY = {
    **dict.fromkeys(("Capture", "load", "recover"), "flashback.capture"),
    "published": "flashback.published",
    **dict.fromkeys(("Replay", "protocols", "replay"), "flashback.replay"),
    **dict.fromkeys(("Target", "open_target", "run"), "flashback.targets"),
    **dict.fromkeys(("Remap", "replay_trace"), "flashback.trace"),
    **dict.fromkeys(
        (
            "Bootstrap",
            "Effect",
            "Segments",
            "SteadyState",
            "changepoints",
            "compression_effect",
            "consistency",
            "degradation",
            "idle_recovery",
            "steady_state",
            "steady_state_onset",
            "to_rounds",
            "trim_effect",
        ),
        "flashback.analysis",
    ),
    "purge": "flashback.purge",
    "read_fio": "flashback.fio",
    "write_amplification": "flashback.telemetry.wa",
    "scan_captures": "flashback.dataset",
    **dict.fromkeys(("Job", "SweepResult", "sweep"), "flashback.sweep"),
    "Workload": "flashback.workload",
}


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name == "__version__":
        from flashback import _native

        return _native.__version__
    if name in ("figures", "notebook", "report", "sim", "cli", "telemetry"):
        return importlib.import_module(f"flashback.{name}")
    raise AttributeError(f"module 'flashback' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__", "figures"})


class _Package(_types.ModuleType):
    """``flashback.replay`` and ``flashback.published`` are both a function (the public API)
    and a submodule. Importing the submodule must not replace the function on the package."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


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
    "TelemetryFormatError",
    "FioFormatError",
    "InternalError",
    "DeviceError",
    "AnalysisError",
    "ReplayError",
    "SweepError",
    "changepoints",
    "steady_state",
    "steady_state_onset",
    "to_rounds",
    "compression_effect",
    "trim_effect",
    "degradation",
    "idle_recovery",
    "consistency",
    "read_fio",
    "purge",
    "write_amplification",
    "scan_captures",
    "sweep",
    "Job",
    "SweepResult",
    "Segments",
    "SteadyState",
    "Effect",
    "Bootstrap",
    "Remap",
]
