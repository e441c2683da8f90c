"""The metadata every capture file carries — an Arrow stream's schema, a Parquet footer, a
dataset's file — under one key, as strict JSON. Below :mod:`flashback.capture` and
:mod:`flashback.dataset.write`, which both write it."""

from __future__ import annotations

import json
import math
from typing import Any

#: the schema/footer metadata key holding a capture's metadata JSON
META_KEY = "flashback.meta"


def _json_safe(v: Any) -> Any:
    """``v`` with every non-finite float (NaN, ±inf) as None: strict JSON, which the
    metadata check of every reader requires."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def meta_to_json(meta: dict[str, Any]) -> str:
    """A capture's metadata as strict JSON (non-finite floats as null), as every file
    flashback writes stores it and every reader checks it."""
    return json.dumps(_json_safe(meta), allow_nan=False)
