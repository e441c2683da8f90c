"""The ``status`` values of a compare's rows, one home for them: :mod:`.compare` sets them,
:mod:`.headline` and the figures read them (a module of their own, so the headline rows
:mod:`.compare` adds do not import it back)."""

from __future__ import annotations

#: A row whose replayed spread over seeds straddles the tolerance (never counted as within).
BORDERLINE = "borderline"
#: ``status`` values of rows that compare a published number with a replayed one.
COMPARED = ("within tolerance", "outside tolerance", "no tolerance", BORDERLINE)
UNMODELLED = "documented, not modelled"
SETTING = "setting"
#: A published row of a simulated replay run below its protocol's ``min_held_scale``: its
#: value is shown, but no within/outside, and the tally leaves it out.
BELOW_HELD = "below held scale"
#: A row replayed with another value of a parameter the review does not state.
SENSITIVITY = "sensitivity"

__all__ = ["BELOW_HELD", "BORDERLINE", "COMPARED", "SENSITIVITY", "SETTING", "UNMODELLED"]
