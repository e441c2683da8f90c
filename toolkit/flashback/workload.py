"""The workload: fio's vocabulary, validated by the native core."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, cast

from flashback import _native
from flashback.errors import ParameterError

#: fio's I/O patterns flashback runs (native/src/workload/mod.rs reads them)
Rw = Literal["read", "write", "randread", "randwrite", "randrw", "trim", "randtrim"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Workload:
    """What to run, in fio's words.

    Sizes accept ``4k``, ``1m``, ``10g``, ``1.8t`` (binary, as fio; a plain integer is bytes),
    durations ``30s``, ``5m``, ``2h``. ``None`` leaves a field at its default: ``rw="write"``,
    ``bs="4k"``, ``iodepth=1``, ``jobs=1``, ``offset=0``, ``size`` = to the end of the target,
    ``data="random"``, ``random="permutation"``, ``direct=True``, ``engine="auto"``,
    ``interval="1s"``, ``cpus_allowed`` = any CPU. With no ``time``, ``written`` or ``loops`` limit a workload makes one pass.
    ``written`` follows fio's ``io_size`` rule on files, devices and sim drives alike: I/O is
    issued while fewer bytes were issued, each whole, so ``written=10240, bs="4k"`` writes
    12,288 bytes (trims count instead for ``rw="trim"|"randtrim"``).

    Raises:
        ParameterError: a field is malformed or out of range (the message names it).
    """

    rw: Rw = "write"
    bs: int | str | None = None
    iodepth: int | None = None
    jobs: int | None = None
    offset: int | str | None = None
    size: int | str | None = None
    time: float | str | None = None
    written: int | str | None = None
    loops: int | None = None
    data: str | None = None
    random: str | None = None
    rwmix_read: int | None = None
    direct: bool | None = None
    engine: str | None = None
    interval: float | str | None = None
    seed: int | None = None
    #: the CPUs a file's or device's jobs run on, fio's list syntax (``"0"``, ``"0,5,8-15"``);
    #: ``None``: wherever the scheduler puts them. ``sim:`` targets ignore it (as ``engine``
    #: and ``direct``)
    cpus_allowed: str | int | None = None
    #: ``"shared"`` (default: every job on every CPU of the list) or ``"split"`` (job *j* on
    #: the list's CPU *j* mod its length), as fio's ``cpus_allowed_policy``
    cpus_allowed_policy: str | None = None
    #: run this long first, unrecorded (fio's ``ramp_time``): the target is written, the
    #: capture starts after it, with ``host_written_bytes`` counting the ramp's bytes
    ramp: float | str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "_resolved", _native.parse_workload(self.fields()))
        ramp_s = None
        if self.ramp is not None:
            try:
                ramp_s = _native.parse_workload({"time": str(self.ramp)})["time_s"]
            except ParameterError as e:
                raise ParameterError(f"ramp={self.ramp!r} is not a duration: {e}") from None
        object.__setattr__(self, "_ramp_s", ramp_s)

    @property
    def ramp_s(self) -> float | None:
        """The ramp (``ramp``) in seconds, or None."""
        return self._ramp_s  # type: ignore[attr-defined]

    def fields(self) -> dict[str, str]:
        """The fields that are set, as the strings the native core parses (``ramp`` is run by
        :meth:`flashback.targets.Target.run` and is not among them).
        """
        out = {}
        for f in dataclasses.fields(self):
            name = f.name
            v = getattr(self, name)
            if v is None or name == "ramp":
                continue
            if isinstance(v, bool):
                v = "true" if v else "false"
            out[name] = str(v)
        return out

    @property
    def resolved(self) -> dict[str, Any]:
        """Every field with defaults applied; sizes in bytes, ``time_s`` and ``interval_s`` in s."""
        return dict(self._resolved)  # type: ignore[attr-defined]

    @classmethod
    def from_fio(cls, path: str, *, job: str | None = None) -> Workload:
        """The workload of a fio job file (``[global]`` + the job section; ``job=`` picks one
        of several). Options flashback does not have are refused by name.

        Raises:
            ParameterError: an unsupported option or value, several jobs and no ``job=``.
            ImportFormatError: a malformed job file.
        """
        from flashback.fio.jobfile import read_job_file

        fields, _filename = read_job_file(path, job=job, notes=True)
        # option -> its text: every field takes the text the native core parses
        return cls(**cast(dict[str, Any], fields))

    def replace(self, **changes: Any) -> Workload:
        """A copy with some fields changed (validated again).

        Raises:
            ParameterError: a name in ``changes`` is not a workload field, or a changed field
                is malformed or out of range (the message names it).
        """
        names = [f.name for f in dataclasses.fields(self)]
        unknown = [k for k in changes if k not in names]
        if unknown:
            raise ParameterError(
                f"a workload has no field {unknown[0]!r}; change one of: {', '.join(names)}"
            )
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """A one-line fio-like description, e.g. ``randwrite bs=4k iodepth=32 time=60s``."""
        parts = [self.rw] + [f"{k}={v}" for k, v in self.fields().items() if k != "rw"]
        if self.ramp is not None:
            parts.append(f"ramp={self.ramp}")
        return " ".join(parts)
