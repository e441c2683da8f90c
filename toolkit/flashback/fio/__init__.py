"""fio import: bw/iops/lat/clat/slat logs, clat histogram logs and JSON output → a capture."""

from flashback.fio.read import read_fio

__all__ = ["read_fio"]
