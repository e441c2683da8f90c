"""Datasets of many captures: scan them as one lazy frame, write them hive-partitioned, and
run an analysis per group (drive, host, test...)."""

from flashback.dataset.grouped import Grouped, per_group
from flashback.dataset.identity import IDENTITY_SCHEMA, capture_id, identity
from flashback.dataset.scan import capture_paths, scan_captures
from flashback.dataset.write import hive_schema, to_dataset

__all__ = [
    "IDENTITY_SCHEMA",
    "Grouped",
    "per_group",
    "capture_id",
    "capture_paths",
    "hive_schema",
    "identity",
    "scan_captures",
    "to_dataset",
]
