"""The review procedures; importing this package registers them."""

from flashback.replay.procedures import (  # noqa: F401
    anand2009,
    anandtech_consistency,
    anandtech_trim,
    behardware,
    puget,
    snia,
    xbit,
)
