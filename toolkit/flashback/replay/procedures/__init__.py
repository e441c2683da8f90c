"""The review procedures; importing this package registers them (in the seeds' order)."""

from flashback.replay.procedures import puget  # noqa: F401  isort: skip
from flashback.replay.procedures import behardware  # noqa: F401  isort: skip
from flashback.replay.procedures import xbit  # noqa: F401  isort: skip
from flashback.replay.procedures import anandtech_consistency  # noqa: F401  isort: skip
from flashback.replay.procedures import anandtech_trim  # noqa: F401  isort: skip
from flashback.replay.procedures import anand2009  # noqa: F401  isort: skip
from flashback.replay.procedures import snia  # noqa: F401  isort: skip
