"""flashback's one exception hierarchy.

Every error flashback raises is a :class:`FlashbackError`. Subclasses also derive from the
built-in exception a caller would naturally catch (``ValueError``, ``OSError``,
``PermissionError``). The native core maps each of its error variants to one of these classes.
"""

from __future__ import annotations

# typing costs ~7 ms of `flashback --version`'s ~16 (tests/test_cli_startup.py); mypy reads
# TYPE_CHECKING by its name
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class FlashbackError(Exception):
    """Base class of every flashback error."""


class ParameterError(FlashbackError, ValueError):
    """A parameter is malformed or out of range (workload field, simulator key, size string)."""


class TargetError(FlashbackError, ValueError):
    """A target string names nothing usable (unknown preset, missing file without a size...)."""


class SafetyError(FlashbackError, PermissionError):
    """Writing to the target was refused by the safety rules; nothing was written."""


class CaptureFileError(FlashbackError, OSError):
    """A capture file is malformed or torn (see :func:`flashback.recover`)."""


class ImportFormatError(FlashbackError, ValueError):
    """A foreign input (fio log or JSON, block trace) is malformed; the message names file and line."""


class FioFormatError(ImportFormatError):
    """fio output that cannot be read unambiguously: its layout contradicts the fio version it
    names, its units cannot be told apart, it mixes runs, or its totals disagree with the totals
    fio printed."""


class TelemetryFormatError(ImportFormatError):
    """A drive-telemetry output (``smartctl``, ``nvme smart-log``, ``sensors -j``) that
    cannot be decoded: not the layout it claims, or a field of the wrong type."""


class DeviceError(FlashbackError, OSError):
    """The operating system reported an I/O error while flashback was using a target."""


class AnalysisError(FlashbackError, ValueError):
    """An analysis got input it cannot use (empty, NaN, unsorted, missing column...)."""


class ReplayError(FlashbackError):
    """A replay protocol cannot run as asked (unknown name, target too small...)."""


class SweepError(FlashbackError):
    """Jobs of :func:`flashback.sweep` failed (a job raised, or its worker process died) while
    the other jobs ran to the end. The message names each failed job by index and target;
    :attr:`result` is the ``SweepResult`` holding every other job's capture and, in its
    ``errors``, each failure by job index.
    """

    def __init__(self, message: str, result: object = None) -> None:
        super().__init__(message)
        self.result = result

    def __reduce__(self) -> tuple:
        return (type(self), (str(self), self.result))


class InternalError(FlashbackError, RuntimeError):
    """flashback's own code reached a state it assumes impossible (a bug; please report it)."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run. Raised after the capture was finished with status
    ``interrupted`` (and, when streamed, saved); the capture is in :attr:`capture`.

    A :class:`KeyboardInterrupt`, so a loop of runs stops as Ctrl-C should; not a
    :class:`FlashbackError`, since nothing went wrong.
    """

    # Any, not Capture/Replay: this module is below the ones defining them (tests/test_layers.py)
    def __init__(self, capture: Any, message: str = "run interrupted (Ctrl-C)") -> None:
        super().__init__(message)
        self.capture = capture


class ReplayInterrupted(RunInterrupted):
    """Ctrl-C stopped a replay. Raised after the steps done so far were gathered into a
    :class:`~flashback.Replay` with status ``interrupted``; it is in :attr:`replay` (also
    :attr:`capture`). A :class:`KeyboardInterrupt`, so a loop of replays (or a notebook run
    top to bottom) stops as Ctrl-C should, rather than going on with a partial result.
    """

    def __init__(self, replay: Any, message: str = "replay interrupted (Ctrl-C)") -> None:
        super().__init__(replay, message)

    @property
    def replay(self) -> Any:
        """The :class:`~flashback.Replay` of the steps done before Ctrl-C."""
        return self.capture


__all__ = [
    "FlashbackError",
    "ParameterError",
    "TargetError",
    "SafetyError",
    "CaptureFileError",
    "ImportFormatError",
    "FioFormatError",
    "DeviceError",
    "AnalysisError",
    "ReplayError",
    "SweepError",
    "InternalError",
    "RunInterrupted",
    "ReplayInterrupted",
]


class AnalysisWarning(UserWarning):
    """An analysis result that holds with a caveat (e.g. a confidence interval from fewer
    than ~20 independent blocks)."""
