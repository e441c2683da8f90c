"""``make bench``: every benchmark, one after the other. Results also go to out/bench.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine  # noqa: E402
import engine_instr  # noqa: E402
import engine_ring  # noqa: E402
import fio_import  # noqa: E402
import live  # noqa: E402
import memory  # noqa: E402
import pelt  # noqa: E402
import replaydir  # noqa: E402
import sim  # noqa: E402
import stream  # noqa: E402
import startup  # noqa: E402
import sweep  # noqa: E402


def main() -> None:
    results = {"engine": engine.main()}
    results["engine_ring"] = engine_ring.main()
    results["engine_instr"] = engine_instr.main()
    sim.run(sys.argv[1:] or None)
    print("\n== change points: native PELT vs ruptures' Pelt (same penalty, jump 1)")
    pelt.main(["--ruptures-n", "5000"])
    results["fio_import"] = fio_import.main([])
    results["sweep"] = sweep.main(["--scale", "1/32"])
    results["memory"] = memory.main()
    results["stream"] = stream.main([])
    results["startup"] = startup.main()
    results["live"] = live.main()
    results["replaydir"] = replaydir.main([])
    out = Path("out")
    out.mkdir(exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=2))
    print(f"results written to {out / 'bench.json'}")


if __name__ == "__main__":
    main()
