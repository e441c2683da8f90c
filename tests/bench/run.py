"""``make bench``: every benchmark, one line per figure (subsystems add themselves here)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sim  # noqa: E402


def main() -> None:
    sim.run(sys.argv[1:] or None)


if __name__ == "__main__":
    main()
