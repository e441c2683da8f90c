"""fio import: logs, histogram logs, JSON/json+ (and status-interval streams) and terse output
of any fio version → a capture; fio job files → workloads."""

from flashback.fio.read import read_fio

__all__ = ["read_fio"]
