"""Type surface of ``flashback._native``, the Rust core's PyO3 bindings.

Checked against the built module by ``mypy.stubtest`` in ``make lint``. Values cross the
boundary as plain types; tables as Arrow C streams (``ArrowTable``), metadata as dicts
(JSON text only where it is a file format: a capture file's metadata).
Every error is a ``flashback.errors`` class (``ParameterError``, ``TargetError``,
``SafetyError``, ``CaptureFileError``, ``ImportFormatError``, ``DeviceError``,
``InternalError``).
"""

from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, final

__version__: str

@final
class ArrowTable:
    """A table of record batches, handed to polars through the Arrow C stream interface."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    @property
    def num_rows(self) -> int: ...

@final
class NativeTarget:
    """An opened file, block device or simulated drive (``flashback.Target`` wraps it)."""

    def __new__(
        cls,
        spec: str,
        *,
        destroy: str | None = None,
        overwrite: bool = False,
        create_size: int | None = None,
    ) -> NativeTarget: ...
    @property
    def spec(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def host_written_bytes(self) -> int: ...
    def meta(self) -> dict[str, Any]: ...
    def run(
        self,
        fields: dict[str, str],
        *,
        step: str = ...,
        capture_path: str | PathLike[str] | None = None,
        progress: Callable[..., Any] | None = None,
        no_recording: bool = False,
        stream_only: bool = False,
        overwrite_capture: bool = False,
        own_session: bool = False,
    ) -> tuple[ArrowTable, dict[str, Any]]: ...
    def run_trace(
        self,
        path: str | PathLike[str],
        fields: dict[str, str],
        *,
        time_scale: float | None = None,
        offset_scale: float = 1.0,
        offset_shift: int = 0,
        align: int = 4096,
        step: str = ...,
        capture_path: str | PathLike[str] | None = None,
        progress: Callable[..., Any] | None = None,
        overwrite_capture: bool = False,
        own_session: bool = False,
    ) -> tuple[ArrowTable, dict[str, Any]]: ...
    def discard(self, offset: int = 0, size: int | None = None) -> None: ...
    def idle(self, seconds: float) -> bool: ...
    def sanitize(self) -> None: ...

def parse_workload(fields: dict[str, str]) -> dict[str, Any]: ...
def parse_size(field: str, text: str) -> int: ...
def parse_duration(field: str, text: str) -> float: ...
def parse_scale(field: str, text: str) -> float: ...
def capture_columns() -> list[dict[str, Any]]: ...
def read_capture(
    path: str | PathLike[str], salvage: bool = False
) -> tuple[ArrowTable, dict[str, Any], bool, str | None]: ...
def parse_capture_meta(path: str | PathLike[str], meta_json: str) -> dict[str, Any]: ...
def write_capture(path: str | PathLike[str], table: object, meta_json: str) -> None: ...
@final
class OutputFile:
    """A file being written through flashback's guarded writer (``native/src/output.rs``)."""

    def __new__(
        cls,
        path: str | PathLike[str],
        *,
        overwrite: bool = False,
        staging: str | PathLike[str] | None = None,
    ) -> OutputFile: ...
    @property
    def path(self) -> Path: ...
    def fileno(self) -> int: ...
    def commit(self) -> Path: ...
    def abort(self) -> None: ...

def check_output(path: str | PathLike[str], *, overwrite: bool = False) -> Path: ...
def output_write_error(path: str | PathLike[str], errno: int, *, existed: bool) -> Exception: ...
def sim_presets() -> list[dict[str, Any]]: ...
def sim_spec_parse(spec: str) -> tuple[str, list[tuple[str, str]]] | None: ...
def sim_spec_build(preset: str, keys: Sequence[tuple[str, str]]) -> str: ...
def pelt_search(
    signal: Sequence[float] | object,
    pen: float,
    min_size: int,
    cost: str = "l2",
    jump: int = 1,
    ends: Sequence[int] | None = None,
    two_pass: bool = False,
) -> list[int]: ...
def pelt_linear_search(
    x: Sequence[float] | object, y: Sequence[float] | object, pen: float, min_size: int
) -> list[int]: ...
def linear_split_costs(
    x: Sequence[float] | object, y: Sequence[float] | object, lo: int, hi: int
) -> list[float]: ...
@final
class LogColumn:
    """A column of float64 or int64 numbers owned by Rust, read-only; ``numpy.frombuffer``
    views it in place (buffer protocol)."""

    def __len__(self) -> int: ...

def read_fio_log(
    path: str | PathLike[str], time_back_ms: int
) -> tuple[int, LogColumn, LogColumn, list[int | LogColumn], list[int], list[int], bool] | None: ...
def fio_interval_latency(
    logs: Sequence[tuple[object, object, object | None]], d: int, edges: object, scale: float
) -> tuple[LogColumn, LogColumn, LogColumn, LogColumn, LogColumn] | None: ...
def _panic_for_tests() -> None: ...
def _refuse_queued_trims_for_tests(on: bool) -> None: ...
def _force_named_temporaries_for_tests(on: bool) -> None: ...
def purge_device(
    device: str, *, destroy: list[str], method: str, plan: bool, verify_samples: int
) -> dict[str, Any]: ...
def _purge_with_fakes(
    device: str,
    *,
    destroy: list[str],
    method: str,
    plan: bool,
    verify_samples: int,
    sys_root: str | PathLike[str],
    nvme_spec_json: str | None = None,
    busy: dict[str, str] = ...,
    media_path: str | PathLike[str] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...
def purge_methods() -> list[str]: ...
def device_record(
    name: str, *, root: str | PathLike[str] = ..., redact_serial: bool | None = None
) -> dict[str, Any]: ...
def platform_record(*, root: str | PathLike[str] = ...) -> dict[str, Any]: ...
